package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is one comparison: every workload × mode × load level × repetition.
// Its zero value is not usable; parseFlags fills the documented defaults.
type Config struct {
	Workloads []Workload
	Modes     []string
	// Model is "closed" (constant VUs, levels are VU counts) or "open"
	// (constant arrival rate, levels are iterations per second).
	Model    string
	Levels   []int
	MaxVUs   int // open model: VUs k6 may use to keep the rate
	Duration time.Duration
	Warmup   time.Duration
	Reps     int
	Out      string // results directory; a timestamped one under results/ by default
	K6       string // k6 binary
	Server   string // locklab server binary
	Scripts  string // folder of the k6 scripts
	Command  string // the command line, for the report
	// Rerender names a results directory whose report is rebuilt from its
	// runs/ files, running nothing.
	Rerender string
	// Diff names two results directories whose medians are compared,
	// "OLD,NEW"; nothing is run.
	Diff string
}

// Workload is a k6 script and the knobs that select its case.
type Workload struct {
	Name     string // as given on the command line: counter, bank-A, kv …
	Script   string // file name under Config.Scripts
	Scenario string // bank: A, B or C
}

var workloads = map[string]Workload{
	"counter": {Name: "counter", Script: "counter.js"},
	"bank-A":  {Name: "bank-A", Script: "bank.js", Scenario: "A"},
	"bank-B":  {Name: "bank-B", Script: "bank.js", Scenario: "B"},
	"bank-C":  {Name: "bank-C", Script: "bank.js", Scenario: "C"},
	"kv":      {Name: "kv", Script: "kv.js"},
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

func parseFlags(args []string, stderr io.Writer) (Config, error) {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfg                   Config
		wl, modes, vus, rates string
		ladder                bool
	)
	fs.StringVar(&wl, "workloads", "counter,bank-A", "comma-separated workloads: "+strings.Join(workloadNames(), ", ")+" (bank = bank-A)")
	fs.StringVar(&modes, "modes", "mutex,inputQ,noop", "comma-separated server modes; noop shows the harness ceiling")
	fs.StringVar(&vus, "vus", "10,100,1000", "closed model: comma-separated VU levels")
	fs.BoolVar(&ladder, "ladder", false, "closed model: the seed's full ladder "+seedLadder+" (overrides -vus)")
	fs.StringVar(&cfg.Model, "model", "closed", "load model: closed (constant VUs) or open (constant arrival rate)")
	fs.StringVar(&rates, "rates", "", "open model: comma-separated arrival rates in iterations/s")
	fs.IntVar(&cfg.MaxVUs, "max-vus", 1000, "open model: the most VUs k6 may use to keep each rate")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "measured period of each run")
	fs.DurationVar(&cfg.Warmup, "warmup", 2*time.Second, "uncounted warm-up before each measured run (0 to skip)")
	fs.IntVar(&cfg.Reps, "reps", 2, "repetitions of every combination")
	fs.StringVar(&cfg.Out, "out", "", "results directory (default results/<timestamp>)")
	fs.StringVar(&cfg.K6, "k6", "bin/k6", "k6 binary (make k6 builds the pinned one)")
	fs.StringVar(&cfg.Server, "server", "bin/locklab", "locklab server binary (make build)")
	fs.StringVar(&cfg.Scripts, "scripts", "k6", "folder of the k6 scripts")
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
	if cfg.Modes, err = parseList(modes, "-modes"); err != nil {
		return Config{}, err
	}
	switch cfg.Model {
	case "closed":
		if rates != "" {
			return Config{}, errors.New("-rates goes with -model open")
		}
		if ladder {
			vus = seedLadder
		}
		if cfg.Levels, err = parseInts(vus, "-vus", 1, 5000); err != nil {
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
	default:
		return Config{}, fmt.Errorf("-model %q: want closed or open", cfg.Model)
	}
	switch {
	case cfg.Duration < time.Second:
		return Config{}, fmt.Errorf("-duration %v: want at least 1s", cfg.Duration)
	case cfg.Warmup < 0:
		return Config{}, fmt.Errorf("-warmup %v: want 0 or more", cfg.Warmup)
	case cfg.Reps < 1 || cfg.Reps > 100:
		return Config{}, fmt.Errorf("-reps %d: want 1..100", cfg.Reps)
	}
	return cfg, nil
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
