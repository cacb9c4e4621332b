package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/locklab/locklab/internal/lab/ledger"
	"github.com/locklab/locklab/internal/lab/plan"
)

// ledgers says whether the run's server is traced for the latency ledger
// (-ledger on).
func ledgers(spec plan.Spec) bool { return spec.Factors.Get(plan.Ledger) == plan.LedgerOn }

// ledgerRead is what a traced run adds to its time in the plan's estimate:
// the trace's reading and folding after the driver, while the server still
// runs. Measured on a 2-CPU machine: 1.5 s of the counter at 100 callers
// under tracing, some 5,000 calls, read in 0.17 s — about 30,000 calls a
// second; two seconds allow for a run of 60,000.
const ledgerRead = 2 * time.Second

// ledgerWait is what the ledger adds to a run's time.
func ledgerWait(spec plan.Spec) time.Duration {
	if !ledgers(spec) {
		return 0
	}
	return ledgerRead
}

// checkLedger refuses what -ledger cannot do with the other flags.
func checkLedger(cfg Config) error {
	if cfg.Profile != "" && cfg.Factors.Ledgers() {
		return errors.New("-profile and -ledger both take the server's execution trace, and a Go program serves one at a time: use one of them")
	}
	return nil
}

// tracing is one run's execution trace being taken over the measured
// window, into the run's scratch directory: a trace of a busy server is
// tens of megabytes a second, so the run keeps its ledger, not the trace.
type tracing struct {
	file string
	done chan error // the fetch's result
}

// startLedger starts the server's execution trace for window: it starts
// just before the driver and ends with its window (/debug/pprof/trace
// takes fractions of a second), so it holds every measured call; a call
// it cuts at either end is counted apart (ledger.Ledger.Partial).
func startLedger(ctx context.Context, metricsAddr string, window time.Duration, scratch string) *tracing {
	tr := &tracing{file: filepath.Join(scratch, "ledger.trace"), done: make(chan error, 1)}
	url := fmt.Sprintf("http://%s/debug/pprof/trace?seconds=%g", metricsAddr, window.Seconds())
	go func() { tr.done <- fetchTo(ctx, url, tr.file) }() // joined by wait
	return tr
}

// wait waits for the trace; it may be called more than once.
func (tr *tracing) wait() error {
	if err, ok := <-tr.done; ok {
		close(tr.done)
		return err
	}
	return nil
}

// finish waits for the trace and reads its ledger.
func (tr *tracing) finish() (*ledger.Summary, error) {
	if err := tr.wait(); err != nil {
		return nil, err
	}
	f, err := os.Open(tr.file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l, err := ledger.Read(f)
	if err != nil {
		return nil, err
	}
	s, err := l.Summarize()
	if err != nil {
		return nil, err
	}
	return &s, nil
}
