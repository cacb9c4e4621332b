package run

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/lab/cpuset"
	"github.com/locklab/locklab/internal/lab/duet"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
)

// Config is one comparison: the plan, and how to run it. NewConfig makes
// one from the flags' values.
type Config struct {
	plan.Config
	// AllModes: -modes all, every mode the server binary lists.
	AllModes bool
	MaxVUs   int // open model: callers a driver may use to keep the rate
	Conns    int // connections per run; 0: the driver's default (one per caller)
	Duration time.Duration
	Warmup   time.Duration
	// ServerCPUs and DriverCPUs are the disjoint CPU sets the two processes
	// are pinned to; both nil when the machine has one CPU or -pin=false.
	// A factor may move them per run (plan.Factor.Place; placement).
	ServerCPUs []int
	DriverCPUs []int
	// ShareCPUs: a run whose server leaves the driver no CPU of its own
	// runs the driver on the server's CPUs (-share-cpus).
	ShareCPUs   bool
	NumCPU      int    // the machine's
	driverGiven bool   // -driver-cpus named the driver's CPUs
	Out         string // results directory; a timestamped one under results/ by default
	K6          string // k6 binary
	Load        string // the Go driver binary (cmd/load)
	H2load      string // h2load binary
	Server      string // locklab server binary
	// Builds are the server binaries of the -runtime values, built before
	// the first run (buildRuntimes); a run's is Config.serverFor's.
	Builds  []record.RuntimeBuild
	Scripts string // folder of the k6 scripts
	Command string // the command line, for the report
	// Profile names one run (its index or id) whose server is profiled: a
	// CPU profile and a runtime trace over the measured window.
	Profile string
	// Baseline is the design every other store-backed design is compared
	// with; it is one of Modes.
	Baseline string
	// Gate is the validity rule, the equivalence margin and the stopping
	// rule, fixed before the first run and written to meta.json.
	Gate record.Gate
	// TimeBudget bounds the blocks -precision adds: none is started that
	// would end the whole comparison past it (0: no bound but MaxBlocks).
	TimeBudget time.Duration
	// Measure is how the arms run: MeasureDuet (side by side) or
	// MeasureIsolated (one at a time, in blocks); Duet its settings.
	Measure string
	Duet    Duet
}

// Options are the flags' values, as given.
type Options struct {
	Workloads, Modes, Drivers string
	Model                     string
	VUs, H2loadVUs, Rates     string
	Ladder                    bool
	MaxVUs, Conns, Reps       int
	Seed                      int // orders the modes inside each block
	Baseline                  string
	Duration, Warmup          time.Duration
	Factors                   map[string]string // by factor name; a missing one is the default
	Pin, ShareCPUs            bool
	DriverCPUs                string
	Out, K6, Load, H2load     string
	Server, Scripts, Profile  string
	// MaxForeign is the validity gate's share, a fraction (MaxForeignFlag
	// reads the flag); 0 is DefaultMaxForeign.
	MaxForeign float64
	// The confirmatory analysis, as given: shares as percentages ("3%" or
	// "3").
	Margin, Precision string
	Reruns, MaxBlocks int
	AA                bool
	TimeBudget        time.Duration
	// Measure and the duet's settings (-measure, -known, -server-share,
	// -duet-cpu, -duet-sched, -duet-slice, -duet-metrics: comma-separated, "" the
	// default ones).
	Measure     string
	Known       time.Duration
	ServerShare float64
	DuetCPU     string
	DuetSched   string
	// DuetSlice 0 is DefaultSlice where the kernel keeps one, the
	// kernel's own where it does not; SliceKernel the kernel's own.
	DuetSlice   time.Duration
	DuetTurn    time.Duration
	DuetMetrics string
	// DriverWindows is, side by side, a round's window for the groups
	// each named driver drives, in place of Duration (nil: Duration for
	// every group).
	DriverWindows map[string]time.Duration
}

// SeedLadder is the VU ladder of the inputQ-vs-mutex seed.
const SeedLadder = "10,100,200,300,500,1000"

// Defaults of `make compare`, chosen so that the confirmatory analysis can
// decide its primaries and the whole job still finishes within 8 minutes on
// a 2-CPU machine. The report judges, in each of its 5 groups (the Go
// driver on 2 workloads at 2 levels, h2load on the counter at one), inputQ
// against mutex on calls/s and server CPU per call: a family of 10, tested
// with Yuen's trimmed mean, which at 10 blocks detects an effect of 2
// block-to-block σ in 94% of simulated experiments and sets one block out
// of line aside (docs/methodology.md, "What the simulations show"). Every block also runs mutex a second time, by a server of
// its own, as the A/A control: 4 arms × 5 groups, 20 runs a block, 200 in
// all, each 0.4 s of warm-up and 1.5 s measured, about 6.5 minutes with
// starting and stopping (PlanDuration; the runner prints its estimate
// before the first run). The Go driver's 1000-caller level is not among
// them: its runs spent a third of their time connecting and were the
// driver's more than the server's.
const (
	DefaultWorkloads = "counter,bank-A"
	DefaultModes     = "mutex,inputQ,noop"
	DefaultBaseline  = report.DefaultBaseline
	DefaultDrivers   = "go,h2load"
	DefaultLevels    = "10,100"
	DefaultH2Levels  = "100"
	DefaultDuration  = 1500 * time.Millisecond
	DefaultWarmup    = 400 * time.Millisecond
	DefaultMaxVUs    = 1000
	// DefaultConns: the callers of a run share 4 HTTP/2 connections. At
	// one connection per caller the Go driver set the pace: at 100 callers
	// the noop server served no more than the mutex (docs/results/conns1);
	// sharing four, it drove the noop server to about twice the calls at
	// 100 callers (docs/results/drivers against drivers-conns1). gRPC multiplexes the callers'
	// streams either way; what changes is the driver's own cost per call.
	DefaultConns  = 4
	DefaultReps   = 10
	DefaultReruns = 2
	// DefaultMargin is the equivalence margin: "no difference" is said of
	// an effect shown to lie within ±3%, about what the A/A control
	// resolves at the default plan.
	DefaultMargin = "3%"
)

// DefaultMaxForeign is -max-foreign's default, the lab's rule.
const DefaultMaxForeign = cpuset.DefaultMaxForeign

// NewConfig checks the flags' values and makes the comparison's Config.
func NewConfig(o Options, numCPU int) (Config, error) {
	cfg := Config{MaxVUs: o.MaxVUs, Conns: o.Conns, Duration: o.Duration, Warmup: o.Warmup,
		Out: o.Out, K6: o.K6, Load: o.Load, H2load: o.H2load, Server: o.Server, Scripts: o.Scripts, Profile: o.Profile}
	cfg.Model, cfg.Reps, cfg.Seed, cfg.Baseline = o.Model, o.Reps, o.Seed, o.Baseline
	var err error
	if cfg.Workloads, err = parseWorkloads(o.Workloads); err != nil {
		return Config{}, err
	}
	if o.Modes == "all" {
		cfg.AllModes = true
	} else if cfg.Modes, err = plan.ParseList(o.Modes, "-modes"); err != nil {
		return Config{}, err
	}
	if !cfg.AllModes {
		if err := checkBaseline(cfg.Baseline, cfg.Modes); err != nil {
			return Config{}, err
		}
	}
	if cfg.Drivers, err = parseDrivers(o.Drivers); err != nil {
		return Config{}, err
	}
	if cfg.Factors, err = plan.ParseSpace(o.Factors); err != nil {
		return Config{}, err
	}
	vus, h2vus := o.VUs, o.H2loadVUs
	switch cfg.Model {
	case "closed":
		if o.Rates != "" {
			return Config{}, errors.New("-rates goes with -model open")
		}
		if o.Ladder {
			vus, h2vus = SeedLadder, SeedLadder
		}
		if cfg.Levels, err = plan.ParseInts(vus, "-vus", 1, 5000); err != nil {
			return Config{}, err
		}
		if cfg.H2loadLevels, err = plan.ParseInts(h2vus, "-h2load-vus", 1, 5000); err != nil {
			return Config{}, err
		}
	case "open":
		if o.Rates == "" {
			return Config{}, errors.New("-model open needs -rates, e.g. -rates 1000,5000")
		}
		if cfg.Levels, err = plan.ParseInts(o.Rates, "-rates", 1, 1_000_000); err != nil {
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
	shortest := time.Second
	if o.Measure == MeasureDuet {
		shortest = MinRound
	}
	switch {
	case cfg.Duration < shortest:
		return Config{}, fmt.Errorf("-duration %v: want at least %v (a duet round's window %v)", cfg.Duration, time.Second, MinRound)
	case cfg.Warmup < 0:
		return Config{}, fmt.Errorf("-warmup %v: want 0 or more", cfg.Warmup)
	case cfg.Warmup == 0 && slices.Contains(cfg.Drivers, "h2load"):
		return Config{}, errors.New("-driver h2load needs a warm-up (-warmup > 0): its rate sizes the measured run")
	case cfg.Reps < 1 || cfg.Reps > 100:
		return Config{}, fmt.Errorf("-reps %d: want 1..100", cfg.Reps)
	case cfg.Conns < 0 || cfg.Conns > 5000:
		return Config{}, fmt.Errorf("-conns %d: want 0..5000", cfg.Conns)
	}
	if cfg.ServerCPUs, cfg.DriverCPUs, err = CPUSets(o.Pin, o.DriverCPUs, numCPU); err != nil {
		return Config{}, err
	}
	cfg.NumCPU, cfg.ShareCPUs, cfg.driverGiven = numCPU, o.ShareCPUs, o.DriverCPUs != ""
	if !o.Pin && o.ShareCPUs {
		return Config{}, errors.New("-share-cpus goes with -pin")
	}
	if cfg.Gate, cfg.TimeBudget, err = gateOf(o, cfg.Reps); err != nil {
		return Config{}, err
	}
	if o.AA {
		cfg.Gate.Twin, cfg.Twin = cfg.Baseline, cfg.Baseline
	}
	if cfg.Measure, cfg.Duet, err = duetOf(o); err != nil {
		return Config{}, err
	}
	if cw := cfg.Factors.Values(plan.CallWork); cfg.Measure == MeasureDuet && (len(cw) > 1 || cw[0] != "0") {
		return Config{}, fmt.Errorf("-call-work %s: side by side the known-answer arm is -known's (%v); -call-work is for -measure isolated", strings.Join(cw, ","), cfg.Duet.Known)
	}
	if err := checkAttribute(cfg); err != nil {
		return Config{}, err
	}
	if err := checkLedger(cfg); err != nil {
		return Config{}, err
	}
	for _, v := range cfg.Factors.Values(plan.ServerCPUs) {
		if _, set := plan.CPUSet(v); set && !o.Pin {
			return Config{}, errors.New("-server-cpus goes with -pin")
		}
		if _, err := cfg.placement(plan.DefaultPoint().With(plan.ServerCPUs, v)); err != nil {
			return Config{}, err
		}
	}
	return cfg, nil
}

// gateOf checks the validity gate's flags and the confirmatory analysis's.
func gateOf(o Options, reps int) (record.Gate, time.Duration, error) {
	var g record.Gate
	var err error
	// Empty is the default, so that an Options made in code need not
	// repeat the flags'.
	o.Margin, o.Precision = cmp.Or(o.Margin, DefaultMargin), cmp.Or(o.Precision, "0")
	if g.MaxForeign = cmp.Or(o.MaxForeign, DefaultMaxForeign); !(g.MaxForeign > 0 && g.MaxForeign <= 1) {
		return g, 0, fmt.Errorf("-max-foreign %g: want a share above 0 and at most 1", g.MaxForeign)
	}
	if g.Margin, err = parsePercent("-margin", o.Margin, 0, 0.5); err != nil {
		return g, 0, err
	}
	if g.Margin == 0 {
		return g, 0, errors.New("-margin 0%: no interval can lie within ±0%; give the largest effect that counts as none, such as 3%")
	}
	if g.Precision, err = parsePercent("-precision", o.Precision, 0, 0.5); err != nil {
		return g, 0, err
	}
	switch {
	case o.Reruns < 0 || o.Reruns > 10:
		return g, 0, fmt.Errorf("-reruns %d: want 0..10", o.Reruns)
	case o.MaxBlocks != 0 && (o.MaxBlocks < reps || o.MaxBlocks > 100):
		return g, 0, fmt.Errorf("-max-blocks %d: want %d (-reps) to 100, or 0 for three times -reps", o.MaxBlocks, reps)
	case o.TimeBudget < 0:
		return g, 0, fmt.Errorf("-time-budget %v: want 0 (none) or more", o.TimeBudget)
	}
	g.Reruns, g.MaxBlocks = o.Reruns, o.MaxBlocks
	if g.Precision > 0 && g.MaxBlocks == 0 {
		g.MaxBlocks = min(100, 3*reps)
	}
	if g.Precision == 0 {
		g.MaxBlocks = 0
	}
	return g, o.TimeBudget, nil
}

// parsePercent reads a share given as a percentage, "10%" or "10", and
// checks it lies in [lo, hi] (as fractions).
func parsePercent(flagName, s string, lo, hi float64) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s %q: want a percentage, e.g. 10%%", flagName, s)
	}
	if f := v / 100; f < lo || f > hi {
		return 0, fmt.Errorf("%s %q: want %g%% to %g%%", flagName, s, lo*100, hi*100)
	}
	return v / 100, nil
}

// checkBaseline: the baseline must run, and must keep state, or there is
// nothing to compare the designs with.
func checkBaseline(baseline string, modes []string) error {
	switch {
	case baseline == "":
		return errors.New("-baseline is empty: name the design the others are compared with, e.g. -baseline " + DefaultBaseline)
	case baseline == report.Noop:
		return fmt.Errorf("-baseline %s: %s keeps no state; the baseline must be a store-backed design (every design is compared with %s anyway)", baseline, baseline, report.Noop)
	case !slices.Contains(modes, baseline):
		return fmt.Errorf("-baseline %s is not among -modes (%s): the baseline must run; add it to -modes or choose one of them", baseline, strings.Join(modes, ","))
	}
	return nil
}

// base is the comparison's CPU placement, before any factor moves it.
func (cfg Config) base() plan.Placement {
	return plan.Placement{Server: cfg.ServerCPUs, Driver: cfg.DriverCPUs}
}

func parseWorkloads(s string) ([]plan.Workload, error) {
	names, err := plan.ParseList(s, "-workloads")
	if err != nil {
		return nil, err
	}
	out := make([]plan.Workload, 0, len(names))
	for _, n := range names {
		w, ok := plan.LookupWorkload(n)
		if !ok {
			return nil, fmt.Errorf("-workloads: unknown workload %q; workloads: %s", n, strings.Join(plan.WorkloadNames(), ", "))
		}
		out = append(out, w)
	}
	return out, nil
}

func parseDrivers(s string) ([]string, error) {
	names, err := plan.ParseList(s, "-driver")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if _, ok := LookupDriver(n); !ok {
			return nil, fmt.Errorf("-driver: unknown driver %q; drivers: %s", n, strings.Join(DriverNames(), ", "))
		}
	}
	return names, nil
}

// duetOf checks -measure and the duet's flags. An Options made in code
// with no Measure runs isolated, as the runner did before duet rounds.
func duetOf(o Options) (string, Duet, error) {
	m := cmp.Or(o.Measure, MeasureIsolated)
	if !slices.Contains(Measures, m) {
		return "", Duet{}, fmt.Errorf("-measure %q: want %s", o.Measure, strings.Join(Measures, " or "))
	}
	d := Duet{Known: o.Known, Share: cmp.Or(o.ServerShare, DefaultShare), CPU: cmp.Or(o.DuetCPU, DuetCPUs[0]), Fallback: o.DuetCPU == "", Sched: cmp.Or(o.DuetSched, DuetScheds[0]), SchedFallback: o.DuetSched == "", Slice: o.DuetSlice, Windows: o.DriverWindows, Turn: cmp.Or(o.DuetTurn, DefaultTurn)}
	switch o.DuetSlice {
	case 0:
		d.Slice, d.SliceFallback = DefaultSlice, true
	case SliceKernel:
		d.Slice = 0
	}
	if o.DuetMetrics != "" {
		for _, n := range strings.Split(o.DuetMetrics, ",") {
			n = strings.TrimSpace(n)
			if !slices.Contains(duet.MetricNames(), n) {
				return "", Duet{}, fmt.Errorf("-duet-metrics: unknown metric %q; metrics: %s", n, strings.Join(duet.MetricNames(), ", "))
			}
			if !slices.Contains(d.Metrics, n) {
				d.Metrics = append(d.Metrics, n)
			}
		}
	}
	switch {
	case !slices.Contains(DuetCPUs, d.CPU):
		return "", Duet{}, fmt.Errorf("-duet-cpu %q: want %s", o.DuetCPU, strings.Join(DuetCPUs, ", "))
	case !slices.Contains(DuetScheds, d.Sched):
		return "", Duet{}, fmt.Errorf("-duet-sched %q: want %s", o.DuetSched, strings.Join(DuetScheds, ", "))
	case d.Slice != 0 && (d.Slice < MinSlice || d.Slice > MaxSlice):
		return "", Duet{}, fmt.Errorf("-duet-slice %v: want kernel (the kernel's own) or %v to %v", o.DuetSlice, MinSlice, MaxSlice)
	case d.Turn < MinTurn || d.Turn > MaxTurn:
		return "", Duet{}, fmt.Errorf("-duet-turn %v: want %v to %v", o.DuetTurn, MinTurn, MaxTurn)
	case o.DuetTurn != 0 && d.CPU != CPUTurns:
		return "", Duet{}, fmt.Errorf("-duet-turn %v: a turn is -duet-cpu %s's; -duet-cpu is %s", o.DuetTurn, CPUTurns, d.CPU)
	case d.CPU == CPUTurns && slices.Contains(d.Metrics, "p99"):
		return "", Duet{}, fmt.Errorf("-duet-metrics p99 with -duet-cpu %s: a call that arrives in another arm's turn waits for it, so the callers' tail would measure the turns; judge p99 with -duet-cpu %s", CPUTurns, CPUWeight)
	case d.Known < 0 || d.Known > time.Millisecond:
		return "", Duet{}, fmt.Errorf("-known %v: want 0 (no known-answer arm) to 1ms", o.Known)
	case !(d.Share > 0 && d.Share <= 1):
		return "", Duet{}, fmt.Errorf("-server-share %v: want a share in (0, 1] of the server CPUs for all arms together", o.ServerShare)
	}
	return m, d, nil
}
