// Command compare is locklab's main job: it runs every workload × server mode ×
// load level × repetition against a fresh server, checks the invariants after
// each run, and writes a report (Markdown, self-contained HTML, and the raw
// JSON of every run) into a results directory.
//
//	go run ./cmd/compare                # the defaults, about 5–8 minutes
//	go run ./cmd/compare -ladder -reps 3 # the seed's full VU ladder
//
// `make compare` builds the server and the pinned k6 first, then runs it.
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
	fmt.Fprintf(out, "locklab compare: %d runs (%d workloads × %d modes × %d levels × %d reps), %s each after a %s warm-up; results in %s\n",
		len(specs), len(cfg.Workloads), len(cfg.Modes), len(cfg.Levels), cfg.Reps, cfg.Duration, cfg.Warmup, cfg.Out)
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

// preflight fails fast, before any run, on a missing binary, script or mode.
func preflight(cfg Config) error {
	for _, bin := range []struct{ path, hint string }{{cfg.K6, "make k6"}, {cfg.Server, "make build"}} {
		if _, err := os.Stat(bin.path); err != nil {
			return fmt.Errorf("%s not found: run `%s` first, or `make compare`", bin.path, bin.hint)
		}
	}
	for _, w := range cfg.Workloads {
		if _, err := os.Stat(filepath.Join(cfg.Scripts, w.Script)); err != nil {
			return fmt.Errorf("workload %s: %w", w.Name, err)
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
	return nil
}

// serverModes asks the server binary which modes it has: started with a mode
// it does not know, it exits 2 and lists them after "modes:".
func serverModes(bin string) ([]string, error) {
	out, _ := exec.Command(bin, "-mode", "?").CombinedOutput()
	_, list, ok := strings.Cut(string(out), "modes:")
	if !ok {
		return nil, fmt.Errorf("%s did not list its modes: %q", bin, out)
	}
	list, _, _ = strings.Cut(list, "\n")
	var modes []string
	for f := range strings.FieldsFuncSeq(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		modes = append(modes, f)
	}
	return modes, nil
}
