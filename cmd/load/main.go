// Command load drives a locklab server with one of the workloads of
// load/workloads.json (the ones the k6 scripts run) and writes a
// locklab.load-summary/v1 document. docs/load.md explains the models.
//
//	go run ./cmd/load -addr 127.0.0.1:50055 -workload bank -scenario B -callers 100 -duration 10s -out bank.json
//	go run ./cmd/load -workload counter -model open -rate 20000 -callers 200
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/locklab/locklab/load"
)

// errUsage marks errors in the command line: exit status 2, as flag does.
var errUsage = errors.New("usage")

// errUnexpected: the run happened but some answers were wrong. Exit 1, after
// the summary is written, as k6 fails a run whose thresholds fail.
var errUnexpected = errors.New("unexpected answers")

func main() {
	setGC(os.LookupEnv)
	err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// setGC sets the collector's target to load.GCPercent, unless the
// environment (lookup) sets GOGC.
func setGC(lookup func(string) (string, bool)) {
	if _, ok := lookup("GOGC"); !ok {
		debug.SetGCPercent(load.GCPercent)
	}
}

// run parses the flags, drives the server and writes the summary to -out
// (stdout without it); a one-line result goes to stderr. Interrupted
// (SIGINT, SIGTERM), it stops early, still writes the summary of what ran,
// and exits 1. With -window-stdin the window's marks are lines on stdin.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, out, marks, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	ctx, stop := interrupts(ctx)
	defer stop()
	if marks {
		ctx, cfg.Marks = readMarks(ctx, stdin)
	}
	sum, err := load.Run(ctx, cfg)
	if sum == nil {
		return err
	}
	// From here err is nil or load.ErrInterrupted (SIGINT, SIGTERM): the
	// summary of what ran is written either way, as k6 does.
	interrupted := err
	if out == "" {
		if err := sum.Write(stdout); err != nil {
			return err
		}
	} else if err := sum.WriteFile(out); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "load: %s %s, %d callers: %d calls in %.1fs, %.0f calls/s, p50 %.3f ms, p99 %.3f ms, %d refused as expected, %d unexpected, %d dropped, %d late\n",
		sum.Workload, sum.Model, sum.Callers, sum.Calls, sum.DurationS, sum.CallsPerS,
		sum.LatencyMs.P50, sum.LatencyMs.P99, sum.ExpectedRefusals, sum.UnexpectedErrors, sum.Dropped, sum.Late)
	if interrupted != nil {
		return interrupted
	}
	if sum.UnexpectedErrors > 0 {
		return fmt.Errorf("%w: %d calls (by code %v)", errUnexpected, sum.UnexpectedErrors, sum.ByCode)
	}
	return nil
}

// interrupts interrupts the run on SIGINT or SIGTERM: the returned
// context ends.
func interrupts(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case s := <-sig:
			cancel(fmt.Errorf("%v signal received", s))
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(done)
		cancel(nil)
	}
}

// errMarksEnded ends a run whose marks' input (-window-stdin) ended.
var errMarksEnded = errors.New("the marks' input (stdin) ended")

// readMarks marks the window from lines read on r, from before the run
// connects: a line's arrival is a mark, the first the window's start and
// the second its end (later lines are ignored). The end of r ends the run
// as an interruption would: after both marks the marked window is
// summarised and the run succeeds (the runner ends its drivers so, once it
// has read the window), before them the run fails unmarked (whoever marked
// it is gone). A pipe keeps what was written until it is read, so no mark
// is lost, however late the driver starts reading; one goroutine takes
// the marks and the end in the order they came, so the second mark reaches
// the run before the end does. The goroutine ends with r.
func readMarks(parent context.Context, r io.Reader) (context.Context, <-chan time.Time) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan time.Time, 2)
	go func() {
		defer cancel(errMarksEnded)
		sc := bufio.NewScanner(r)
		for n := 0; sc.Scan(); n++ {
			if n < 2 {
				ch <- time.Now()
			}
		}
	}()
	return ctx, ch
}

// parseFlags reads the command line into a validated load.Config and the
// output path.
func parseFlags(args []string, stderr io.Writer) (cfg load.Config, out string, marks bool, err error) {
	cfg = load.DefaultConfig()
	d := load.Workloads()
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "server address")
	fs.StringVar(&cfg.Workload, "workload", cfg.Workload, "workload: "+strings.Join(load.WorkloadNames(), ", "))
	fs.StringVar(&cfg.Scenario, "scenario", d.Bank.Defaults.Scenario, "bank scenario: "+strings.Join(d.ScenarioNames(), ", ")+" (a refused transfer is expected in all but A)")
	fs.StringVar(&cfg.Mix, "mix", "", "bank mix, case:weight,… (default "+d.Bank.Mix+")")
	fs.StringVar(&cfg.Model, "model", cfg.Model, "closed (callers back to back) or open (fixed -rate, each call timed from when it was due)")
	fs.IntVar(&cfg.Callers, "callers", cfg.Callers, "concurrent callers (closed); most calls in flight (open)")
	fs.IntVar(&cfg.Conns, "conns", 0, "gRPC connections the callers share (0: one per caller)")
	fs.Float64Var(&cfg.Rate, "rate", cfg.Rate, "open model: calls started per second")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "measured window")
	fs.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "load before the measured window, not counted")
	fs.Float64Var(&cfg.Skew, "skew", 0, "Zipf θ of account and key choice, 0 <= θ < 1 (0 uniform, 0.99 hot)")
	fs.Float64Var(&cfg.ReadRatio, "read-ratio", -1, "share of reads: bank GetBalance vs transfer (replaces the mix), kv Get vs Put; -1: the workload's default")
	fs.IntVar(&cfg.ValueSize, "value-size", d.KV.Defaults.ValueSize, "kv value bytes")
	fs.IntVar(&cfg.Accounts, "accounts", d.Bank.Defaults.Accounts, "bank accounts, with -reset")
	fs.BoolVar(&cfg.Reset, "reset", false, "AdminService/Reset to -scenario and -accounts first")
	fs.DurationVar(&cfg.Timeout, "timeout", load.DefaultTimeout, "per call")
	fs.DurationVar(&cfg.Timeline, "timeline", 0, "cut the window into intervals this long and add each one's calls, errors and p50/p99 to the summary (0: none)")
	fs.StringVar(&out, "out", "", "write the locklab.load-summary/v1 JSON here (default stdout)")
	fs.BoolVar(&marks, "window-stdin", false, "closed model: the measured window runs from the first line read on stdin to the second, stdin's end stops the run, and -warmup plus -duration bound the whole run, which must take in both marks")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, "", false, err
		}
		return cfg, "", false, errUsage // flag has printed the error and the usage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "load: unexpected arguments %q\n", fs.Args())
		return cfg, "", false, errUsage
	}
	if marks {
		cfg.Marks = make(chan time.Time) // validated with a window to mark; run sets the real one
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(stderr, err)
		return cfg, "", false, errUsage
	}
	return cfg, out, marks, nil
}
