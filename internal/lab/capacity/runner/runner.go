package runner

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/locklab/locklab/internal/lab/capacity"
	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
	"github.com/locklab/locklab/internal/lab/run"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

// The capacity study's defaults, where they differ from the comparison's:
// every design the study is about on one workload, the Go driver only
// (h2load cannot hold a rate), paired.MinBlocksRobust blocks (the fewest
// the paired analysis judges) and short runs, so that the search and the
// overload phase in every block fit in 10 minutes on 2 CPUs
// (CapacityEstimate says how long; the gate's reruns come on top).
const (
	CapacityWorkloads = "counter"
	CapacityModes     = "mutex,inputQ,inputQ-batch,combining,sharded,noop"
	CapacityDrivers   = "go"
	CapacityDuration  = time.Second
	CapacityWarmup    = 250 * time.Millisecond
	CapacityReps      = paired.MinBlocksRobust
	// A run of the Go driver costs about this much besides its warm-up and
	// window: a fresh server, two driver processes connecting, the reset
	// and the stats.
	capacityRunOverhead = 400 * time.Millisecond
	// recoveryInterval is the timeline's resolution in the phase after an
	// overload: the recovery time is a multiple of it.
	recoveryInterval = 100 * time.Millisecond
	// sampleEvery is how often the overload phase reads the server's RSS
	// and goroutines.
	sampleEvery = 100 * time.Millisecond
)

// CapacityOptions are the capacity study's flags, as given.
type CapacityOptions struct {
	Study, SLO, Steps, Policies string
	Refine, ProbeCallers        int
	Overload, Recover, Floor    float64
	OverloadFor, RecoverFor     time.Duration
}

// CapacityFlags declares the study's flags on fs.
func CapacityFlags(fs *flag.FlagSet) *CapacityOptions {
	co := &CapacityOptions{}
	fs.StringVar(&co.Study, "study", "", "run a study, a row of the catalogue (internal/lab/study) into its folder under docs/results, the other flags added to each of its plans; list prints the catalogue, index rewrites docs/results/README.md's index (docs/runner.md)")
	fs.StringVar(&co.SLO, "slo", "", "capacity: the objective a rate must meet, e.g. "+capacity.ExampleSLO+": a latency percentile bound (p50, p90, p95, p99, p99.9), achieved>=share of the offered rate, errors=most unexpected errors (default: from the floor, see -floor-multiple)")
	fs.Float64Var(&co.Floor, "floor-multiple", capacity.DefaultFloorMultiple, "capacity: without -slo, the objective is p99 <= this many times the noop server's p99 at the ladder's lowest rate (the harness's floor, measured first)")
	fs.StringVar(&co.Steps, "steps", capacity.DefaultSteps, "capacity: the ladder, in percent of the noop server's ceiling (-rates instead gives calls/s and skips the probe)")
	fs.IntVar(&co.Refine, "refine", 2, "capacity: bisection steps between the last passing and the first failing rate, per design and block")
	fs.IntVar(&co.ProbeCallers, "probe-callers", 100, "capacity: closed-model callers of the noop probe that sets the ceiling")
	fs.Float64Var(&co.Overload, "overload", 1.5, "capacity: the overload phase's rate, as a multiple of the best design's capacity")
	fs.Float64Var(&co.Recover, "recover", 0.5, "capacity: the rate after the overload, as a multiple of the best design's capacity")
	fs.DurationVar(&co.OverloadFor, "overload-for", time.Second, "capacity: how long the overload lasts, in every block (0: no overload phase)")
	fs.DurationVar(&co.RecoverFor, "recover-for", time.Second, "capacity: how long the phase after it lasts")
	fs.StringVar(&co.Policies, "policies", strings.Join(capacity.PolicyNames(), ","), "capacity: the admission policies the overload phase compares: "+strings.Join(capacity.PolicyNames(), ", "))
	return co
}

// Capacity is a checked capacity study.
type Capacity struct {
	// SLO is the objective; with FloorMultiple > 0 it is set by the
	// study from the floor it measures first (capacity.FloorObjective), and
	// zero until then.
	SLO           capacity.SLO
	FloorMultiple float64
	Steps         []float64 // of the ceiling; nil with Rates
	Rates         []int     // an explicit ladder; nil: from the probe
	Refine        int
	ProbeCallers  int
	Overload      float64
	Recover       float64
	OverloadFor   time.Duration
	RecoverFor    time.Duration
	Policies      []string
}

// NewCapacity checks the flags of a capacity study. set says which flags
// were given: those not given take the study's defaults, not the
// comparison's.
func NewCapacity(o run.Options, co CapacityOptions, set func(name string) bool, numCPU int) (run.Config, Capacity, error) {
	var cc Capacity
	var err error
	switch {
	case set("slo") && set("floor-multiple"):
		return run.Config{}, cc, errors.New("-slo and -floor-multiple: give one (an objective, or the multiple of the floor that sets it)")
	case set("slo"):
		if cc.SLO, err = capacity.ParseSLO(co.SLO); err != nil {
			return run.Config{}, cc, err
		}
	case !(co.Floor > 1 && co.Floor <= 100):
		return run.Config{}, cc, fmt.Errorf("-floor-multiple %v: want a multiple of the floor in (1, 100]", co.Floor)
	default:
		cc.FloorMultiple = co.Floor
	}
	if set("rates") {
		if set("steps") {
			return run.Config{}, cc, errors.New("-rates and -steps: give one ladder (calls/s, or percent of the ceiling)")
		}
		if cc.Rates, err = capacity.ParseRates(o.Rates, "-rates"); err != nil {
			return run.Config{}, cc, err
		}
	} else if cc.Steps, err = capacity.ParseSteps(co.Steps, "-steps"); err != nil {
		return run.Config{}, cc, err
	}
	if set("model") && o.Model != "open" {
		return run.Config{}, cc, fmt.Errorf("-study capacity runs the open model; -model %s does not apply", o.Model)
	}
	if set("vus") || set("ladder") || set("h2load-vus") {
		return run.Config{}, cc, errors.New("-study capacity offers rates, not callers: -vus, -ladder and -h2load-vus do not apply (-probe-callers sizes the probe)")
	}
	switch {
	case co.Refine < 0 || co.Refine > 10:
		return run.Config{}, cc, fmt.Errorf("-refine %d: want 0..10", co.Refine)
	case co.ProbeCallers < 1 || co.ProbeCallers > 5000:
		return run.Config{}, cc, fmt.Errorf("-probe-callers %d: want 1..5000", co.ProbeCallers)
	case !(co.Overload > 1 && co.Overload <= 10):
		return run.Config{}, cc, fmt.Errorf("-overload %v: want a multiple of capacity in (1, 10]", co.Overload)
	case !(co.Recover > 0 && co.Recover < 1):
		return run.Config{}, cc, fmt.Errorf("-recover %v: want a multiple of capacity in (0, 1)", co.Recover)
	case co.OverloadFor < 0 || (co.OverloadFor > 0 && co.OverloadFor < 500*time.Millisecond):
		return run.Config{}, cc, fmt.Errorf("-overload-for %v: want 0 (none) or at least 500ms", co.OverloadFor)
	case co.OverloadFor > 0 && co.RecoverFor < 500*time.Millisecond:
		return run.Config{}, cc, fmt.Errorf("-recover-for %v: want at least 500ms", co.RecoverFor)
	}
	cc.Refine, cc.ProbeCallers, cc.Overload, cc.Recover = co.Refine, co.ProbeCallers, co.Overload, co.Recover
	cc.OverloadFor, cc.RecoverFor = co.OverloadFor, co.RecoverFor
	if cc.Policies, err = plan.ParseList(co.Policies, "-policies"); err != nil {
		return run.Config{}, cc, err
	}
	for _, p := range cc.Policies {
		if _, ok := capacity.LookupPolicy(p); !ok {
			return run.Config{}, cc, fmt.Errorf("-policies: unknown policy %q; policies: %s", p, strings.Join(capacity.PolicyNames(), ", "))
		}
	}
	defaults := map[string]func(){
		"workloads": func() { o.Workloads = CapacityWorkloads },
		"modes":     func() { o.Modes = CapacityModes },
		"driver":    func() { o.Drivers = CapacityDrivers },
		"duration":  func() { o.Duration = CapacityDuration },
		"warmup":    func() { o.Warmup = CapacityWarmup },
		"reps":      func() { o.Reps = CapacityReps },
	}
	for name, apply := range defaults {
		if !set(name) {
			apply()
		}
	}
	// The probe is a closed-model run; NewConfig checks the rest.
	o.Model, o.Rates, o.Ladder, o.VUs, o.H2loadVUs = "closed", "", false, fmt.Sprint(cc.ProbeCallers), "1"
	cfg, err := run.NewConfig(o, numCPU)
	if err != nil {
		return run.Config{}, cc, err
	}
	if slices.Contains(cfg.Drivers, "h2load") {
		return run.Config{}, cc, errors.New("-driver h2load cannot hold a rate (it runs the closed model only): the capacity study needs the go or k6 driver")
	}
	if cfg.MaxVUs < 1 || cfg.MaxVUs > 5000 {
		return run.Config{}, cc, fmt.Errorf("-max-vus %d: want 1..5000", cfg.MaxVUs)
	}
	cfg.Model = "open"
	// The A/A control is the comparison's: the ladder and its knees pair
	// no blocks of a twin.
	cfg.Twin, cfg.Gate.Twin = "", ""
	return cfg, cc, nil
}

// CapacityEstimate estimates the study's time on a 2-CPU machine, from its
// runs and their durations: the probe and the floor, each block's ladder
// and refinement for every design, and each block's overload phase. The
// validity gate's reruns come on top.
func CapacityEstimate(cfg run.Config, cc Capacity) time.Duration {
	one := cfg.Warmup + cfg.Duration + capacityRunOverhead
	steps := len(cc.Steps) + len(cc.Rates)
	wl := len(cfg.Workloads)
	total := time.Duration(wl) * one // the probes
	if cc.FloorMultiple > 0 {
		total += time.Duration(wl) * one // the floors
	}
	total += time.Duration(cfg.Reps*wl*len(cfg.Drivers)*len(cfg.Modes)*(steps+cc.Refine)) * one
	if cc.OverloadFor > 0 {
		var n int
		for _, name := range cc.Policies {
			p, _ := capacity.LookupPolicy(name)
			for _, m := range cfg.Modes {
				if ok, _ := p.Serves(m); ok && m != report.Noop {
					n++
				}
			}
		}
		total += time.Duration(cfg.Reps*wl*n) * (cfg.Warmup + cc.OverloadFor + cc.RecoverFor + 2*capacityRunOverhead)
	}
	return total
}

// RunCapacity runs the capacity study and writes its results directory:
// every run's record, capacity.json, meta.json and the report.
func RunCapacity(ctx context.Context, cfg run.Config, cc Capacity, out, warn io.Writer) error {
	cfg, cat, err := run.Prepare(cfg)
	if err != nil {
		return err
	}
	if len(cfg.Factors.Points()) != 1 {
		return errors.New("-study capacity runs one factor combination: give each factor one value")
	}
	if cc.Rates == nil && !slices.Contains(cfg.Modes, report.Noop) {
		return fmt.Errorf("-study capacity scales its ladder by the %s server's ceiling: add %s to -modes, or give -rates", report.Noop, report.Noop)
	}
	if cc.FloorMultiple > 0 && !slices.Contains(cfg.Modes, report.Noop) {
		return fmt.Errorf("-study capacity sets its objective from the %s server's floor: add %s to -modes, or give -slo", report.Noop, report.Noop)
	}
	if cfg.Out == "" {
		cfg.Out = filepath.Join("results", "capacity-"+time.Now().UTC().Format("20060102-150405"))
	}
	if err := os.MkdirAll(filepath.Join(cfg.Out, "runs"), 0o755); err != nil {
		return err
	}
	release, err := run.Lock(ctx, out)
	if err != nil {
		return err
	}
	defer release()
	meta := run.NewMeta(cfg, plan.NACells(cfg.Config, cat))
	meta.Model, meta.Levels, meta.H2loadLevels, meta.MaxVUsOpen = "open", nil, nil, cfg.MaxVUs
	if err := record.WriteJSON(filepath.Join(cfg.Out, "meta.json"), meta); err != nil {
		return err
	}
	fmt.Fprintf(out, "locklab capacity: %s × %s; drivers %s; objective %s; %d blocks, seed %d; about %s; results in %s\n",
		strings.Join(meta.Workloads, ","), strings.Join(cfg.Modes, ","), strings.Join(cfg.Drivers, ","), objectiveText(cc),
		cfg.Reps, cfg.Seed, CapacityEstimate(cfg, cc).Round(time.Second), cfg.Out)
	for _, na := range meta.NA {
		fmt.Fprintf(out, "n/a: %s × %s: %s\n", na.Workload, na.Mode, na.Reason)
	}
	run.CheckQuiet(ctx, cfg, meta.Gate, out, warn)
	s := &study{cfg: cfg, cc: cc, p: run.Machine(), runsDir: filepath.Join(cfg.Out, "runs"), out: out, na: meta.NA}
	s.objectiveSet = func() error {
		meta.Objective, meta.ObjectiveFrom = s.rec.SLO, objectiveFrom(s.cc)
		return record.WriteJSON(filepath.Join(cfg.Out, "meta.json"), meta)
	}
	runErr := s.run(ctx)
	meta.Finished = time.Now().UTC()
	if len(s.runs) == 0 {
		return runErr
	}
	if s.rec.SLO == "" {
		return fmt.Errorf("stopped before the objective was set, so no report (the %d runs are in %s): %w", len(s.runs), s.runsDir, runErr)
	}
	if err := record.WriteJSON(filepath.Join(cfg.Out, "meta.json"), meta); err != nil {
		return err
	}
	if err := record.WriteJSON(filepath.Join(cfg.Out, capacity.CapacityFile), s.rec); err != nil {
		return err
	}
	if err := capacity.Write(cfg.Out, meta, &s.rec, s.runs); err != nil {
		return err
	}
	fmt.Fprintf(out, "report: %s\n        %s\n", filepath.Join(cfg.Out, "report.md"), filepath.Join(cfg.Out, "report.html"))
	if runErr != nil {
		return fmt.Errorf("stopped after %d runs (the report covers those): %w", len(s.runs), runErr)
	}
	if slices.ContainsFunc(s.runs, (*record.Run).Failed) {
		return run.ErrRunsFailed
	}
	return nil
}

// study is one capacity study under way.
type study struct {
	cfg     run.Config
	cc      Capacity
	p       run.Procs
	runsDir string
	out     io.Writer
	na      []plan.NA

	rec   capacity.Capacity
	runs  []*record.Run
	start time.Time
	// objectiveSet, if set, is told once the objective is known.
	objectiveSet func() error
}

// objectiveText is the objective as the runner announces it.
func objectiveText(cc Capacity) string {
	if cc.FloorMultiple > 0 {
		return objectiveFrom(cc)
	}
	return cc.SLO.String()
}

// objectiveFrom says where the objective came from.
func objectiveFrom(cc Capacity) string {
	if cc.FloorMultiple > 0 {
		return fmt.Sprintf("%s× the %s server's p99 at the ladder's lowest rate (-floor-multiple)", plan.FormatFloat(cc.FloorMultiple), report.Noop)
	}
	return "-slo"
}

// run probes, searches block by block, then overloads.
func (s *study) run(ctx context.Context) error {
	s.start = time.Now()
	s.rec = capacity.Capacity{Steps: s.cc.Steps, Rates: s.cc.Rates, Refine: s.cc.Refine, FloorMultiple: s.cc.FloorMultiple,
		ProbeCallers: s.cc.ProbeCallers, Overload: s.cc.Overload, Recover: s.cc.Recover, Policies: s.cc.Policies}
	ladders := map[string][]int{}
	for _, wl := range s.cfg.Workloads {
		if s.cc.Rates != nil {
			ladders[wl.Name] = s.cc.Rates
			continue
		}
		ceiling, err := s.probe(ctx, wl)
		if err != nil {
			return err
		}
		ladders[wl.Name] = capacity.LadderRates(ceiling, s.cc.Steps)
	}
	if err := s.objective(ctx, ladders); err != nil {
		return err
	}
	for block := 1; block <= s.cfg.Reps; block++ {
		for _, wl := range s.cfg.Workloads {
			for _, drv := range s.cfg.Drivers {
				if err := s.search(ctx, wl, drv, block, ladders[wl.Name]); err != nil {
					return err
				}
			}
		}
	}
	if s.cc.OverloadFor <= 0 {
		return nil
	}
	// The overload phase in every block, at rates fixed by the search over
	// all of them, so that its figures have intervals.
	for block := 1; block <= s.cfg.Reps; block++ {
		for _, wl := range s.cfg.Workloads {
			if err := s.overload(ctx, wl, s.cfg.Drivers[0], block); err != nil {
				return err
			}
		}
	}
	return nil
}

// modes are the study's modes that can serve the workload.
func (s *study) modes(wl plan.Workload) []string {
	var out []string
	for _, m := range s.cfg.Modes {
		if _, na := plan.NAFor(s.na, wl.Name, m, plan.DefaultPoint()); !na {
			out = append(out, m)
		}
	}
	return out
}

// spec is a run of the study, numbered in the order it runs.
func (s *study) spec(phase string, wl plan.Workload, drv, mode, model string, level, block int) plan.Spec {
	idx := len(s.runs) + 1
	sp := plan.Spec{Index: idx, Workload: wl.Name, Scenario: wl.Scenario, Driver: drv, Factors: s.cfg.Factors.Points()[0].ForWorkload(wl.Kind),
		Mode: mode, Model: model, Level: level, Rep: block}
	sp.ID = fmt.Sprintf("%03d-%s-%s-%s-%s-%s%d-b%d", idx, phase, wl.Name, drv, mode, plan.LevelUnit(model), level, block)
	return sp
}

// cellRun is one run of a cell, its spec made when it starts (its index
// is its place in the order the runs ran).
type cellRun struct {
	phase, mode string
	rate        int
}

// gated runs a cell of the search — the runs that are compared with each
// other in a block — through the validity gate (docs/validity.md): a cell
// with a run that something else took more than -max-foreign of the CPUs
// from runs again, every run, in the same order, up to -reruns more times.
// Every attempt is kept; it returns the last attempt's records and, when
// that one was spoiled too, why.
func (s *study) gated(ctx context.Context, wl plan.Workload, drv string, block int, cell []cellRun) ([]*record.Run, string, error) {
	s.rec.Gate.Cells++
	for attempt := 1; ; attempt++ {
		var recs []*record.Run
		var why []string
		for _, c := range cell {
			sp := s.spec(c.phase, wl, drv, c.mode, "open", c.rate, block)
			if attempt > 1 {
				sp.Attempt, sp.ID = attempt, sp.ID+fmt.Sprintf("-try%d", attempt)
			}
			rec, err := s.do(ctx, sp)
			if err != nil {
				return nil, "", err
			}
			recs = append(recs, rec)
			if w := s.cfg.Gate.Spoils(rec); w != "" {
				why = append(why, rec.ID+": "+w)
				s.rec.Gate.SpoiledRuns++
			}
		}
		if len(why) == 0 {
			return recs, "", nil
		}
		if attempt == 1 {
			s.rec.Gate.Rerun++
		}
		if attempt > s.cfg.Gate.Reruns {
			s.rec.Gate.Dropped++
			fmt.Fprintf(s.out, "gate: block %d's cell dropped after %d attempts (%s)\n", block, attempt, strings.Join(why, "; "))
			return recs, strings.Join(why, "; "), nil
		}
		fmt.Fprintf(s.out, "gate: block %d's cell runs again (%s)\n", block, strings.Join(why, "; "))
	}
}

// do runs one spec and keeps its record.
func (s *study) do(ctx context.Context, spec plan.Spec) (*record.Run, error) {
	rec, err := run.RunOne(ctx, s.cfg, s.p, spec, s.runsDir)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", spec.ID, err)
	}
	return rec, s.keep(rec)
}

func (s *study) keep(rec *record.Run) error {
	if err := record.WriteJSON(filepath.Join(s.runsDir, rec.ID+".json"), rec); err != nil {
		return err
	}
	s.runs = append(s.runs, rec)
	fmt.Fprintf(s.out, "[%d] %s\n        %s | elapsed %s\n", len(s.runs), rec.ID, run.Headline(rec), time.Since(s.start).Round(time.Second))
	return nil
}

// probe measures the noop server's ceiling for a workload: a closed-model
// run at many callers on the same CPU split, with the first driver.
func (s *study) probe(ctx context.Context, wl plan.Workload) (float64, error) {
	drv := s.cfg.Drivers[0]
	rec, err := s.do(ctx, s.spec("probe", wl, drv, report.Noop, "closed", s.cc.ProbeCallers, 0))
	if err != nil {
		return 0, err
	}
	c := rec.Result.CallsPerS
	if rec.Failed() || !(c >= 1) {
		return 0, fmt.Errorf("probe %s: the %s server's ceiling could not be measured (%.0f calls/s, problems %v)", rec.ID, report.Noop, c, rec.Problems)
	}
	s.rec.Ceilings = append(s.rec.Ceilings, capacity.Ceiling{Workload: wl.Name, Driver: drv, CallsPerS: c, RunID: rec.ID})
	return c, nil
}

// objective settles the study's objective before the search: the one
// given, or FloorMultiple times the highest of the noop server's p99 over
// the workloads, each measured in the open model at the workload's lowest
// ladder rate — the floor every design's latency stands on.
func (s *study) objective(ctx context.Context, ladders map[string][]int) error {
	if s.cc.FloorMultiple > 0 {
		var floor float64
		for _, wl := range s.cfg.Workloads {
			drv := s.cfg.Drivers[0]
			rate := ladders[wl.Name][0]
			recs, spoiled, err := s.gated(ctx, wl, drv, 0, []cellRun{{"floor", report.Noop, rate}})
			if err != nil {
				return err
			}
			rec := recs[0]
			if spoiled != "" {
				fmt.Fprintf(s.out, "warning: the floor of %s was measured beside something else every time (%s); the objective is set from it all the same\n", wl.Name, spoiled)
			}
			if rec.Failed() || rec.Result == nil || !(rec.Result.LatencyMs.P99 > 0) {
				return fmt.Errorf("floor %s: the %s server's p99 at %d calls/s could not be measured (problems %v)", rec.ID, report.Noop, rate, rec.Problems)
			}
			p99 := rec.Result.LatencyMs.P99
			s.rec.Floors = append(s.rec.Floors, capacity.Floor{Workload: wl.Name, Driver: drv, Rate: rate, P99Ms: p99, RunID: rec.ID, Spoiled: spoiled})
			floor = math.Max(floor, p99)
		}
		s.cc.SLO = capacity.FloorObjective(floor, s.cc.FloorMultiple)
		if s.cc.SLO.Latency > capacity.MaxSLOLatency {
			return fmt.Errorf("the %s server's floor is a p99 of %s ms: %s× it is over the %s an objective may bound; the machine is too busy to measure here, or give -slo",
				report.Noop, plan.FormatFloat(math.Round(floor)), plan.FormatFloat(s.cc.FloorMultiple), capacity.MaxSLOLatency)
		}
		fmt.Fprintf(s.out, "objective: %s (%s× the floor's p99 of %s ms)\n", s.cc.SLO, plan.FormatFloat(s.cc.FloorMultiple), plan.FormatFloat(math.Round(floor*1000)/1000))
	}
	s.rec.SLO = s.cc.SLO.String()
	if s.objectiveSet != nil {
		return s.objectiveSet()
	}
	return nil
}

// search runs one block of one workload and driver: the ladder, every
// design at each rate in the block's order, then Refine bisection steps,
// each one every design at the midpoint of its own bracket; and records
// each design's knee in the block.
func (s *study) search(ctx context.Context, wl plan.Workload, drv string, block int, ladder []int) error {
	modes := s.modes(wl)
	probes := map[string][]capacity.Probe{}
	// try runs a cell; a cell the gate dropped is recorded, not judged.
	try := func(cell []cellRun) error {
		recs, spoiled, err := s.gated(ctx, wl, drv, block, cell)
		if err != nil {
			return err
		}
		for i, rec := range recs {
			pt := capacity.Judge(s.cc.SLO, rec)
			pt.Phase, pt.Spoiled = cell[i].phase, spoiled
			s.rec.Points = append(s.rec.Points, pt)
			if spoiled == "" {
				probes[rec.Mode] = append(probes[rec.Mode], capacity.Probe{Rate: rec.Level, Pass: pt.Pass})
			}
		}
		return nil
	}
	order := paired.Order(s.cfg.Seed, block, modes)
	for _, rate := range ladder {
		// Every design at the rate is one cell: the latency comparison
		// at fixed rates pairs them.
		var cell []cellRun
		for _, m := range order {
			cell = append(cell, cellRun{"ladder", m, rate})
		}
		if err := try(cell); err != nil {
			return err
		}
	}
	for step := 1; step <= s.cc.Refine; step++ {
		// A stream of orders of its own per step, so that no design is
		// always refined first. A refinement is a design's own: its own
		// cell.
		for _, m := range paired.Order(s.cfg.Seed, block*100+step, modes) {
			if rate, ok := capacity.FindKnee(probes[m]).Next(); ok {
				if err := try([]cellRun{{"refine", m, rate}}); err != nil {
					return err
				}
			}
		}
	}
	for _, m := range modes {
		k := capacity.FindKnee(probes[m])
		s.rec.Knees = append(s.rec.Knees, capacity.CapKnee{Workload: wl.Name, Driver: drv, Mode: m, Block: block,
			State: k.State.String(), Found: k.State == capacity.KneeFound, Rate: k.Rate, Fail: k.Fail})
	}
	return nil
}

// bestCapacity is the highest median capacity over the blocks among the
// store-backed designs of a workload and driver; a design whose knee lay
// above the ladder counts at the ladder's top. 0 when none was found.
func (s *study) bestCapacity(wl, drv string) float64 {
	var best float64
	for _, m := range s.cfg.Modes {
		if m == report.Noop {
			continue
		}
		var caps []float64
		for _, k := range s.rec.Knees {
			if k.Workload == wl && k.Driver == drv && k.Mode == m && (k.Found || k.State == capacity.KneeAbove.String()) {
				caps = append(caps, float64(k.Rate))
			}
		}
		if len(caps) > 0 {
			slices.Sort(caps)
			best = math.Max(best, caps[len(caps)/2])
		}
	}
	return best
}

// overload drives every store-backed design under every admission policy
// past the best design's capacity, then back below it: one block, each
// policy's designs in the block's own order. Each design under each policy
// goes through the validity gate on its own.
func (s *study) overload(ctx context.Context, wl plan.Workload, drv string, block int) error {
	best := s.bestCapacity(wl.Name, drv)
	if best == 0 {
		if block == 1 {
			fmt.Fprintf(s.out, "overload: %s: no design's capacity was found; no overload phase\n", wl.Name)
		}
		return nil
	}
	bound := capacity.AdmissionBound(best, s.cc.SLO.Latency)
	rate, recRate := int(math.Round(s.cc.Overload*best)), max(1, int(math.Round(s.cc.Recover*best)))
	var modes []string
	for _, m := range s.modes(wl) {
		if m != report.Noop {
			modes = append(modes, m)
		}
	}
	for i, name := range s.cc.Policies {
		pol, _ := capacity.LookupPolicy(name)
		for _, m := range paired.Order(s.cfg.Seed, 10_000*block+i, modes) {
			base := capacity.OverloadRun{Workload: wl.Name, Driver: drv, Mode: m, Policy: name, Block: block, Capacity: int(best), Rate: rate, RecoverRate: recRate}
			if name != capacity.Policies[0].Name {
				base.Bound = bound
			}
			if ok, why := pol.Serves(m); !ok {
				if block == 1 {
					base.NA = why
					s.rec.Overruns = append(s.rec.Overruns, base)
				}
				continue
			}
			s.rec.Gate.Cells++
			for attempt := 1; ; attempt++ {
				or := base
				or.Attempt = attempt
				runs, err := s.overloadOne(ctx, wl, &or, pol.Server(bound))
				if err != nil {
					return err
				}
				var why []string
				for _, r := range runs {
					if w := s.cfg.Gate.Spoils(r); w != "" {
						why = append(why, r.ID+": "+w)
						s.rec.Gate.SpoiledRuns++
					}
				}
				or.Spoiled = strings.Join(why, "; ")
				s.rec.Overruns = append(s.rec.Overruns, or)
				if len(why) == 0 {
					break
				}
				if attempt == 1 {
					s.rec.Gate.Rerun++
				}
				if attempt > s.cfg.Gate.Reruns {
					s.rec.Gate.Dropped++
					fmt.Fprintf(s.out, "gate: block %d's overload of %s under %s dropped after %d attempts (%s)\n", block, m, name, attempt, or.Spoiled)
					break
				}
				fmt.Fprintf(s.out, "gate: block %d's overload of %s under %s runs again (%s)\n", block, m, name, or.Spoiled)
			}
		}
	}
	return nil
}

// overloadOne is one design under one policy: a fresh server with the
// policy's flags, a warm-up at capacity (its RSS is the base), the reset,
// the overload phase and the phase after it back to back while the
// server's RSS and goroutines are sampled, the invariants over both, and
// the time until the phase after it met the objective's latency again.
func (s *study) overloadOne(ctx context.Context, wl plan.Workload, or *capacity.OverloadRun, policyArgs []string) ([]*record.Run, error) {
	runs, err := s.overloadRuns(ctx, wl, or, policyArgs)
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		if err := s.keep(r); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// overloadRuns runs overloadOne's phases and returns their records.
func (s *study) overloadRuns(ctx context.Context, wl plan.Workload, or *capacity.OverloadRun, policyArgs []string) ([]*record.Run, error) {
	d, ok := run.LookupDriver(or.Driver)
	if !ok {
		return nil, fmt.Errorf("no driver %q", or.Driver)
	}
	try := ""
	if or.Attempt > 1 {
		try = fmt.Sprintf("-try%d", or.Attempt)
	}
	spec := s.spec("overload-"+or.Policy, wl, or.Driver, or.Mode, "open", or.Rate, or.Block)
	spec.Attempt, spec.ID = or.Attempt, spec.ID+try
	recSpec := spec
	recSpec.Index, recSpec.Level = spec.Index+1, or.RecoverRate
	recSpec.ID = fmt.Sprintf("%03d-recover-%s-%s-%s-%s-rate%d-b%d%s", recSpec.Index, or.Policy, wl.Name, or.Driver, or.Mode, or.RecoverRate, or.Block, try)
	or.RunID, or.RecoverID = spec.ID, recSpec.ID
	scratch, err := os.MkdirTemp("", "locklab-run-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	dataDir := filepath.Join(scratch, "data")
	if err := os.Mkdir(dataDir, 0o700); err != nil {
		return nil, err
	}
	srv, place, err := run.StartServer(s.cfg, s.p, spec, dataDir, policyArgs, filepath.Join(s.runsDir, spec.ID+".server.log"))
	if err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			srv.Stop()
		}
	}()
	conn, err := grpc.NewClient(srv.Address(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	admin := locklabv1.NewAdminServiceClient(conn)

	over := &record.Run{Spec: spec, Started: time.Now().UTC()}
	after := &record.Run{Spec: recSpec}
	job := run.Job{Spec: spec, Addr: srv.Address(), Scratch: scratch, Place: place}
	if s.cfg.Warmup > 0 {
		w := job
		w.Spec.Level = or.Capacity
		w.Warmup, w.Duration = true, run.WarmupFor(s.cfg, d)
		w.Summary = filepath.Join(scratch, "warmup.json")
		w.Log = filepath.Join(s.runsDir, spec.ID+".warmup.log")
		if _, _, err := s.p.Drive(ctx, s.cfg, d, w, 0); err != nil {
			return nil, fmt.Errorf("run %s: warm-up: %w", spec.ID, err)
		}
	}
	base, err := admin.GetStats(ctx, &locklabv1.GetStatsRequest{})
	if err != nil {
		return nil, fmt.Errorf("run %s: stats after the warm-up: %w", spec.ID, err)
	}
	or.BaseRSS = base.GetRssBytes()
	if _, err := admin.Reset(ctx, run.ResetRequest(spec)); err != nil {
		return nil, fmt.Errorf("run %s: reset: %w", spec.ID, err)
	}
	before, err := admin.GetStats(ctx, &locklabv1.GetStatsRequest{})
	if err != nil {
		return nil, fmt.Errorf("run %s: stats before: %w", spec.ID, err)
	}
	samples := sampleServer(ctx, admin)
	job.Duration = s.cc.OverloadFor
	job.Summary = filepath.Join(s.runsDir, spec.ID+record.SummarySuffix)
	job.Log = filepath.Join(s.runsDir, spec.ID+"."+d.Name()+".log")
	res, dr, err := s.p.Drive(ctx, s.cfg, d, job, srv.PID())
	if err != nil {
		samples.stop()
		return nil, fmt.Errorf("run %s: %w", spec.ID, err)
	}
	fill(over, res, dr)
	rj := job
	rj.Spec, rj.Duration, rj.Timeline = recSpec, s.cc.RecoverFor, recoveryInterval
	rj.Summary = filepath.Join(s.runsDir, recSpec.ID+record.SummarySuffix)
	rj.Log = filepath.Join(s.runsDir, recSpec.ID+"."+d.Name()+".log")
	rres, rrun, err := s.p.Drive(ctx, s.cfg, d, rj, srv.PID())
	points := samples.stop()
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", recSpec.ID, err)
	}
	fill(after, rres, rrun)
	after.Started = over.Started
	for _, p := range points {
		or.PeakRSS, or.PeakGoroutines = max(or.PeakRSS, p.RSS), max(or.PeakGoroutines, p.Goroutines)
	}
	or.Samples = points
	or.RecoveryS, or.Recovered = capacity.Recovery(s.cc.SLO, rres)

	last, err := admin.GetStats(ctx, &locklabv1.GetStatsRequest{})
	if err != nil {
		return nil, fmt.Errorf("run %s: stats after: %w", spec.ID, err)
	}
	asJSON := protojson.MarshalOptions{EmitUnpopulated: true}
	for _, r := range []*record.Run{over, after} {
		if r.StatsBefore, err = asJSON.Marshal(before); err != nil {
			return nil, err
		}
		if r.Stats, err = asJSON.Marshal(last); err != nil {
			return nil, err
		}
	}
	stopped = true
	exit, took := srv.Stop()
	over.ServerExit, over.StopSeconds = exit, took.Seconds()
	if exit != 0 {
		over.Problems = append(over.Problems, fmt.Sprintf("server exited %d after SIGTERM, want 0", exit))
	}
	// The invariants hold over both phases: one server, one state.
	both := *res
	both.AckedIncrementDelta += rres.AckedIncrementDelta
	both.AckedTransfers += rres.AckedTransfers
	both.UnexpectedErrors += rres.UnexpectedErrors
	over.Checks = run.CheckInvariants(spec, &both, before, last)
	for _, c := range over.Checks {
		if !c.OK {
			over.Problems = append(over.Problems, "INVARIANT VIOLATED: "+c.Name+": "+c.Detail)
		}
	}
	for _, r := range []*record.Run{over, after} {
		if r.Derived, err = record.Derive(r); err != nil {
			return nil, err
		}
	}
	return []*record.Run{over, after}, nil
}

func fill(r *record.Run, res *summary.Summary, dr run.DriverRun) {
	r.Result, r.DriverExit, r.DriverProc, r.ServerProc, r.BackendProc, r.RunnerProc = res, dr.ExitCode, dr.Driver, dr.Server, dr.Backend, dr.Runner
	r.ServerSet, r.DriverSet = dr.ServerSet, dr.DriverSet
}

// sampler reads the server's RSS and goroutines from GetStats until
// stopped.
type sampler struct {
	done   chan struct{}
	wg     sync.WaitGroup
	points []capacity.ProcPoint
}

func sampleServer(ctx context.Context, admin locklabv1.AdminServiceClient) *sampler {
	s := &sampler{done: make(chan struct{})}
	start := time.Now()
	s.wg.Go(func() {
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		for {
			st, err := admin.GetStats(ctx, &locklabv1.GetStatsRequest{})
			if err == nil {
				s.points = append(s.points, capacity.ProcPoint{T: time.Since(start).Seconds(), RSS: st.GetRssBytes(), Goroutines: st.GetGoroutines()})
			}
			select {
			case <-s.done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	return s
}

// stop ends the sampling and returns the samples.
func (s *sampler) stop() []capacity.ProcPoint {
	close(s.done)
	s.wg.Wait()
	return s.points
}
