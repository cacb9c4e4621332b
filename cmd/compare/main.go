// Command compare is locklab's main job: it runs every workload × driver ×
// factor combination × server mode × load level × repetition against a fresh
// server, with the server and the load driver on disjoint CPUs, checks the
// invariants after each run, classes each run (server-bound, load-bound,
// neither), and writes a report with medians, 95% confidence intervals and
// Mann-Whitney verdicts (Markdown, self-contained HTML, and the raw JSON of
// every run) into a results directory.
//
//	go run ./cmd/compare                            # the defaults, under 8 minutes on 2 CPUs
//	go run ./cmd/compare -driver k6 -ladder -reps 3 # the seed's k6 VU ladder
//
// `make compare` builds the server and the Go driver first, then runs it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(2)
	}
	cfg.Command = commandLine(os.Args)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
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

// errRunsFailed is returned when the report was written but a run broke an
// invariant or failed: the comparison must not pass silently.
var errRunsFailed = errors.New("some runs failed; see Problems in the report")

func run(ctx context.Context, cfg Config, out io.Writer) error {
	if cfg.Rerender != "" {
		return rerender(cfg.Rerender, out)
	}
	if cfg.Diff != "" {
		return diffDirs(cfg.Diff, out)
	}
	if err := preflight(cfg); err != nil {
		return err
	}
	if cfg.Out == "" {
		cfg.Out = filepath.Join("results", time.Now().UTC().Format("20060102-150405"))
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return err
	}
	meta := newMeta(cfg)
	// Written now too, so that -rerender works on an interrupted run.
	if err := writeJSON(filepath.Join(cfg.Out, "meta.json"), meta); err != nil {
		return err
	}
	specs := plan(cfg)
	if len(specs) == 0 {
		return errors.New("nothing to run: no mode serves these workloads under these factors (see meta.json, not_applicable)")
	}
	estimate := planDuration(cfg, specs)
	fmt.Fprintf(out, "locklab compare: %d runs (%s × %s; drivers %s; %d reps), %s each after a %s warm-up, about %s; results in %s\n",
		len(specs), strings.Join(meta.Workloads, ","), strings.Join(cfg.Modes, ","), strings.Join(cfg.Drivers, ","), cfg.Reps,
		cfg.Duration, cfg.Warmup, estimate.Round(time.Second), cfg.Out)
	if len(cfg.ServerCPUs) == 0 {
		fmt.Fprintln(out, "CPU isolation: off (one CPU, or -pin=false): server and driver share the machine")
	} else {
		fmt.Fprintf(out, "CPU isolation: server on CPU %s, driver on CPU %s\n", cpuList(cfg.ServerCPUs), cpuList(cfg.DriverCPUs))
	}
	for _, na := range meta.NA {
		fmt.Fprintf(out, "n/a: %s × %s: %s\n", na.Workload, na.Mode, na.Reason)
	}
	records, runErr := runAll(ctx, cfg, specs, out)
	meta.Finished = time.Now().UTC()
	if len(records) == 0 {
		return runErr
	}
	rep := &Report{Meta: meta, Groups: aggregate(records)}
	if err := writeReport(cfg.Out, rep); err != nil {
		return err
	}
	fmt.Fprintf(out, "report: %s\n        %s\n", filepath.Join(cfg.Out, "report.md"), filepath.Join(cfg.Out, "report.html"))
	if runErr != nil {
		return fmt.Errorf("stopped after %d of %d runs (the report covers those): %w", len(records), len(specs), runErr)
	}
	for _, g := range rep.Groups {
		if g.Failed > 0 {
			return errRunsFailed
		}
	}
	return nil
}

// planDuration estimates how long the plan takes on a 2-CPU machine: each
// run's warm-up and measured window, about 0.1 s to start and stop its server
// and drivers, and the time its two driver processes take to open their
// connections (measured: about 1.5 ms a connection, so 3 s for two processes
// of 1000 callers each).
func planDuration(cfg Config, specs []RunSpec) time.Duration {
	var total time.Duration
	for _, s := range specs {
		conns := s.Level
		switch {
		case s.Model == "open":
			conns = cfg.MaxVUs
		case cfg.Conns > 0:
			conns = min(conns, cfg.Conns)
		}
		total += cfg.Warmup + cfg.Duration + 100*time.Millisecond + time.Duration(2*conns)*1500*time.Microsecond
	}
	return total
}

// rerender rebuilds a results directory's report from its raw files.
func rerender(dir string, out io.Writer) error {
	var meta Meta
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return fmt.Errorf("meta.json: %w", err)
	}
	if len(meta.Drivers) == 0 { // written before the driver seam: k6 only, no factors
		meta.Drivers = []string{"k6"}
		meta.Factors = FactorSpace{Works: []time.Duration{0}, Durabilities: []string{durabilityNone}, Skews: []float64{0}, ReadRatios: []float64{defaultReadRatio}}
	}
	records, err := loadRecords(dir)
	if err != nil {
		return err
	}
	if len(records) == 0 {
		return fmt.Errorf("%s: no runs", dir)
	}
	if err := writeReport(dir, &Report{Meta: meta, Groups: aggregate(records)}); err != nil {
		return err
	}
	fmt.Fprintf(out, "report: %s\n", filepath.Join(dir, "report.md"))
	return nil
}

func writeReport(dir string, rep *Report) error {
	if err := writeJSON(filepath.Join(dir, "meta.json"), rep.Meta); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, "figures.json"), rep.Groups); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(rep.markdown()), 0o644); err != nil {
		return err
	}
	page, err := rep.html()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "report.html"), []byte(page), 0o644)
}

// preflight fails fast, before any run, on a missing binary, script, mode
// or server flag.
func preflight(cfg Config) error {
	bins := []struct{ path, hint string }{{cfg.Server, "make build"}}
	for _, d := range cfg.Drivers {
		switch d {
		case "go":
			bins = append(bins, struct{ path, hint string }{cfg.Load, "make build"})
		case "k6":
			bins = append(bins, struct{ path, hint string }{cfg.K6, "make k6"})
			for _, w := range cfg.Workloads {
				if _, err := os.Stat(filepath.Join(cfg.Scripts, w.Script)); err != nil {
					return fmt.Errorf("workload %s: %w", w.Name, err)
				}
			}
		case "h2load":
			bins = append(bins, struct{ path, hint string }{cfg.H2load, "make h2load"})
		}
	}
	if len(cfg.ServerCPUs) > 0 {
		bins = append(bins, struct{ path, hint string }{"taskset", "apt-get install util-linux"})
	}
	for _, bin := range bins {
		if _, err := exec.LookPath(bin.path); err != nil {
			return fmt.Errorf("%s not found: run `%s` first, or `make compare`", bin.path, bin.hint)
		}
	}
	modes, err := serverModes(cfg.Server)
	if err != nil {
		return err
	}
	for _, m := range cfg.Modes {
		if !slices.Contains(modes, m) {
			return fmt.Errorf("-modes: unknown mode %q; %s serves: %s", m, cfg.Server, strings.Join(modes, ", "))
		}
	}
	if cfg.Profile != "" && !slices.ContainsFunc(plan(cfg), func(s RunSpec) bool { return isProfileRun(cfg.Profile, s) }) {
		return fmt.Errorf("-profile %q: no such run; give a run's number (1..%d) or id", cfg.Profile, len(plan(cfg)))
	}
	help, _ := exec.Command(cfg.Server, "-h").CombinedOutput()
	for _, need := range []struct {
		flag string
		when bool
	}{
		{"-work", slices.ContainsFunc(cfg.Factors.Works, func(d time.Duration) bool { return d > 0 })},
		{"-durability", slices.Contains(cfg.Factors.Durabilities, durabilityWAL)},
		{"-metrics-addr", cfg.Profile != ""},
	} {
		if need.when && !strings.Contains(string(help), "  "+need.flag+" ") {
			return fmt.Errorf("%s has no %s flag: build a server that has it (make build)", cfg.Server, need.flag)
		}
	}
	return nil
}

// serverModes asks the server binary which modes it has: -list-modes prints
// one per line, the mode's name first; a server from before the registry
// lacks it, exits 2 on an unknown mode, and lists them after "modes:".
func serverModes(bin string) ([]string, error) {
	var modes []string
	if out, err := exec.Command(bin, "-list-modes").Output(); err == nil {
		for line := range strings.Lines(string(out)) {
			if f := strings.Fields(line); len(f) > 0 {
				modes = append(modes, f[0])
			}
		}
		return modes, nil
	}
	out, _ := exec.Command(bin, "-mode", "?").CombinedOutput()
	_, list, ok := strings.Cut(string(out), "modes:")
	if !ok {
		return nil, fmt.Errorf("%s did not list its modes: %q", bin, out)
	}
	list, _, _ = strings.Cut(list, "\n")
	for f := range strings.FieldsFuncSeq(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		modes = append(modes, f)
	}
	return modes, nil
}
