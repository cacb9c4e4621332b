package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/locklab/locklab/internal/lab/capacity/runner"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/replicas"
	"github.com/locklab/locklab/internal/lab/run"
	"github.com/locklab/locklab/internal/lab/seeds"
	"github.com/locklab/locklab/internal/lab/study"
	"github.com/locklab/locklab/server"
	"github.com/locklab/locklab/server/serve"
)

// indexPage is the page whose index block `-study index` rewrites.
var indexPage = filepath.Join(study.Dir, "README.md")

// studyRun is -study NAME: one row of the catalogue, its plans parsed, or
// the catalogue listed or indexed.
type studyRun struct {
	catalogue []study.Study
	word      string      // list or index; "" a study
	row       study.Study // the study, when word is ""
	root      string      // the study's folder: the row's, or -out
	plans     []command   // the row's plans, parsed, each with its -out
	server    string      // the server binary, for the seeds step
}

// newStudyRun parses -study NAME: args are the whole command line, whose
// other flags are added to each of the row's plans. engine is "" on the
// command line; a study's plan may not name another study.
func newStudyRun(name string, args []string, engine study.Engine) (*studyRun, error) {
	return newStudyRunFrom(study.Studies, name, args, engine)
}

func newStudyRunFrom(catalogue []study.Study, name string, args []string, engine study.Engine) (*studyRun, error) {
	if engine != "" {
		return nil, errors.New("-study inside a study's plan: a plan names no other study")
	}
	if err := study.Check(catalogue); err != nil {
		return nil, err
	}
	extra := withoutStudyFlag(args)
	if slices.Contains(study.Reserved, name) {
		if len(extra) > 0 {
			return nil, fmt.Errorf("-study %s takes no other flag (%s)", name, strings.Join(extra, " "))
		}
		return &studyRun{catalogue: catalogue, word: name}, nil
	}
	row, err := study.Lookup(catalogue, name)
	if err != nil {
		return nil, fmt.Errorf("-study %q: want list, index or one of the studies:\n%s", name, listing(catalogue))
	}
	if len(row.Plans) == 0 {
		for _, a := range extra {
			if n := flagName(a); n != "" && !slices.Contains(binaryFlags, n) && n != "out" {
				return nil, fmt.Errorf("-study %s runs no plan of the runner, only cmd/seeds (%s): -%s does not apply", name, row.SeedArgs, n)
			}
		}
	}
	s := &studyRun{catalogue: catalogue, row: row, root: row.Root(), server: "bin/locklab"}
	if v, ok := flagValue(extra, "server"); ok {
		s.server = v
	}
	// -out puts the study's folder elsewhere (a scratch run), its plans in
	// their sub-folders there.
	if v, ok := flagValue(extra, "out"); ok {
		if v == "" {
			return nil, fmt.Errorf("-study %s -out: give a folder", name)
		}
		s.root, extra = v, withoutFlag(extra, "out")
	}
	for _, p := range row.Plans {
		engine := study.Runner
		if row.Engine == study.Capacity {
			engine = study.Capacity
		}
		planArgs := append(strings.Fields(p.Args), extra...)
		c, err := parseFlagsAs(append(planArgs, "-out", filepath.Join(s.root, p.Sub)), io.Discard, engine)
		if err != nil {
			return nil, fmt.Errorf("-study %s: plan %q with %q: %w", name, p.Args, strings.Join(extra, " "), err)
		}
		s.plans = append(s.plans, c)
	}
	return s, nil
}

// binaryFlags name the binaries and scripts the runner uses, which `make
// study` always gives, whether the study's engine runs them or not.
var binaryFlags = []string{"server", "k6", "load", "h2load", "scripts"}

// flagName is the name of the flag argument a: "study" for -study,
// --study and -study=x; "" for a value.
func flagName(a string) string {
	if !strings.HasPrefix(a, "-") {
		return ""
	}
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	return name
}

// flagValue is the last value args give the flag name.
func flagValue(args []string, name string) (v string, ok bool) {
	for i, a := range args {
		if flagName(a) != name {
			continue
		}
		if _, after, eq := strings.Cut(a, "="); eq {
			v, ok = after, true
		} else if i+1 < len(args) {
			v, ok = args[i+1], true
		}
	}
	return v, ok
}

// withoutStudyFlag is args without -study and its value.
func withoutStudyFlag(args []string) []string { return withoutFlag(args, "study") }

// withoutFlag is args without the flag name and its values.
func withoutFlag(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if flagName(args[i]) == name {
			if !strings.Contains(args[i], "=") {
				i++
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// preflight checks every plan, as a comparison's preflight does, before the
// first runs.
func (s *studyRun) preflight() error {
	for _, c := range s.plans {
		if err := run.Preflight(c.cfg); err != nil {
			return fmt.Errorf("-study %s: %w", s.row.Name, err)
		}
	}
	return nil
}

func (s *studyRun) run(ctx context.Context, out, warn io.Writer) error {
	switch s.word {
	case "list":
		_, err := io.WriteString(out, listing(s.catalogue))
		return err
	case "index":
		if err := study.WriteIndex(indexPage, s.catalogue); err != nil {
			return err
		}
		fmt.Fprintf(out, "study: %s\n", indexPage)
		return nil
	}
	base := commandLine(os.Args)
	if s.row.Burst {
		stop, err := startBurst(warn)
		if err != nil {
			return err
		}
		defer stop()
	}
	for i, c := range s.plans {
		p := s.row.Plans[i]
		if err := clearEarlierRun(c.cfg.Out); err != nil {
			return err
		}
		c.cfg.Command = base
		if p.Args != "" {
			c.cfg.Command += ": compare " + p.Args
		}
		fmt.Fprintf(out, "study %s: plan %d of %d → %s\n", s.row.Name, i+1, len(s.plans), c.cfg.Out)
		var err error
		if c.capacity != nil {
			err = runner.RunCapacity(ctx, c.cfg, *c.capacity, out, warn)
		} else {
			err = run.Compare(ctx, c.cfg, out, warn)
		}
		if err != nil {
			return fmt.Errorf("study %s, plan %d (%s): %w", s.row.Name, i+1, c.cfg.Out, err)
		}
	}
	if args := s.row.Seeds(s.root, s.server); args != nil {
		goCmd := cmp.Or(os.Getenv("GO"), "go")
		cmd := exec.CommandContext(ctx, goCmd, append([]string{"run", "./cmd/seeds"}, args...)...)
		cmd.Stdout, cmd.Stderr = out, warn
		cmd.Env = append(os.Environ(), "LOCKLAB_COMMAND="+base)
		fmt.Fprintf(out, "study %s: seeds %s\n", s.row.Name, strings.Join(args, " "))
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("study %s: seeds %s: %w", s.row.Name, strings.Join(args, " "), err)
		}
	}
	return nil
}

// burstScript is the bursty background load of a study with Burst, the one
// `make compare-busy` runs too.
const burstScript = "scripts/burst.sh"

// startBurst starts the background load in a process group of its own, and
// returns what stops the group.
func startBurst(warn io.Writer) (stop func(), err error) {
	stop, _, err = startBurstGroup(warn)
	return stop, err
}

// startBurstGroup is startBurst, with the process group's id.
func startBurstGroup(warn io.Writer) (stop func(), pgid int, err error) {
	cmd := exec.Command(burstScript)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = warn
	if err := cmd.Start(); err != nil {
		return nil, 0, fmt.Errorf("the background load (%s): %w", burstScript, err)
	}
	pgid = cmd.Process.Pid
	return func() {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		_ = cmd.Wait()
	}, pgid, nil
}

// estimate is the runner's own estimate of the study's runs (the one it
// prints before the first run); known is false when an engine of the
// study estimates nothing (the ghz seeds in memory).
func estimate(s study.Study) (took time.Duration, known bool, err error) {
	for _, p := range s.Plans {
		engine := study.Runner
		if s.Engine == study.Capacity {
			engine = study.Capacity
		}
		c, err := parseFlagsAs(strings.Fields(p.Args), io.Discard, engine)
		if err != nil {
			return 0, false, fmt.Errorf("study %s: plan %q: %w", s.Name, p.Args, err)
		}
		took += planEstimate(c)
	}
	args := s.Seeds(s.Root(), "")
	if args == nil {
		return took, true, nil
	}
	d, known := seedEstimate(args)
	return took + d, known, nil
}

// planEstimate is the runner's estimate of one parsed plan.
func planEstimate(c command) time.Duration {
	if c.capacity != nil {
		return runner.CapacityEstimate(c.cfg, *c.capacity)
	}
	if c.cfg.AllModes {
		c.cfg.Modes = serverCatalog().Names() // as Compare does
	}
	specs := plan.Layout(c.cfg.Config, serverCatalog(), run.Serves)
	if c.cfg.Measure == run.MeasureDuet && run.DuetApplies(c.cfg) == "" {
		return run.DuetPlanDuration(c.cfg, specs)
	}
	return run.PlanDuration(c.cfg, specs)
}

// seedEstimate is cmd/seeds' own estimate of its step: rendering a folder
// takes no time; the bank over a database has seeds.BankDBEstimate, the
// replicas study replicas.Estimate (its defaults); the ghz seeds in memory
// estimate nothing.
func seedEstimate(args []string) (time.Duration, bool) {
	switch args[0] {
	case "ladder", "ngrinder":
		return 0, true
	case "replicas":
		return replicas.Estimate(replicas.Options{}), true
	case "bank":
		if i := slices.Index(args, "-backend"); i < 0 || i+1 >= len(args) || !plan.OverDatabase(args[i+1]) {
			return 0, false
		}
		modes := "mutex,inputQ"
		if i := slices.Index(args, "-modes"); i >= 0 && i+1 < len(args) {
			modes = args[i+1]
		}
		return seeds.BankDBEstimate(strings.Split(modes, ",")), true
	}
	return 0, false
}

// listing is the catalogue as -study list prints it and make help shows
// it: each study's name, the runner's estimate of its time, its folder and
// what it measures.
func listing(catalogue []study.Study) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, s := range catalogue {
		took := "time not estimated"
		if d, known, err := estimate(s); err != nil {
			took = "bad plan: " + err.Error()
		} else if known {
			took = formatEstimate(d)
		}
		fmt.Fprintf(w, "  %s\t%s\t%s/\t%s\n", s.Name, took, filepath.Join(study.Dir, s.Out), s.Desc)
	}
	_ = w.Flush()
	return b.String()
}

// formatEstimate states an estimate as make help does: "~N min", or "~N s"
// under a minute.
func formatEstimate(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("~%.0f s", d.Seconds())
	}
	return fmt.Sprintf("~%.1f min", d.Minutes())
}

// serverCatalog is what the server binary's -list-modes says, unasked and
// under every -backend, taken from the registry it prints.
func serverCatalog() plan.Catalog {
	list := func(backend string) plan.ModeList {
		var b strings.Builder
		serve.ListModes(&b, server.DurabilityNone, backend)
		return plan.ParseModeList(b.String())
	}
	cat := plan.Catalog{Base: list(server.BackendMemory), Under: map[string]plan.ModeList{}}
	for _, b := range server.Backends() {
		cat.Under[plan.CatalogKey(plan.Backend, b)] = list(b)
	}
	return cat
}

// earlierRun is what a study's folder keeps of a run, by name: its runs/,
// packed or not (every volume of the archive, and the logs.tar.gz of an
// older layout), and its records, isolated (meta.json) or side by side
// (duet.json, rounds.jsonl, packed or not). The runner rewrites the rest: the report and
// its figures.
func earlierRun(dir string) ([]string, error) {
	names := []string{record.RunsDir, "logs.tar.gz", record.MetaFile, run.DuetMetaFile, run.DuetRoundsFile, run.DuetRoundsPacked}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return names, nil
	}
	for _, e := range entries {
		if record.IsVolume(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names, err
}

// clearEarlierRun removes what a study's folder keeps of an earlier run
// (earlierRun), before a plan runs into it: a folder holds its latest run
// only, and one that changed mode, or packed into fewer volumes, would
// keep the other's records or a volume no archive begins.
func clearEarlierRun(dir string) error {
	names, err := earlierRun(dir)
	if err != nil {
		return err
	}
	for _, f := range names {
		if err := os.RemoveAll(filepath.Join(dir, f)); err != nil {
			return err
		}
	}
	return nil
}
