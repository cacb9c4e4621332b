package run

import (
	"context"
	"io"
	"time"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

// What a study with an engine of its own (the capacity study's, in
// internal/lab/capacity/runner) needs from the runner: the prologue every
// study shares, one run as the comparison runs it, and the pieces of a run
// for an engine that drives one server through several phases. Each is a
// thin door onto the code the comparison itself runs, so that both measure
// the same way.

// Procs starts servers and runs drivers: the machine's (Machine), or a
// test's fakes, so that an engine is tested with no process.
type Procs interface {
	// StartServer starts the server binary bin (the run's Go runtime's)
	// with args, pinned to cpus, its stderr in logPath.
	StartServer(cfg Config, bin string, args []string, cpus []int, logPath string) (Server, error)
	// Drive runs driver d for job against the server whose process is
	// serverPID (0: none to sample).
	Drive(ctx context.Context, cfg Config, d Driver, job Job, serverPID int) (*summary.Summary, DriverRun, error)
}

// Server is a running locklab server; its owner must stop it.
type Server interface {
	Address() string
	PID() int
	// Stop stops the server gracefully and says how it exited and how long
	// it took.
	Stop() (exitCode int, took time.Duration)
}

// Machine is the Procs that starts real programs.
func Machine() Procs { return machine{} }

type machine struct{}

func (machine) StartServer(cfg Config, bin string, args []string, cpus []int, logPath string) (Server, error) {
	s, err := processes{}.startServer(cfg, bin, args, cpus, logPath)
	if err != nil {
		return nil, err
	}
	return outer{s}, nil
}

func (machine) Drive(ctx context.Context, cfg Config, d Driver, job Job, serverPID int) (*summary.Summary, DriverRun, error) {
	return processes{}.drive(ctx, cfg, d, job, serverPID)
}

// inner is a Procs as runOne takes it.
func inner(p Procs) procs {
	if _, ok := p.(machine); ok {
		return processes{}
	}
	return innerProcs{p}
}

type innerProcs struct{ p Procs }

func (i innerProcs) startServer(cfg Config, bin string, args []string, cpus []int, logPath string) (server, error) {
	s, err := i.p.StartServer(cfg, bin, args, cpus, logPath)
	if err != nil {
		return nil, err
	}
	return innerServer{s}, nil
}

func (i innerProcs) drive(ctx context.Context, cfg Config, d Driver, job Job, serverPID int) (*summary.Summary, DriverRun, error) {
	return i.p.Drive(ctx, cfg, d, job, serverPID)
}

type innerServer struct{ s Server }

func (i innerServer) address() string            { return i.s.Address() }
func (i innerServer) pid() int                   { return i.s.PID() }
func (i innerServer) stop() (int, time.Duration) { return i.s.Stop() }

type outer struct{ s server }

func (o outer) Address() string            { return o.s.address() }
func (o outer) PID() int                   { return o.s.pid() }
func (o outer) Stop() (int, time.Duration) { return o.s.stop() }

// Prepare is the prologue of every study: it builds the server of every
// -runtime value, asks it what it can run, expands -modes all, and checks
// the plan against it and the machine before anything runs.
func Prepare(cfg Config) (Config, plan.Catalog, error) { return prepare(cfg) }

// Lock takes the machine's lab lock, waiting (and saying so on out) while
// another runner holds it: two on one machine would measure each other.
// The release function drops it.
func Lock(ctx context.Context, out io.Writer) (release func(), err error) {
	return labLock(ctx, lockPath(), out)
}

// NewMeta is a study's meta.json as the comparison starts it, with the
// cells no mode can fill.
func NewMeta(cfg Config, na []plan.NA) record.Meta { return newMeta(cfg, na) }

// CheckQuiet watches the machine before the first block, records what it
// saw in g and says so on out; a busy machine is warned of on warn.
func CheckQuiet(ctx context.Context, cfg Config, g *record.Gate, out, warn io.Writer) {
	checkQuiet(ctx, cfg, g, out, warn)
}

// RunOne is one run as the comparison runs it: a fresh server, the
// warm-up, the reset, the measured window, the invariants; its logs go to
// runsDir, its record is returned, not written.
func RunOne(ctx context.Context, cfg Config, p Procs, spec plan.Spec, runsDir string) (*record.Run, error) {
	return runOne(ctx, cfg, inner(p), spec, runsDir)
}

// Headline is a run's one line of progress, as the comparison prints it.
func Headline(r *record.Run) string { return headline(r) }

// StartServer starts a fresh server for spec through p, with the run's
// own flags (its data in dataDir) and extra after them, on the CPUs spec's
// factors place it on, its stderr in logPath. It returns the placement too,
// which the run's Jobs take.
func StartServer(cfg Config, p Procs, spec plan.Spec, dataDir string, extra []string, logPath string) (Server, plan.Placement, error) {
	place := spec.Factors.Place(cfg.base())
	bin, err := cfg.serverFor(spec.Factors)
	if err != nil {
		return nil, place, err
	}
	args := append(serverArgs(spec, dataDir, ""), extra...)
	srv, err := p.StartServer(cfg, bin, args, place.Server, logPath)
	return srv, place, err
}

// WarmupFor is how long a run's warm-up lasts with driver d: -warmup, or
// the driver's shortest run where -warmup is shorter.
func WarmupFor(cfg Config, d Driver) time.Duration { return warmupFor(cfg, d) }

// ResetRequest is the state every measured run of spec starts from.
func ResetRequest(spec plan.Spec) *locklabv1.ResetRequest { return resetRequest(spec) }

// CheckInvariants checks what must hold after a run of spec whose driver
// summed up res, between the server's stats before and after it.
func CheckInvariants(spec plan.Spec, res *summary.Summary, before, after *locklabv1.GetStatsResponse) []record.Check {
	return checkInvariants(spec, res, before, after)
}
