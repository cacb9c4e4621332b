// Command seeds renders, and for the seeds that ghz drives also runs, the
// four source experiments locklab grew out of, each into its own folder
// under docs/results/seeds with the seed's own table (package
// internal/lab/seeds), the bank benchmark twice: in memory and, as it ran,
// over a database. Each seed is a study, `make study NAME=seed-<name>`
// (internal/lab/study), which runs the runner's plans, if any, then this.
//
//	seeds ladder   -in DIR                           # render a k6 ladder the runner wrote into DIR
//	seeds bank     -out DIR [-modes mutex,inputQ]    # ghz: the bank seed's rows, then render
//	seeds bank     -backend mysql -out DIR [-modes …] # the same over MariaDB, reads with and without Redis
//	seeds rpcx     -out DIR [-requests 1000000]      # ghz: the rpcx page's levels, then render
//	seeds ngrinder -before DIR -after DIR -out DIR   # the before/after report of two results folders
//	seeds stub     -out DIR -seed NAME               # a folder's README before its first run
//	seeds replicas -out DIR -server BIN              # the replicas study (internal/lab/replicas), with the nGrinder and rpcx replica tables
//	seeds replicas -render DIR                       # its page again from the results.json in DIR
//	seeds ghz-summary -workload W [-case C] [-scenario S] -in ghz.json -out summary.json
//	seeds ghz-run -workload W [-case C] [-scenario S] -addr HOST:PORT -out summary.json -- [ghz flags]
package main

import (
	"context"
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

	"github.com/locklab/locklab/internal/ghz"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/replicas"
	"github.com/locklab/locklab/internal/lab/run"
	"github.com/locklab/locklab/internal/lab/seeds"
	"github.com/locklab/locklab/server"
	"github.com/locklab/locklab/summary"
)

// errUsage: the command line is wrong; exit 2, as flag does.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := runCmd(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, "seeds:", err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "seeds:", err)
		os.Exit(1)
	}
}

// subcommand is one subcommand: it parses its own flags.
type subcommand func(ctx context.Context, fs *flag.FlagSet, args []string, out io.Writer) error

// commands are the subcommands, in the order usage lists them.
var commands = []struct {
	name string
	fn   subcommand
}{
	{"ladder", ladder}, {"bank", bank}, {"rpcx", rpcx}, {"ngrinder", ngrinder}, {"stub", stub}, {"replicas", replicasStudy}, {"ghz-summary", ghzSummary}, {"ghz-run", ghzRun},
}

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var names []string
	var fn subcommand
	for _, c := range commands {
		names = append(names, c.name)
		if len(args) > 0 && args[0] == c.name {
			fn = c.fn
		}
	}
	if fn == nil {
		fmt.Fprintf(stderr, "usage: seeds %s [flags]\n", strings.Join(names, "|"))
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return fmt.Errorf("%w: want a subcommand: %s", errUsage, strings.Join(names, ", "))
	}
	fs := flag.NewFlagSet("seeds "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fn(ctx, fs, args[1:], stdout)
}

// parse parses a subcommand's flags; a flag error is a usage error.
func parse(fs *flag.FlagSet, args []string, required ...string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	for _, name := range required {
		if fs.Lookup(name).Value.String() == "" {
			return fmt.Errorf("%w: -%s is required", errUsage, name)
		}
	}
	return nil
}

// page writes a seed's README into dir.
func page(dir, name string, meta record.Meta, table, published string, out io.Writer) error {
	s, _ := seeds.Lookup(name)
	differ, err := os.ReadFile(filepath.Join(dir, seeds.DifferFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	path := filepath.Join(dir, "README.md")
	if err := os.WriteFile(path, []byte(s.Page(meta, table, published, string(differ))), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "seeds: %s\n", path)
	return nil
}

func ladder(_ context.Context, fs *flag.FlagSet, args []string, out io.Writer) error {
	in := fs.String("in", "", "results folder of a k6 ladder (cmd/compare -driver k6 -ladder -workloads counter -out DIR)")
	if err := parse(fs, args, "in"); err != nil {
		return err
	}
	meta, runs, err := record.LoadDir(*in)
	if err != nil {
		return fmt.Errorf("%w: -in %s: %v", errUsage, *in, err)
	}
	table, err := seeds.Ladder(meta, runs)
	if err != nil {
		return err
	}
	return page(*in, "ladder", meta, table, seeds.LadderPublished(), out)
}

// countedFlags are the flags of the seeds ghz runs.
type countedFlags struct {
	out, modes, server string
	warmup             time.Duration
	conns              int
	pin                bool
}

func (c *countedFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.out, "out", "", "the seed's folder: runs/, meta.json and README.md are written there")
	fs.StringVar(&c.modes, "modes", "mutex,inputQ", "comma-separated server modes, side by side in the table")
	fs.StringVar(&c.server, "server", "bin/locklab", "locklab server binary (make build)")
	fs.DurationVar(&c.warmup, "warmup", seeds.Warmup, "ghz on the same call before each measured run, not counted")
	fs.IntVar(&c.conns, "conns", run.DefaultConns, "connections ghz spreads its workers over")
	fs.BoolVar(&c.pin, "pin", true, "pin the server and ghz to disjoint CPU sets (needs 2 CPUs)")
}

func (c *countedFlags) config(command string) (run.Config, []string, error) {
	modes, err := plan.ParseList(c.modes, "-modes")
	if err != nil {
		return run.Config{}, nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	cfg, err := run.NewCountedConfig(c.server, c.out, c.warmup, c.conns, c.pin)
	if err != nil {
		return run.Config{}, nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	cfg.Command = command
	return cfg, modes, nil
}

// counted runs a ghz seed's plan into a fresh runs/ and renders its page;
// the runs of an earlier run go, packed or not.
func counted(ctx context.Context, cfg run.Config, runs []run.Counted, name string, render func(record.Meta, []*record.Run) (string, error), published string, out io.Writer) error {
	if err := os.RemoveAll(filepath.Join(cfg.Out, record.RunsDir)); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(cfg.Out, record.RunsArchive)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if _, err := run.RunCounted(ctx, cfg, runs, out); err != nil {
		return err
	}
	meta, recs, err := record.LoadDir(cfg.Out)
	if err != nil {
		return err
	}
	table, err := render(meta, recs)
	if err != nil {
		return err
	}
	return page(cfg.Out, name, meta, table, published, out)
}

func bank(ctx context.Context, fs *flag.FlagSet, args []string, out io.Writer) error {
	var c countedFlags
	c.register(fs)
	backend := fs.String("backend", server.BackendMemory, "where the bank's state lives: "+strings.Join(server.Backends(), " or ")+
		" (mysql: each row's server over a private MariaDB, and a private Redis for the cached rows: the bank-db seed)")
	if err := parse(fs, args, "out"); err != nil {
		return err
	}
	if !slices.Contains(server.Backends(), *backend) {
		return fmt.Errorf("%w: -backend %q: want %s", errUsage, *backend, strings.Join(server.Backends(), " or "))
	}
	cfg, modes, err := c.config(commandLine("bank", args))
	if err != nil {
		return err
	}
	if *backend == server.BackendMySQL {
		return counted(ctx, cfg, seeds.BankDBPlan(modes), "bank-db", seeds.BankDB, seeds.BankDBPublished(), out)
	}
	return counted(ctx, cfg, seeds.BankPlan(modes), "bank", seeds.Bank, seeds.BankPublished(), out)
}

func rpcx(ctx context.Context, fs *flag.FlagSet, args []string, out io.Writer) error {
	var c countedFlags
	c.register(fs)
	requests := fs.Int("requests", seeds.DefaultRPCXRequests, fmt.Sprintf("requests per row (the page sent %d)", seeds.RPCXRequests))
	if err := parse(fs, args, "out"); err != nil {
		return err
	}
	if *requests < 1 || *requests > seeds.RPCXRequests {
		return fmt.Errorf("%w: -requests %d: want 1..%d (ghz keeps every call's latency up to a million)", errUsage, *requests, seeds.RPCXRequests)
	}
	cfg, modes, err := c.config(commandLine("rpcx", args))
	if err != nil {
		return err
	}
	return counted(ctx, cfg, seeds.RPCXPlan(modes, *requests), "rpcx", seeds.RPCX, seeds.RPCXPublished(), out)
}

func ngrinder(_ context.Context, fs *flag.FlagSet, args []string, out io.Writer) error {
	before := fs.String("before", "", "results folder before the change")
	after := fs.String("after", "", "results folder after the change")
	dir := fs.String("out", "", "folder of the report's README.md")
	if err := parse(fs, args, "before", "after", "out"); err != nil {
		return err
	}
	var sides [2][]*record.Run
	var meta record.Meta
	for i, d := range []string{*before, *after} {
		m, runs, err := record.LoadDir(d)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", errUsage, d, err)
		}
		sides[i], meta = runs, m
	}
	table, err := seeds.BeforeAfter(filepath.Base(*before), sides[0], filepath.Base(*after), sides[1])
	if table == "" {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	meta.Command = commandLine("ngrinder", args)
	if perr := page(*dir, "ngrinder", meta, table, seeds.NGrinderPublished(), out); perr != nil {
		return perr
	}
	return err
}

func stub(_ context.Context, fs *flag.FlagSet, args []string, out io.Writer) error {
	dir := fs.String("out", "", "the seed's folder")
	name := fs.String("seed", "", "the seed: "+strings.Join(seeds.Names(), ", "))
	if err := parse(fs, args, "out", "seed"); err != nil {
		return err
	}
	s, ok := seeds.Lookup(*name)
	if !ok {
		return fmt.Errorf("%w: -seed %q: want one of %s", errUsage, *name, strings.Join(seeds.Names(), ", "))
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(*dir, "README.md"), []byte(s.Stub()), 0o644)
}

// ghzSummary turns one ghz JSON report into the driver-neutral summary, for
// scripts that run ghz themselves (k6/e2e.sh).
func ghzSummary(_ context.Context, fs *flag.FlagSet, args []string, out io.Writer) error {
	workload := fs.String("workload", "", "the workload ghz drove: counter, bank, kv")
	kase := fs.String("case", "", "its case (default: its first case ghz can send)")
	scenario := fs.String("scenario", "", "bank scenario (A, B, C): whether refusals are expected")
	in := fs.String("in", "", "ghz's JSON report (-O json)")
	dst := fs.String("out", "", "where to write the summary")
	if err := parse(fs, args, "workload", "in", "out"); err != nil {
		return err
	}
	call, err := ghz.Lookup(*workload, *kase, *scenario)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	s, err := readGhzReport(*in, call, *scenario)
	if err != nil {
		return err
	}
	return s.WriteFile(*dst)
}

// readGhzReport reads ghz's JSON report at path as the driver-neutral summary.
func readGhzReport(path string, call ghz.Call, scenario string) (*summary.Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rep, err := ghz.ReadReport(f)
	if err != nil {
		return nil, err
	}
	return rep.Summary(call, scenario, "ghz "+run.GhzVersion)
}

// ghzRun runs the pinned ghz on one case against a running server, as a
// script would (k6/e2e.sh), and writes the summary; a call answered
// unexpectedly fails it (exit 1), as it fails the other drivers.
func ghzRun(ctx context.Context, fs *flag.FlagSet, args []string, out io.Writer) error {
	workload := fs.String("workload", "", "the workload: counter, bank, kv")
	kase := fs.String("case", "", "its case (default: its first case ghz can send)")
	scenario := fs.String("scenario", "", "bank scenario (A, B, C): whether refusals are expected")
	addr := fs.String("addr", "", "the server's address")
	dst := fs.String("out", "", "where to write the summary")
	var extra []string
	for i, a := range args {
		if a == "--" {
			args, extra = args[:i], args[i+1:]
			break
		}
	}
	if err := parse(fs, args, "workload", "addr", "out"); err != nil {
		return err
	}
	call, err := ghz.Lookup(*workload, *kase, *scenario)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	bin := run.GhzBinary()
	if err := run.CheckGhz(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	report := *dst + ".ghz.json"
	argv := append(append(call.Args(), extra...), "-O", "json", "-o", report, *addr)
	cmd := exec.CommandContext(ctx, bin, argv...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ghz: %w", err)
	}
	s, err := readGhzReport(report, call, *scenario)
	if err != nil {
		return err
	}
	if err := s.WriteFile(*dst); err != nil {
		return err
	}
	fmt.Fprintf(out, "ghz: %s/%s: %d calls in %.2fs, %.0f calls/s, p50 %.3f ms, %d refused as expected, %d unexpected\n",
		call.Workload, call.Case, s.Calls, s.DurationS, s.CallsPerS, s.LatencyMs.P50, s.ExpectedRefusals, s.UnexpectedErrors)
	if s.UnexpectedErrors > 0 {
		return fmt.Errorf("ghz: %d unexpected answers (by code %v)", s.UnexpectedErrors, s.ByCode)
	}
	return nil
}

// commandLine names the command for a seed's page: `make` sets
// LOCKLAB_COMMAND, as for the runner.
func commandLine(sub string, args []string) string {
	if c := os.Getenv("LOCKLAB_COMMAND"); c != "" {
		return c
	}
	return strings.Join(append([]string{"go run ./cmd/seeds", sub}, args...), " ")
}

// replicasStudy runs the replicas study into -out, or renders its page
// again from the results a run saved (-render).
func replicasStudy(ctx context.Context, fs *flag.FlagSet, args []string, out io.Writer) error {
	d := replicas.Defaults
	o := replicas.Options{}
	fs.StringVar(&o.Out, "out", "", "the study's folder")
	fs.StringVar(&o.Server, "server", "bin/locklab", "the locklab binary")
	fs.Float64Var(&o.ReplicaCPUs, "replica-cpus", d.ReplicaCPUs, "every replica's CPU quota")
	fs.IntVar(&o.Callers, "callers", d.Callers, "the driver's callers for the anomaly table and the cost rounds")
	fs.DurationVar(&o.AnomalyRun, "anomaly-run", d.AnomalyRun, "each workload's run per design and front")
	fs.DurationVar(&o.Round, "round", d.Round, "one cost or seed round")
	fs.IntVar(&o.Blocks, "blocks", d.Blocks, "blocks of cost rounds")
	fs.StringVar(&o.CostDesign, "design", d.CostDesign, "the design of the cost rounds and the seed tables, and the in-process design of the cost rounds over the database")
	fs.StringVar(&o.DBFront, "db-front", d.DBFront, "the front of the cost rounds over the database")
	fs.IntVar(&o.DBReplicas, "db-replicas", d.DBReplicas, "the replicas of the cost rounds over the database")
	fs.DurationVar(&o.DesignRound, "design-round", d.DesignRound, "one round of every design behind the balancer")
	fs.IntVar(&o.DesignBlocks, "design-blocks", d.DesignBlocks, "blocks of every design's rounds behind the balancer")
	render := fs.String("render", "", "render the page again from the results.json in this folder, and run nothing")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *render != "" {
		res, err := replicas.ReadResults(*render)
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		return replicas.WritePage(*render, res)
	}
	if err := o.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	res, err := replicas.Run(ctx, o, commandLine("replicas", args), out)
	if err != nil {
		return err
	}
	if err := replicas.Write(o.Out, res); err != nil {
		return err
	}
	fmt.Fprintf(out, "seeds: %s\n", filepath.Join(o.Out, replicas.ReportFile))
	return nil
}
