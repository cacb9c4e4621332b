package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/load"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

// procs is how a run starts its programs: real processes, or in a test
// fakes that need none.
type procs interface {
	// startServer starts the server binary bin (the run's Go runtime's:
	// Config.serverFor).
	startServer(cfg Config, bin string, args []string, cpus []int, logPath string) (server, error)
	drive(ctx context.Context, cfg Config, d Driver, job Job, serverPID int) (*summary.Summary, DriverRun, error)
}

// server is a running locklab server; its owner must stop it.
type server interface {
	address() string
	pid() int
	stop() (exitCode int, took time.Duration)
}

// processes starts real programs.
type processes struct{}

func (processes) startServer(cfg Config, bin string, args []string, cpus []int, logPath string) (server, error) {
	return startServer(bin, args, cpus, cfg.gomaxprocs(cpus), logPath)
}

func (processes) drive(ctx context.Context, cfg Config, d Driver, job Job, serverPID int) (*summary.Summary, DriverRun, error) {
	return runDriver(ctx, cfg, d, job, serverPID)
}

// serverArgs are the server's flags for a run: its mode, a free loopback
// port, and the factors the server takes.
func serverArgs(spec plan.Spec, dataDir, metricsAddr string) []string {
	args := []string{"-mode", spec.Mode, "-addr", "127.0.0.1:0"}
	args = append(args, spec.Factors.ServerArgs(plan.RunDirs{Data: dataDir})...)
	if metricsAddr != "" {
		args = append(args, "-metrics-addr", metricsAddr)
	}
	return args
}

// runOne starts a fresh server, warms it up, resets it, measures, checks the
// invariants and stops the server.
func runOne(ctx context.Context, cfg Config, p procs, spec plan.Spec, runsDir string) (*record.Run, error) {
	rec := &record.Run{Spec: spec, Started: time.Now().UTC()}
	d, ok := LookupDriver(spec.Driver)
	if !ok {
		return nil, fmt.Errorf("no driver %q", spec.Driver)
	}
	place, err := cfg.placement(spec.Factors)
	if err != nil {
		return nil, err
	}
	scratch, err := os.MkdirTemp("", "locklab-run-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch) // the WAL directory, h2load's frame and request log
	dataDir := filepath.Join(scratch, "data")
	if err := os.Mkdir(dataDir, 0o700); err != nil {
		return nil, err
	}
	profiling, attributing, traced := isProfileRun(cfg.Profile, spec), attributes(cfg, spec), ledgers(spec)
	var metricsAddr string
	if profiling || attributing || traced {
		if metricsAddr, err = freeLoopbackAddr(); err != nil {
			return nil, err
		}
	}
	bin, err := cfg.serverFor(spec.Factors)
	if err != nil {
		return nil, err
	}
	srv, err := p.startServer(cfg, bin, serverArgs(spec, dataDir, metricsAddr), place.Server, filepath.Join(runsDir, spec.ID+".server.log"))
	if err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			srv.stop()
		}
	}()
	conn, err := grpc.NewClient(srv.address(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	admin := locklabv1.NewAdminServiceClient(conn)

	job := Job{Spec: spec, Addr: srv.address(), Scratch: scratch, Place: place}
	if cfg.Warmup > 0 {
		w := job
		w.Warmup, w.Duration = true, warmupFor(cfg, d)
		w.Summary = filepath.Join(scratch, "warmup.json")
		w.Log = filepath.Join(runsDir, spec.ID+".warmup.log")
		res, run, err := p.drive(ctx, cfg, d, w, 0)
		if err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
		if run.ExitCode != 0 {
			rec.Problems = append(rec.Problems, fmt.Sprintf("warm-up %s exited %d (see %s.warmup.log)", d.Name(), run.ExitCode, spec.ID))
		}
		job.Prior = res
	}
	// The reset starts the server's measurement window and gives the
	// measured run known state to check against.
	if _, err := admin.Reset(ctx, resetRequest(spec)); err != nil {
		return nil, fmt.Errorf("reset: %w", err)
	}
	before, err := admin.GetStats(ctx, &locklabv1.GetStatsRequest{})
	if err != nil {
		return nil, fmt.Errorf("stats before: %w", err)
	}
	var prof *profiler
	if profiling {
		prof = startProfile(ctx, metricsAddr, cfg.Duration, filepath.Join(runsDir, spec.ID))
		defer prof.wait() // on an early return; a second wait returns at once
	}
	var att *attribution
	if attributing {
		att = startAttribution(ctx, metricsAddr, srv.pid(), cfg.Duration, filepath.Join(runsDir, spec.ID))
		defer att.wait() // on an early return; a second wait returns at once
	}
	var trc *tracing
	if traced {
		trc = startLedger(ctx, metricsAddr, cfg.Duration, scratch)
		defer trc.wait() // on an early return; a second wait returns at once
	}
	job.Duration = cfg.Duration
	job.Summary = filepath.Join(runsDir, spec.ID+record.SummarySuffix)
	job.Log = filepath.Join(runsDir, spec.ID+"."+d.Name()+".log")
	res, run, err := p.drive(ctx, cfg, d, job, srv.pid())
	if err != nil {
		return nil, err
	}
	rec.Result, rec.DriverExit, rec.DriverProc, rec.ServerProc, rec.BackendProc, rec.RunnerProc = res, run.ExitCode, run.Driver, run.Server, run.Backend, run.Runner
	rec.ServerSet, rec.DriverSet = run.ServerSet, run.DriverSet
	rec.SharedCPUs = place.Shared
	if prof != nil {
		files, err := prof.wait()
		if err != nil {
			rec.Problems = append(rec.Problems, "profile: "+err.Error())
		}
		rec.Profile = files
	}
	after, err := admin.GetStats(ctx, &locklabv1.GetStatsRequest{})
	if err != nil {
		return nil, fmt.Errorf("stats after: %w", err)
	}
	if trc != nil {
		if rec.Ledger, err = trc.finish(); err != nil {
			rec.Problems = append(rec.Problems, "ledger: "+err.Error())
		}
	}
	if att != nil {
		rec.Attribution, err = att.finish(after.GetRequests() - before.GetRequests())
		if err != nil {
			rec.Problems = append(rec.Problems, "attribution: "+err.Error())
		}
	}
	// Zeros written out too: a figure the server has but measured as zero
	// is told apart from one it does not have.
	asJSON := protojson.MarshalOptions{EmitUnpopulated: true}
	if rec.StatsBefore, err = asJSON.Marshal(before); err != nil {
		return nil, err
	}
	if rec.Stats, err = asJSON.Marshal(after); err != nil {
		return nil, err
	}
	stopped = true
	exit, took := srv.stop()
	rec.ServerExit, rec.StopSeconds = exit, took.Seconds()
	if rec.DriverExit != 0 {
		rec.Problems = append(rec.Problems, fmt.Sprintf("%s exited %d: failed checks or thresholds (see %s.%s.log)", d.Name(), rec.DriverExit, spec.ID, d.Name()))
	}
	if rec.ServerExit != 0 {
		rec.Problems = append(rec.Problems, fmt.Sprintf("server exited %d after SIGTERM, want 0", rec.ServerExit))
	}
	rec.Checks = checkInvariants(spec, rec.Result, before, after)
	for _, c := range rec.Checks {
		if !c.OK {
			rec.Problems = append(rec.Problems, "INVARIANT VIOLATED: "+c.Name+": "+c.Detail)
		}
	}
	if rec.Derived, err = record.Derive(rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// resetRequest is the state every measured run starts from: the bank in the
// workload's scenario with the default size and balance.
func resetRequest(spec plan.Spec) *locklabv1.ResetRequest {
	sc, _ := load.ResetScenario(spec.Scenario)
	return &locklabv1.ResetRequest{Scenario: sc}
}

// checkInvariants checks what must hold after any run of a store-backed mode:
// money conserved and never negative, and no acknowledged increment lost.
// For h2load, which cannot read gRPC trailers, the last check is what proves
// its calls succeeded: the counter must equal the calls it completed.
func checkInvariants(spec plan.Spec, res *summary.Summary, before, after *locklabv1.GetStatsResponse) []record.Check {
	if !after.GetStoreBacked() {
		return []record.Check{{Name: "store-backed", OK: true, Detail: "mode " + after.GetMode() + " keeps no state: nothing to check"}}
	}
	var checks []record.Check
	add := func(name string, ok bool, format string, args ...any) {
		checks = append(checks, record.Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
	}
	add("money conserved", after.GetTotalBalance() == before.GetTotalBalance(),
		"total balance %d before, %d after", before.GetTotalBalance(), after.GetTotalBalance())
	add("no negative balance", after.GetMinBalance() >= 0, "smallest balance %d", after.GetMinBalance())
	acked := res.AckedIncrementDelta
	got := after.GetCounterValue() - before.GetCounterValue()
	if res.UnexpectedErrors == 0 {
		add("no lost increment", got == acked, "counter moved by %d, %s saw %d acknowledged", got, spec.Driver, acked)
	} else {
		// A call that failed in flight may still have been applied; only
		// the acknowledged ones are owed.
		add("no lost increment", got >= acked, "counter moved by %d, %s saw %d acknowledged and %d unexpected errors", got, spec.Driver, acked, res.UnexpectedErrors)
	}
	return checks
}
