package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is one comparison: every workload × driver × factor combination ×
// mode × load level × repetition. Its zero value is not usable; parseFlags
// fills the documented defaults.
type Config struct {
	Workloads []Workload
	Modes     []string
	Drivers   []string // names from the drivers table, in the order given
	// Model is "closed" (constant callers, levels are caller counts) or
	// "open" (constant arrival rate, levels are calls per second).
	Model string
	// Levels are the load levels of every driver but h2load; H2loadLevels
	// are h2load's (it is the counter's ceiling driver, and its runs cost the
	// time budget as much as anyone's).
	Levels       []int
	H2loadLevels []int
	MaxVUs       int // open model: callers a driver may use to keep the rate
	Conns        int // connections per run; 0: the driver's default (one per caller)
	Duration     time.Duration
	Warmup       time.Duration
	Reps         int
	Factors      FactorSpace
	// ServerCPUs and DriverCPUs are the disjoint CPU sets the two processes
	// are pinned to; both nil when the machine has one CPU or -pin=false.
	ServerCPUs []int
	DriverCPUs []int
	Out        string // results directory; a timestamped one under results/ by default
	K6         string // k6 binary
	Load       string // the Go driver binary (cmd/load)
	H2load     string // h2load binary
	Server     string // locklab server binary
	Scripts    string // folder of the k6 scripts
	Command    string // the command line, for the report
	// Profile names one run (its index or id) whose server is profiled: a
	// CPU profile and a runtime trace over the measured window.
	Profile string
	// Rerender names a results directory whose report is rebuilt from its
	// runs/ files, running nothing.
	Rerender string
	// Diff names two results directories whose medians are compared,
	// "OLD,NEW"; nothing is run.
	Diff string
}

// Workload is a workload as the runner names it, and how each driver selects
// it.
type Workload struct {
	Name     string // as given on the command line: counter, bank-A, kv …
	Kind     string // the server's and the Go driver's workload: counter, bank, kv
	Script   string // k6 script, a file name under Config.Scripts
	Scenario string // bank: A, B or C
}

var workloads = map[string]Workload{
	"counter": {Name: "counter", Kind: "counter", Script: "counter.js"},
	"bank-A":  {Name: "bank-A", Kind: "bank", Script: "bank.js", Scenario: "A"},
	"bank-B":  {Name: "bank-B", Kind: "bank", Script: "bank.js", Scenario: "B"},
	"bank-C":  {Name: "bank-C", Kind: "bank", Script: "bank.js", Scenario: "C"},
	"kv":      {Name: "kv", Kind: "kv", Script: "kv.js"},
}

// workloadNames lists the accepted -workloads values in a stable order.
func workloadNames() []string {
	names := make([]string, 0, len(workloads))
	for n := range workloads {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// seedLadder is the VU ladder of the inputQ-vs-mutex seed.
const seedLadder = "10,100,200,300,500,1000"

// Defaults of `make compare`, chosen to finish within 8 minutes on a 2-CPU
// machine: 2 workloads × 3 levels × 3 modes × 5 reps with the Go driver, and
// 3 modes × 5 reps of h2load on the counter at 100 calls, each run a 1 s
// warm-up and a 2 s measurement: 105 runs, about 5½ to 7 minutes with
// starting, connecting (two processes of a thousand connections each at the
// top level) and stopping (planDuration; the runner prints its estimate).
// Five repetitions are the fewest for which a Mann-Whitney test can reach
// p < 0.01 (its smallest p at n = 5 is 0.008; at n = 4, 0.029): should the
// plan not fit on a slower machine, defaultReps = 4 is the fallback.
const (
	defaultDrivers  = "go,h2load"
	defaultLevels   = "10,100,1000"
	defaultH2Levels = "100"
	defaultDuration = 2 * time.Second
	defaultWarmup   = time.Second
	// defaultConns: the callers of a run share 4 HTTP/2 connections. At one
	// connection per caller the Go driver ran out of CPU before the server
	// in nearly every run above 10 callers (docs/results/conns1: load-bound);
	// sharing four, it drove the same server to several times the calls
	// (docs/results/drivers). gRPC multiplexes the callers' streams either
	// way; what changes is the driver's own cost per call.
	defaultConns = 4
	defaultReps  = 5
)

func parseFlags(args []string, stderr io.Writer) (Config, error) {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfg                               Config
		wl, modes, vus, rates, drv, h2vus string
		work, durability, skew, readRatio string
		serverCPUs, driverCPUs            string
		ladder, pin                       bool
	)
	fs.StringVar(&wl, "workloads", "counter,bank-A", "comma-separated workloads: "+strings.Join(workloadNames(), ", ")+" (bank = bank-A)")
	fs.StringVar(&modes, "modes", "mutex,inputQ,noop", "comma-separated server modes (`bin/locklab -list-modes`), or all (the design registry and noop); noop shows the harness ceiling")
	fs.StringVar(&drv, "driver", defaultDrivers, "comma-separated load drivers, run on the same plan, interleaved: "+strings.Join(driverNames(), ", ")+
		" (h2load drives the counter only)")
	fs.StringVar(&vus, "vus", defaultLevels, "closed model: comma-separated levels of concurrent callers (VUs)")
	fs.StringVar(&h2vus, "h2load-vus", defaultH2Levels, "closed model: h2load's levels of concurrent calls")
	fs.BoolVar(&ladder, "ladder", false, "closed model: the seed's full ladder "+seedLadder+" (overrides -vus and -h2load-vus)")
	fs.StringVar(&cfg.Model, "model", "closed", "load model: closed (constant callers) or open (constant arrival rate)")
	fs.StringVar(&rates, "rates", "", "open model: comma-separated arrival rates in calls/s")
	fs.IntVar(&cfg.MaxVUs, "max-vus", 1000, "open model: the most callers a driver may use to keep each rate")
	fs.IntVar(&cfg.Conns, "conns", defaultConns, "connections the Go driver's and h2load's callers share (0: one per caller, as a k6 VU; k6 always has one per VU)")
	fs.DurationVar(&cfg.Duration, "duration", defaultDuration, "measured period of each run")
	fs.DurationVar(&cfg.Warmup, "warmup", defaultWarmup, "uncounted warm-up before each measured run (0 to skip; h2load needs one)")
	fs.IntVar(&cfg.Reps, "reps", defaultReps, "repetitions of every combination (5 lets a Mann-Whitney test reach p < 0.01)")
	fs.StringVar(&work, "work", "0", "factor: comma-separated CPU work inside every state-changing Apply (server -work), e.g. 0,10us,50us")
	fs.StringVar(&durability, "durability", "none", "factor: comma-separated durability: none, wal (server -durability, a fresh -data-dir per run)")
	fs.StringVar(&skew, "skew", "0", "factor: comma-separated Zipf θ of account and key choice (0 uniform)")
	fs.StringVar(&readRatio, "read-ratio", "default", "factor: comma-separated share of reads in the bank and kv mixes, 0..1, or default")
	fs.BoolVar(&pin, "pin", true, "pin the server and the driver to disjoint CPU sets (needs 2 CPUs)")
	fs.StringVar(&serverCPUs, "server-cpus", "", "CPUs of the server, e.g. 0 or 0-1 (default: the first half)")
	fs.StringVar(&driverCPUs, "driver-cpus", "", "CPUs of the driver (default: the CPUs the server does not have)")
	fs.StringVar(&cfg.Out, "out", "", "results directory (default results/<timestamp>)")
	fs.StringVar(&cfg.K6, "k6", "bin/k6", "k6 binary (make k6 builds the pinned one)")
	fs.StringVar(&cfg.Load, "load", "bin/load", "the Go driver binary (make build builds it)")
	fs.StringVar(&cfg.H2load, "h2load", "h2load", "h2load binary (make h2load installs Debian's nghttp2-client)")
	fs.StringVar(&cfg.Server, "server", "bin/locklab", "locklab server binary (make build)")
	fs.StringVar(&cfg.Scripts, "scripts", "k6", "folder of the k6 scripts")
	fs.StringVar(&cfg.Profile, "profile", "", "RUN: for this run (its number or id), save a CPU profile and a runtime trace of the server beside its raw JSON")
	fs.StringVar(&cfg.Rerender, "rerender", "", "rebuild the report of an existing results directory from its runs/ and meta.json, running nothing")
	fs.StringVar(&cfg.Diff, "diff", "", "OLD,NEW: compare the medians of two results directories level by level (is the comparison reproducible?), running nothing")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if cfg.Workloads, err = parseWorkloads(wl); err != nil {
		return Config{}, err
	}
	if modes == "all" {
		cfg.Modes = allModes()
	} else if cfg.Modes, err = parseList(modes, "-modes"); err != nil {
		return Config{}, err
	}
	if cfg.Drivers, err = parseDrivers(drv); err != nil {
		return Config{}, err
	}
	if cfg.Factors, err = parseFactors(work, durability, skew, readRatio); err != nil {
		return Config{}, err
	}
	switch cfg.Model {
	case "closed":
		if rates != "" {
			return Config{}, errors.New("-rates goes with -model open")
		}
		if ladder {
			vus, h2vus = seedLadder, seedLadder
		}
		if cfg.Levels, err = parseInts(vus, "-vus", 1, 5000); err != nil {
			return Config{}, err
		}
		if cfg.H2loadLevels, err = parseInts(h2vus, "-h2load-vus", 1, 5000); err != nil {
			return Config{}, err
		}
	case "open":
		if rates == "" {
			return Config{}, errors.New("-model open needs -rates, e.g. -rates 1000,5000")
		}
		if cfg.Levels, err = parseInts(rates, "-rates", 1, 1_000_000); err != nil {
			return Config{}, err
		}
		if cfg.MaxVUs < 1 || cfg.MaxVUs > 5000 {
			return Config{}, fmt.Errorf("-max-vus %d: want 1..5000", cfg.MaxVUs)
		}
		if slices.Contains(cfg.Drivers, "h2load") {
			return Config{}, errors.New("-driver h2load runs the closed model only: it cannot measure from intended start times")
		}
	default:
		return Config{}, fmt.Errorf("-model %q: want closed or open", cfg.Model)
	}
	switch {
	case cfg.Duration < time.Second:
		return Config{}, fmt.Errorf("-duration %v: want at least 1s", cfg.Duration)
	case cfg.Warmup < 0:
		return Config{}, fmt.Errorf("-warmup %v: want 0 or more", cfg.Warmup)
	case cfg.Warmup == 0 && slices.Contains(cfg.Drivers, "h2load"):
		return Config{}, errors.New("-driver h2load needs a warm-up (-warmup > 0): its rate sizes the measured run")
	case cfg.Reps < 1 || cfg.Reps > 100:
		return Config{}, fmt.Errorf("-reps %d: want 1..100", cfg.Reps)
	case cfg.Conns < 0 || cfg.Conns > 5000:
		return Config{}, fmt.Errorf("-conns %d: want 0..5000", cfg.Conns)
	}
	if cfg.ServerCPUs, cfg.DriverCPUs, err = cpuSets(pin, serverCPUs, driverCPUs, runtime.NumCPU()); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// levels are the load levels a driver runs at.
func (cfg Config) levels(driver string) []int {
	if driver == "h2load" {
		return cfg.H2loadLevels
	}
	return cfg.Levels
}

func parseList(s, flagName string) ([]string, error) {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("%s %q: empty item", flagName, s)
		}
		if slices.Contains(out, f) {
			return nil, fmt.Errorf("%s %q: %q given twice", flagName, s, f)
		}
		out = append(out, f)
	}
	return out, nil
}

func parseWorkloads(s string) ([]Workload, error) {
	names, err := parseList(s, "-workloads")
	if err != nil {
		return nil, err
	}
	out := make([]Workload, 0, len(names))
	for _, n := range names {
		if n == "bank" {
			n = "bank-A"
		}
		w, ok := workloads[n]
		if !ok {
			return nil, fmt.Errorf("-workloads: unknown workload %q; workloads: %s", n, strings.Join(workloadNames(), ", "))
		}
		out = append(out, w)
	}
	return out, nil
}

func parseDrivers(s string) ([]string, error) {
	names, err := parseList(s, "-driver")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if _, ok := lookupDriver(n); !ok {
			return nil, fmt.Errorf("-driver: unknown driver %q; drivers: %s", n, strings.Join(driverNames(), ", "))
		}
	}
	return names, nil
}

func parseInts(s, flagName string, lo, hi int) ([]int, error) {
	items, err := parseList(s, flagName)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(items))
	for _, it := range items {
		n, err := strconv.Atoi(it)
		if err != nil || n < lo || n > hi {
			return nil, fmt.Errorf("%s: %q is not a whole number in %d..%d", flagName, it, lo, hi)
		}
		out = append(out, n)
	}
	return out, nil
}
