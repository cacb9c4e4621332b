package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/render"
	"github.com/locklab/locklab/internal/lab/report"
)

// ErrRunsFailed is returned when the report was written but a run broke an
// invariant or failed: the comparison must not pass silently.
var ErrRunsFailed = errors.New("some runs failed; see Problems in the report")

// Compare runs the comparison and writes its results directory: every run's
// record as it finishes, then the report. Progress goes to out, warnings
// about the plan to warn.
func Compare(ctx context.Context, cfg Config, out, warn io.Writer) error {
	if cfg.Measure == MeasureDuet {
		if why := DuetApplies(cfg); why == "" {
			return RunDuet(ctx, cfg, out, warn)
		} else {
			fmt.Fprintf(out, "measure: isolated runs, not side by side: %s\n", why)
		}
	}
	cfg, cat, err := prepare(cfg)
	if err != nil {
		return err
	}
	if cfg.Out == "" {
		cfg.Out = filepath.Join("results", time.Now().UTC().Format("20060102-150405"))
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return err
	}
	release, err := labLock(ctx, lockPath(), out)
	if err != nil {
		return err
	}
	defer release()
	meta := newMeta(cfg, plan.NACells(cfg.Config, cat))
	// Written now too, so that -rerender works on an interrupted run.
	if err := record.WriteJSON(filepath.Join(cfg.Out, "meta.json"), meta); err != nil {
		return err
	}
	specs := plan.Layout(cfg.Config, cat, Serves)
	if len(specs) == 0 {
		return errors.New("nothing to run: no mode serves these workloads under these factors (see meta.json, not_applicable)")
	}
	fmt.Fprintf(out, "locklab compare: %d runs (%s × %s; drivers %s; %d blocks, seed %d), %s each after a %s warm-up, about %s; results in %s\n",
		len(specs), strings.Join(meta.Workloads, ","), strings.Join(cfg.Modes, ","), strings.Join(cfg.Drivers, ","), cfg.Reps, cfg.Seed,
		cfg.Duration, cfg.Warmup, PlanDuration(cfg, specs).Round(time.Second), cfg.Out)
	if w := PowerWarning(cfg, specs); w != "" {
		fmt.Fprintln(warn, "warning:", w)
	}
	for _, v := range cfg.Factors.Values(plan.ServerCPUs) {
		p, _ := cfg.placement(plan.DefaultPoint().With(plan.ServerCPUs, v)) // NewConfig checked it
		switch {
		case len(p.Server) == 0:
			fmt.Fprintln(out, "CPU isolation: off (one CPU, or -pin=false): server and driver share the machine")
		case p.Shared:
			fmt.Fprintf(out, "CPU isolation (server CPUs %s): server on CPU %s, driver on CPU %s, shared (-share-cpus)\n", v, plan.CPUList(p.Server), plan.CPUList(p.Driver))
		default:
			fmt.Fprintf(out, "CPU isolation (server CPUs %s): server on CPU %s, driver on CPU %s\n", v, plan.CPUList(p.Server), plan.CPUList(p.Driver))
		}
	}
	if rts := cfg.Factors.Values(plan.Runtime); len(rts) > 1 || rts[0] != plan.RuntimeLocal {
		for _, b := range cfg.Builds {
			fmt.Fprintf(out, "runtime %s: %s (%s)\n", b.Runtime, b.Binary, b.Version())
		}
	}
	for _, na := range meta.NA {
		fmt.Fprintf(out, "n/a: %s × %s: %s\n", na.Workload, na.Mode, na.Reason)
	}
	checkQuiet(ctx, cfg, meta.Gate, out, warn)
	p := processes{}
	runs, runErr := runPlan(ctx, cfg, p, specs, out)
	if runErr == nil && cfg.Gate.Precision > 0 {
		var more []*record.Run
		more, runErr = secondStage(ctx, cfg, p, cat, &meta, specs, runs, out)
		runs = append(runs, more...)
	}
	meta.Finished = time.Now().UTC()
	if err := record.WriteJSON(filepath.Join(cfg.Out, "meta.json"), meta); err != nil {
		return err
	}
	if len(runs) == 0 {
		return runErr
	}
	if err := render.Lab.Write(cfg.Out, meta, runs); err != nil {
		return err
	}
	fmt.Fprintf(out, "report: %s\n        %s\n", filepath.Join(cfg.Out, "report.md"), filepath.Join(cfg.Out, "report.html"))
	if runErr != nil {
		return fmt.Errorf("stopped after %d of %d runs (the report covers those): %w", len(runs), len(specs), runErr)
	}
	if slices.ContainsFunc(runs, (*record.Run).Failed) {
		return ErrRunsFailed
	}
	return nil
}

// PowerWarning says, before any run, when the plan's blocks are too few
// for the report to judge any primary comparison (paired.MinBlocksRobust);
// "" when they suffice or the plan compares nothing.
func PowerWarning(cfg Config, specs []plan.Spec) string {
	family := report.Family(specs, cfg.Baseline)
	if family == 0 || cfg.Reps >= paired.MinBlocksRobust {
		return ""
	}
	return fmt.Sprintf("-reps %d: the report will judge %d primary comparisons, and the trimmed-mean analysis needs at least %d clean blocks "+
		"for any verdict; every one will read \"too few blocks\" (use -reps %d or more)",
		cfg.Reps, family, paired.MinBlocksRobust, paired.MinBlocksRobust)
}

// Preflight checks, running no run, what Compare checks before its first:
// the servers of every -runtime value build, and the binaries, the
// scripts, the modes and the server's flags are there.
func Preflight(cfg Config) error {
	_, _, err := prepare(cfg)
	return err
}

// PlanDuration estimates how long the plan takes on a 2-CPU machine: each
// run's warm-up and measured window, about 0.1 s to start and stop its server
// and drivers (and dbStartup more over a database), and the time its two driver processes take to open their
// connections (measured: about 1.5 ms a connection, so 3 s for two processes
// of 1000 callers each), and an attributed run's profile past its window.
func PlanDuration(cfg Config, specs []plan.Spec) time.Duration {
	var total time.Duration
	for _, s := range specs {
		conns := s.Level
		d, _ := LookupDriver(s.Driver)
		c, own := d.(connector)
		switch {
		case s.Model == "open":
			conns = cfg.MaxVUs
		case own:
			conns = c.Conns(cfg, s.Level)
		case cfg.Conns > 0:
			conns = min(conns, cfg.Conns)
		}
		total += warmupFor(cfg, d) + cfg.Duration + 100*time.Millisecond + time.Duration(2*conns)*1500*time.Microsecond + attributionWait(cfg, s) + ledgerWait(s)
		if plan.OverDatabase(s.Factors.Get(plan.Backend)) {
			total += dbStartup
		}
	}
	return total
}

// minDurationer is a driver that cannot run for less than MinDuration.
type minDurationer interface{ MinDuration() time.Duration }

// warmupFor is how long a run's warm-up lasts with driver d: -warmup, or
// the driver's shortest run where -warmup is shorter; none with -warmup 0.
func warmupFor(cfg Config, d Driver) time.Duration {
	if m, ok := d.(minDurationer); ok && cfg.Warmup > 0 {
		return max(cfg.Warmup, m.MinDuration())
	}
	return cfg.Warmup
}

// dbStartup is what a run over a database adds: its server makes a private
// MariaDB's data directory, starts it, seeds the bank and stops it again.
const dbStartup = 2 * time.Second

// quietFor is how long the machine is watched before the first block.
const quietFor = time.Second

// runPlan runs every spec through the validity gate (runCells), writing
// each record as it finishes, and returns the records. Progress goes to
// out.
func runPlan(ctx context.Context, cfg Config, p procs, specs []plan.Spec, out io.Writer) ([]*record.Run, error) {
	runsDir := filepath.Join(cfg.Out, "runs")
	if err := os.MkdirAll(runsDir, 0o755); err != nil {
		return nil, err
	}
	var tally gateTally
	done := 0
	runs, err := runCells(ctx, cfg, p, specs, runsDir, out, &tally, time.Now(), len(specs), &done)
	fmt.Fprintf(out, "gate: %s\n", tally)
	return runs, err
}

// secondStage is -precision's one look: from the first stage's primary
// intervals it decides, once, how many blocks the plan needs in all
// (paired.PlanBlocks), bounded by -max-blocks and -time-budget, and runs
// the added blocks. The analysis then uses every block, with no further
// look, so that its intervals keep their coverage (docs/methodology.md).
func secondStage(ctx context.Context, cfg Config, p procs, cat plan.Catalog, meta *record.Meta, specs []plan.Spec, runs []*record.Run, out io.Writer) ([]*record.Run, error) {
	rep, err := report.New(*meta, runs)
	if err != nil {
		return nil, err
	}
	hw, ok := rep.WidestPrimary()
	if !ok {
		fmt.Fprintln(out, "precision: no primary comparison to size; no block added")
		return nil, nil
	}
	total := paired.PlanBlocks(cfg.Reps, hw, cfg.Gate.Precision, cfg.Gate.MaxBlocks)
	if cfg.TimeBudget > 0 {
		perBlock := time.Since(meta.Started) / time.Duration(cfg.Reps)
		if left := cfg.TimeBudget - time.Since(meta.Started); perBlock > 0 {
			total = min(total, cfg.Reps+max(0, int(left/perBlock)))
		}
	}
	if total <= cfg.Reps {
		fmt.Fprintf(out, "precision: the widest primary interval is ±%.1f%% (target ±%.1f%%): no block added\n", 100*hw, 100*cfg.Gate.Precision)
		return nil, nil
	}
	fmt.Fprintf(out, "precision: the widest primary interval is ±%.1f%% (target ±%.1f%%): %d blocks in all, %d more\n", 100*hw, 100*cfg.Gate.Precision, total, total-cfg.Reps)
	more := cfg
	more.Reps = total
	added := addedReps(plan.Layout(more.Config, cat, Serves), cfg.Reps, total, len(specs)+1)
	meta.Gate.Added, meta.Reps = total-cfg.Reps, total
	return runPlan(ctx, cfg, p, added, out)
}

func headline(r *record.Run) string {
	s := fmt.Sprintf("%s, server %.0f%% of %d CPU, %s %.0f%% of %d CPU: %s",
		report.Headline(r.Derived.CallsPerSec, r.Result.LatencyMs.P50, r.Result.LatencyMs.P99),
		r.Derived.ServerUtil*100, cpuCount(r.ServerProc, r.Derived.CPUs), r.Driver, r.Derived.DriverUtil*100, cpuCount(r.DriverProc, r.Derived.CPUs), r.Derived.Class)
	if r.Failed() {
		s += fmt.Sprintf(", FAILED: %v", r.Problems)
	}
	return s
}

func cpuCount(u record.ProcUsage, machine int) int {
	if len(u.CPUs) > 0 {
		return len(u.CPUs)
	}
	return machine
}

// Catalog asks the server binary what it can run: -list-modes unasked, and
// under the server arguments of every factor value swept that has any, so
// that the server, not a copy of its registry here, says which cells are
// n/a.
func Catalog(bin string, sp plan.Space) (plan.Catalog, error) {
	cat := plan.Catalog{Under: map[string]plan.ModeList{}}
	var err error
	if cat.Base, err = listModes(bin); err != nil {
		return cat, err
	}
	for i, f := range plan.Factors {
		if f.Server == nil || i >= len(sp) {
			continue
		}
		for _, v := range sp[i] {
			args := f.Server(v, plan.RunDirs{Data: os.TempDir()}) // -list-modes creates nothing
			ml, err := listModes(bin, args...)
			if err != nil {
				return cat, fmt.Errorf("-%s %s: %w", f.Name, v, err)
			}
			cat.Under[plan.CatalogKey(f.Name, v)] = ml
		}
	}
	return cat, nil
}

// listModes runs the server's -list-modes: one mode a line, its name first,
// then the workloads it serves under the flags given.
func listModes(bin string, args ...string) (plan.ModeList, error) {
	out, err := exec.Command(bin, append([]string{"-list-modes"}, args...)...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("%s -list-modes %s: %w: %s", bin, strings.Join(args, " "), err, firstLine(string(ee.Stderr)))
		}
		return nil, fmt.Errorf("%s not found: run `make build` first, or `make compare` (%w)", bin, err)
	}
	ml := plan.ParseModeList(string(out))
	if len(ml) == 0 {
		return nil, fmt.Errorf("%s -list-modes listed no mode", bin)
	}
	return ml, nil
}

// preflight fails fast, before any run, on a missing binary, script, mode
// or server flag.
func preflight(cfg Config, cat plan.Catalog) error {
	type bin struct{ path, hint string }
	var bins []bin
	for _, name := range cfg.Drivers {
		d, _ := LookupDriver(name)
		path, hint := d.Binary(cfg)
		bins = append(bins, bin{path, hint})
		if name == "k6" {
			for _, w := range cfg.Workloads {
				if _, err := os.Stat(filepath.Join(cfg.Scripts, w.Script)); err != nil {
					return fmt.Errorf("workload %s: %w", w.Name, err)
				}
			}
		}
	}
	for _, v := range cfg.Factors.Values(plan.ServerCPUs) {
		if p, _ := cfg.placement(plan.DefaultPoint().With(plan.ServerCPUs, v)); len(p.Server) > 0 {
			bins = append(bins, bin{"taskset", "apt-get install util-linux"})
			break
		}
	}
	for _, b := range bins {
		if _, err := exec.LookPath(b.path); err != nil {
			return fmt.Errorf("%s not found: run `%s` first, or `make compare`", b.path, b.hint)
		}
	}
	if err := checkDrivers(cfg); err != nil {
		return err
	}
	modes := cat.Names()
	for _, m := range cfg.Modes {
		if !slices.Contains(modes, m) {
			return fmt.Errorf("-modes: unknown mode %q; %s serves: %s", m, cfg.Server, strings.Join(modes, ", "))
		}
	}
	if err := checkBaseline(cfg.Baseline, cfg.Modes); err != nil { // -modes all is known only now
		return err
	}
	if cfg.Profile != "" {
		specs := plan.Layout(cfg.Config, cat, Serves)
		if !slices.ContainsFunc(specs, func(s plan.Spec) bool { return isProfileRun(cfg.Profile, s) }) {
			return fmt.Errorf("-profile %q: no such run; give a run's number (1..%d) or id", cfg.Profile, len(specs))
		}
	}
	// Every flag a swept factor gives the server must be one it has.
	help, _ := exec.Command(cfg.Server, "-h").CombinedOutput()
	var need []string
	for _, pt := range cfg.Factors.Points() {
		need = append(need, pt.ServerArgs(plan.RunDirs{Data: os.TempDir()})...)
	}
	if cfg.Profile != "" || cfg.Factors.Attributes() || cfg.Factors.Ledgers() {
		need = append(need, "-metrics-addr")
	}
	for _, a := range need {
		if strings.HasPrefix(a, "-") && !strings.Contains(string(help), "  "+a+" ") {
			return fmt.Errorf("%s has no %s flag: build a server that has it (make build)", cfg.Server, a)
		}
	}
	return nil
}

// prepare builds the server of every -runtime value, asks the server
// binary what it can run under every swept factor value, expands -modes
// all from that answer, and checks the plan against it and the machine
// before anything runs: the prologue of every study.
func prepare(cfg Config) (Config, plan.Catalog, error) {
	var err error
	if cfg.Builds, err = buildRuntimes(cfg); err != nil {
		return cfg, plan.Catalog{}, err
	}
	cat, err := Catalog(cfg.Server, cfg.Factors)
	if err != nil {
		return cfg, cat, err
	}
	if cfg.AllModes {
		cfg.Modes = cat.Names()
	}
	return cfg, cat, preflight(cfg, cat)
}
