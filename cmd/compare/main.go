// Command compare is locklab's main job: it runs every workload × driver ×
// factor combination × server mode × load level × repetition against a fresh
// server, with the server and the load driver on disjoint CPUs, checks the
// invariants after each run, classes each run (server-bound, load-bound,
// neither), and writes a report (Markdown, self-contained HTML, and the raw
// JSON of every run) into a results directory: medians with 95% confidence
// intervals, and paired verdicts — each repetition a block in which every mode
// ran once, in a seeded random order; every design compared with a baseline
// and with noop on per-block ratios, with a signed-rank test and Holm's
// adjustment over the whole report.
//
//	go run ./cmd/compare                            # the defaults, under 8 minutes on 2 CPUs
//	go run ./cmd/compare -driver k6 -ladder -reps 3 # the seed's k6 VU ladder
//	go run ./cmd/compare -attribute off,on          # where each design's server CPU went, and what finding out costs
//	go run ./cmd/compare -rerender DIR              # the report again from DIR's raw runs (runs/ or runs.tar.gz)
//	go run ./cmd/compare -pack DIR                  # a finished study's runs/ into one runs.tar.gz, checked first
//	go run ./cmd/compare -runtime go1.26.8,go1.27.3 # every design on two Go releases, in the same blocks
//
// `make compare` builds the server and the Go driver first, then runs it.
// The work is done by internal/lab: plan (factors, runs), run (processes,
// drivers), record (the files) and report (metrics, tables, charts), with a
// package per feature of the report (capacity, cores, why, latencyledger)
// that render puts together; docs/runner.md says how they fit.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/locklab/locklab/internal/lab/capacity/runner"
	"github.com/locklab/locklab/internal/lab/pack"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/render"
	"github.com/locklab/locklab/internal/lab/repro"
	"github.com/locklab/locklab/internal/lab/run"
	"github.com/locklab/locklab/internal/lab/study"
)

func main() {
	cmd, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(2)
	}
	if err := cmd.preflight(); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(2)
	}
	cmd.cfg.Command = commandLine(os.Args)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cmd.run(ctx, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

// command is what the flags ask for: a comparison, or, running nothing, a
// report rebuilt, two results directories compared or one packed.
type command struct {
	cfg      run.Config
	capacity *runner.Capacity // the capacity engine, when a study's plan asks for it
	study    *studyRun        // -study NAME: a row of the catalogue (study.go)
	rerender string           // a results directory whose report is rebuilt from its runs/ files
	diff     string           // "OLD,NEW": two results directories whose medians are compared
	pack     string           // a finished results directory whose runs/ is packed into runs.tar.gz
}

func (c command) run(ctx context.Context, out, warn io.Writer) error {
	switch {
	case c.rerender != "" && run.IsDuetDir(c.rerender):
		return run.WriteDuetReport(c.rerender, out)
	case c.rerender != "":
		return render.Rerender(c.rerender, out)
	case c.diff != "":
		return repro.Diff(c.diff, out)
	case c.pack != "" && run.IsDuetDir(c.pack):
		return run.PackDuet(c.pack, out)
	case c.pack != "":
		return pack.Pack(c.pack, out)
	case c.study != nil:
		return c.study.run(ctx, out, warn)
	case c.capacity != nil:
		return runner.RunCapacity(ctx, c.cfg, *c.capacity, out, warn)
	}
	return run.Compare(ctx, c.cfg, out, warn)
}

func parseFlags(args []string, stderr io.Writer) (command, error) {
	return parseFlagsAs(args, stderr, "")
}

// parseFlagsAs parses args for engine: "" the command line (-study NAME
// picks a row of the catalogue), or the engine of a study's plan.
func parseFlagsAs(args []string, stderr io.Writer, engine study.Engine) (command, error) {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		c       command
		o       = run.Options{Factors: map[string]string{}}
		factors = map[string]*string{}
	)
	fs.StringVar(&o.Workloads, "workloads", run.DefaultWorkloads, "comma-separated workloads: "+strings.Join(plan.WorkloadNames(), ", ")+" (bank = bank-A)")
	fs.StringVar(&o.Modes, "modes", run.DefaultModes, "comma-separated server modes (`bin/locklab -list-modes`), or all (every mode the server lists); noop shows the harness ceiling")
	fs.StringVar(&o.Drivers, "driver", run.DefaultDrivers, "comma-separated load drivers, run on the same plan, interleaved: "+strings.Join(run.DriverNames(), ", ")+
		" (h2load drives the counter only)")
	fs.StringVar(&o.VUs, "vus", run.DefaultLevels, "closed model: comma-separated levels of concurrent callers (VUs)")
	fs.StringVar(&o.H2loadVUs, "h2load-vus", run.DefaultH2Levels, "closed model: h2load's levels of concurrent calls")
	fs.BoolVar(&o.Ladder, "ladder", false, "closed model: the seed's full ladder "+run.SeedLadder+" (overrides -vus and -h2load-vus)")
	fs.StringVar(&o.Model, "model", "closed", "load model: closed (constant callers) or open (constant arrival rate)")
	fs.StringVar(&o.Rates, "rates", "", "open model: comma-separated arrival rates in calls/s")
	fs.IntVar(&o.MaxVUs, "max-vus", run.DefaultMaxVUs, "open model: the most callers a driver may use to keep each rate")
	fs.IntVar(&o.Conns, "conns", run.DefaultConns, "connections the Go driver's and h2load's callers share (0: one per caller, as a k6 VU; k6 always has one per VU)")
	fs.DurationVar(&o.Duration, "duration", run.DefaultDuration, "measured period of each run")
	fs.DurationVar(&o.Warmup, "warmup", run.DefaultWarmup, "uncounted warm-up before each measured run (0 to skip; h2load needs one; k6's lasts a second at least, its shortest scenario)")
	fs.IntVar(&o.Reps, "reps", run.DefaultReps, "repetitions of every combination, each a block in which every mode runs once (the runner warns when too few for the report's paired tests)")
	fs.IntVar(&o.Seed, "seed", 0, "seed of each block's order of the modes (default: drawn from the clock; meta.json records it, and the same seed lays out the same plan)")
	fs.StringVar(&o.Baseline, "baseline", run.DefaultBaseline, "the store-backed design every other design is compared with (it must be among -modes); every design is also compared with noop when noop runs")
	o.MaxForeign = run.DefaultMaxForeign
	fs.Var(run.MaxForeignFlag(&o.MaxForeign), "max-foreign", "validity gate: a run whose CPUs something other than the lab took more than this share of "+
		"(other processes, interrupts, steal) spoils its block, which runs again (-reruns); the analysis uses clean blocks only")
	fs.IntVar(&o.Reruns, "reruns", run.DefaultReruns, "validity gate: how many more times a spoiled block runs before it is dropped")
	fs.StringVar(&o.Margin, "margin", run.DefaultMargin, "equivalence margin: \"no difference\" is said only of an effect shown (TOST) to lie within ±this")
	fs.StringVar(&o.Precision, "precision", "0", "add blocks until every primary interval's half-width is within this percentage (0: off): isolated in one look after -reps blocks, side by side looking again after each addition; bounded by -max-blocks and -time-budget")
	fs.IntVar(&o.MaxBlocks, "max-blocks", 0, "with -precision: the most blocks in all (0: three times -reps; side by side, each group's rounds, six times)")
	fs.DurationVar(&o.TimeBudget, "time-budget", 0, "with -precision: add no block that would end the comparison later than this after its start (0: no bound)")
	fs.BoolVar(&o.AA, "aa", true, "A/A control: run the baseline twice in every block, as two servers, and report their difference as the machine's noise floor")
	for _, f := range plan.Factors { // a factor's flag is its row's
		factors[f.Name] = fs.String(f.Name, f.Default, "factor: "+f.Usage)
	}
	duetDefaults := duetFlags(fs, &o)
	capOpts := runner.CapacityFlags(fs)
	fs.BoolVar(&o.Pin, "pin", true, "pin the server and the driver to disjoint CPU sets (needs 2 CPUs)")
	fs.StringVar(&o.DriverCPUs, "driver-cpus", "", "CPUs of the driver in taskset's syntax, e.g. 1 or 4-7,12 (default: the CPUs each run's server does not have)")
	fs.BoolVar(&o.ShareCPUs, "share-cpus", false, "where a run's -server-cpus leave the driver no CPU of its own, run the driver on the server's CPUs "+
		"(recorded, and flagged in the report: throughput is then shared-CPU throughput)")
	fs.StringVar(&o.Out, "out", "", "results directory (default results/<timestamp>)")
	fs.StringVar(&o.K6, "k6", "bin/k6", "k6 binary (make k6 builds the pinned one)")
	fs.StringVar(&o.Load, "load", "bin/load", "the Go driver binary (make build builds it)")
	fs.StringVar(&o.H2load, "h2load", "h2load", "h2load binary (make deb-h2load installs Debian's nghttp2-client)")
	fs.StringVar(&o.Server, "server", "bin/locklab", "locklab server binary (make build)")
	fs.StringVar(&o.Scripts, "scripts", "k6", "folder of the k6 scripts")
	fs.StringVar(&o.Profile, "profile", "", "RUN: for this run (its number or id), save a CPU profile and a runtime trace of the server beside its raw JSON")
	fs.StringVar(&c.rerender, "rerender", "", "rebuild the report of an existing results directory from its runs/ (or its runs.tar.gz) and meta.json, running nothing")
	fs.StringVar(&c.pack, "pack", "", "pack a finished results directory's runs/ (and logs.tar.gz) into runs.tar.gz, once its report renders the same from it; then remove them, running nothing")
	fs.StringVar(&c.diff, "diff", "", "OLD,NEW: compare the medians of two results directories level by level (is the comparison reproducible?), running nothing")
	if err := fs.Parse(args); err != nil {
		return command{}, err
	}
	if fs.NArg() > 0 {
		return command{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if n := len(slices.DeleteFunc([]string{c.rerender, c.diff, c.pack}, func(s string) bool { return s == "" })); n > 1 {
		return command{}, errors.New("-rerender, -diff and -pack each run alone: give one")
	}
	for name, v := range factors {
		o.Factors[name] = *v
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if err := duetDefaults(given); err != nil {
		return command{}, err
	}
	if !given["seed"] {
		o.Seed = int(time.Now().UnixNano() & math.MaxInt32) // short enough to type back as -seed
	}
	var err error
	switch {
	case given["study"]:
		c.study, err = newStudyRun(capOpts.Study, args, engine)
	case engine == study.Capacity:
		var cc runner.Capacity
		c.cfg, cc, err = runner.NewCapacity(o, *capOpts, func(name string) bool { return given[name] }, runtime.NumCPU())
		c.capacity = &cc
	default:
		c.cfg, err = run.NewConfig(o, runtime.NumCPU())
	}
	return c, err
}

// commandLine is how the report names the command that produced it.
func commandLine(args []string) string {
	if os.Getenv("LOCKLAB_COMMAND") != "" { // set by `make compare`
		return os.Getenv("LOCKLAB_COMMAND")
	}
	name := filepath.Base(args[0])
	if strings.Contains(args[0], "go-build") {
		name = "go run ./cmd/compare"
	}
	return strings.Join(append([]string{name}, args[1:]...), " ")
}
