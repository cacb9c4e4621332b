package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/summary"
)

// Counted is one run of a fixed number of calls of one case, sent by ghz:
// how the bank and rpcx seeds ran theirs (500 transfers, 2000 balance
// reads, a million round trips), where a comparison runs for a duration.
// Spec names the run (its ID and Index), the workload, the mode and the
// concurrency (Level); Spec.Driver is ghz.
type Counted struct {
	plan.Spec
	Case  string // the workload's case; "": its first case ghz can send
	Total int    // calls in the measured run, > 0
}

// NewCountedConfig is the configuration of counted runs: the server binary,
// the results directory, the warm-up before each run (ghz for that long),
// the connections ghz spreads its workers over, and the runner's CPU split
// (pin: server and ghz on disjoint halves of the machine).
func NewCountedConfig(server, out string, warmup time.Duration, conns int, pin bool) (Config, error) {
	cfg := Config{Server: server, Out: out, Warmup: warmup, Conns: conns, Duration: time.Second}
	cfg.Model, cfg.Drivers, cfg.Reps = "closed", []string{"ghz"}, 1
	if warmup < 0 {
		return Config{}, fmt.Errorf("warm-up %v: want 0 or more", warmup)
	}
	if conns < 0 || conns > 5000 {
		return Config{}, fmt.Errorf("connections %d: want 0..5000", conns)
	}
	var err error
	cfg.NumCPU = runtime.NumCPU()
	cfg.ServerCPUs, cfg.DriverCPUs, err = CPUSets(pin, "", cfg.NumCPU)
	return cfg, err
}

// RunCounted runs each counted run as a comparison runs one of its own — a
// fresh server, the warm-up, the reset to the workload's scenario, both
// processes' CPU over the measured calls, the invariants, the class — and
// writes meta.json and every record under cfg.Out, which record.Load reads
// back. Progress goes to out. The preflight (binaries, ghz's version, the
// modes) fails before any run.
func RunCounted(ctx context.Context, cfg Config, runs []Counted, out io.Writer) ([]*record.Run, error) {
	if err := countedPreflight(cfg, runs); err != nil {
		return nil, err
	}
	return runCounted(ctx, cfg, processes{}, runs, out)
}

// CountedDuration estimates a counted run's fixed costs as PlanDuration does
// a comparison's: its warm-up, starting and stopping its server and ghz,
// ghz's connections, and over a database its private MariaDB's start. The
// time its calls take is the caller's to add: it depends on their rate.
func CountedDuration(cfg Config, c Counted) time.Duration {
	conns := c.Level
	if cfg.Conns > 0 {
		conns = min(conns, cfg.Conns)
	}
	d := cfg.Warmup + 100*time.Millisecond + time.Duration(2*conns)*1500*time.Microsecond
	if plan.OverDatabase(c.Factors.Get(plan.Backend)) {
		d += dbStartup
	}
	return d
}

func countedPreflight(cfg Config, runs []Counted) error {
	if len(runs) == 0 {
		return errors.New("no counted run")
	}
	// What the server serves under each run's flags (db-rowlock only over
	// a database), asked once per distinct set of flags.
	lists := map[string]plan.ModeList{}
	ids := map[string]bool{}
	for _, r := range runs {
		args := r.Factors.ServerArgs(plan.RunDirs{Data: os.TempDir()}) // -list-modes creates nothing
		key := strings.Join(args, " ")
		ml, asked := lists[key]
		if !asked {
			var err error
			if ml, err = listModes(cfg.Server, args...); err != nil {
				return err
			}
			lists[key] = ml
		}
		under := ""
		if key != "" {
			under = " under " + key
		}
		switch {
		case r.Driver != "ghz":
			return fmt.Errorf("run %s: counted runs are ghz's, not %q", r.ID, r.Driver)
		case r.Total < 1:
			return fmt.Errorf("run %s: %d calls: want at least 1", r.ID, r.Total)
		case r.Level < 1:
			return fmt.Errorf("run %s: concurrency %d: want at least 1", r.ID, r.Level)
		case ids[r.ID] || r.ID == "":
			return fmt.Errorf("run %q: every run needs its own id", r.ID)
		case !slices.Contains(ml.Names(), r.Mode):
			return fmt.Errorf("run %s: unknown mode %q; %s serves%s: %s", r.ID, r.Mode, cfg.Server, under, strings.Join(ml.Names(), ", "))
		}
		if _, ok := plan.LookupWorkload(r.Workload); !ok {
			return fmt.Errorf("run %s: unknown workload %q", r.ID, r.Workload)
		}
		ids[r.ID] = true
	}
	if len(cfg.ServerCPUs) > 0 {
		if err := preflightBinary("taskset", "apt-get install util-linux"); err != nil {
			return err
		}
	}
	path, hint := ghzDriver{}.Binary(cfg)
	if err := preflightBinary(path, hint); err != nil {
		return err
	}
	return ghzDriver{}.Check(cfg)
}

func preflightBinary(path, hint string) error {
	if _, err := exec.LookPath(path); err != nil {
		return fmt.Errorf("%s not found: run `%s` first", path, hint)
	}
	return nil
}

func runCounted(ctx context.Context, cfg Config, p procs, runs []Counted, out io.Writer) ([]*record.Run, error) {
	runsDir := filepath.Join(cfg.Out, "runs")
	if err := os.MkdirAll(runsDir, 0o755); err != nil {
		return nil, err
	}
	if cfg.Factors == nil {
		// The factors the runs take, so that meta.json says them and
		// the versions of the database and cache they start.
		var pts []plan.Point
		for _, r := range runs {
			pts = append(pts, r.Factors)
		}
		cfg.Factors = plan.SpaceOf(pts)
	}
	meta := newMeta(cfg, nil)
	for _, r := range runs {
		if !slices.Contains(meta.Modes, r.Mode) {
			meta.Modes = append(meta.Modes, r.Mode)
		}
		if !slices.Contains(meta.Workloads, r.Workload) {
			meta.Workloads = append(meta.Workloads, r.Workload)
		}
		if !slices.Contains(meta.Levels, r.Level) {
			meta.Levels = append(meta.Levels, r.Level)
		}
	}
	if err := record.WriteJSON(filepath.Join(cfg.Out, "meta.json"), meta); err != nil {
		return nil, err
	}
	var recs []*record.Run
	for i, r := range runs {
		rec, err := runOne(ctx, cfg, countedProcs{procs: p, d: ghzDriver{Case: r.Case, Total: r.Total}}, r.Spec, runsDir)
		if err != nil {
			return recs, fmt.Errorf("run %s: %w", r.ID, err)
		}
		if err := record.WriteJSON(filepath.Join(runsDir, r.ID+".json"), rec); err != nil {
			return recs, err
		}
		recs = append(recs, rec)
		fmt.Fprintf(out, "[%d/%d] %s: %d calls\n        %s\n", i+1, len(runs), r.ID, r.Total, headline(rec))
	}
	meta.Finished = time.Now().UTC()
	return recs, record.WriteJSON(filepath.Join(cfg.Out, "meta.json"), meta)
}

// countedProcs drives every job with its own ghz, which knows the case and
// the count, whatever driver the spec names.
type countedProcs struct {
	procs
	d Driver
}

func (p countedProcs) drive(ctx context.Context, cfg Config, _ Driver, job Job, serverPID int) (*summary.Summary, DriverRun, error) {
	return p.procs.drive(ctx, cfg, p.d, job, serverPID)
}
