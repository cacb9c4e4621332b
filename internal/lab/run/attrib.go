package run

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/locklab/locklab/internal/lab/attrib"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
)

// attributes says whether the run's server is profiled for CPU attribution
// (-attribute): every run of "on", the sampled blocks of "blocks=K".
func attributes(cfg Config, spec plan.Spec) bool {
	return plan.AttributedBlock(spec.Factors.Get(plan.Attribute), spec.Rep, cfg.Reps)
}

// checkAttribute refuses what -attribute cannot do with the other flags.
func checkAttribute(cfg Config) error {
	if err := plan.CheckAttribute(cfg.Factors.Values(plan.Attribute), cfg.Reps); err != nil {
		return err
	}
	if cfg.Profile != "" && cfg.Factors.Attributes() {
		return errors.New("-profile and -attribute both take the server's CPU profile, and a Go program serves one at a time: use one of them")
	}
	return nil
}

// profileSeconds is how long an attributed run's profile runs: the measured
// window rounded up to whole seconds (the /debug/pprof handler takes whole
// seconds). It starts just before the driver and ends after it, so it
// covers every measured call; the few idle milliseconds after them add no
// CPU. The categories are shares of it (record.Run.CategoryUs), so its
// length scales nothing.
func profileSeconds(window time.Duration) int {
	return max(1, int(math.Ceil(window.Seconds())))
}

// attributionWait is what attribution adds to a run's time: the profile's
// tail past the driver's window.
func attributionWait(cfg Config, spec plan.Spec) time.Duration {
	if !attributes(cfg, spec) {
		return 0
	}
	return time.Duration(profileSeconds(cfg.Duration))*time.Second - cfg.Duration
}

// attribution is one run's CPU profile being taken, and its server's
// system calls counted, over the measured window.
type attribution struct {
	pid    int
	file   string
	before attrib.IO
	ioErr  error
	done   chan error // the fetch's result
}

// startAttribution reads the server's system call counts and starts the
// CPU profile; finish ends both. The profile is kept beside the run's
// record as <id>.cpu.pprof.
func startAttribution(ctx context.Context, metricsAddr string, pid int, window time.Duration, prefix string) *attribution {
	a := &attribution{pid: pid, file: prefix + ".cpu.pprof", done: make(chan error, 1)}
	a.before, a.ioErr = attrib.ReadIO(pid)
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", metricsAddr, profileSeconds(window))
	go func() { a.done <- fetchTo(ctx, url, a.file) }() // joined by wait
	return a
}

// wait waits for the profile; it may be called more than once.
func (a *attribution) wait() error {
	if err, ok := <-a.done; ok {
		close(a.done)
		a.ioErr = errors.Join(a.ioErr, err)
	}
	return a.ioErr
}

// finish waits for the profile, reads the system call counts again, and
// folds the profile: calls are the server's requests between the two
// readings.
func (a *attribution) finish(calls uint64) (*record.Attribution, error) {
	if err := a.wait(); err != nil {
		return nil, err
	}
	after, err := attrib.ReadIO(a.pid)
	if err != nil {
		return nil, err
	}
	b, err := attrib.FoldFile(os.DirFS(filepath.Dir(a.file)), filepath.Base(a.file))
	if err != nil {
		return nil, err
	}
	return record.NewAttribution(b, filepath.Base(a.file), a.before, after, calls)
}
