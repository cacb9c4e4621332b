// Package serve is what the locklab command does once its flags are parsed:
// check the options, resolve -mode to its design once, build the server,
// listen, print the one line tools parse, serve until the context ends
// (SIGINT, SIGTERM) and stop within the grace. The root main.go declares the
// flags into an Options and calls Main; the tests here run Run in-process and
// Main in a child process, where signals, exit statuses and kill -9 exist.
package serve

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/locklab/locklab/internal/work"
	"github.com/locklab/locklab/server"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workload"
	"github.com/locklab/locklab/workload/dbbank"
)

// ErrUsage marks errors in the command line: exit status 2, as flag's own
// errors have. Run has printed the message when it returns it.
var ErrUsage = errors.New("usage")

// Options are the command's flags, one field each (the flag's name beside
// it). Defaults gives every flag's default.
type Options struct {
	Mode          string        // -mode: one of server.Modes' names (required)
	Addr          string        // -addr: listen address
	Accounts      uint          // -accounts
	Balance       int64         // -balance
	Scenario      string        // -scenario: A, B or C, any case
	Grace         time.Duration // -grace
	SampleEvery   uint64        // -sample-every
	QueueSize     int           // -queue-size
	BatchLimit    int           // -batch-limit
	Shards        int           // -shards
	SpinBudget    time.Duration // -spin-budget
	ListModes     bool          // -list-modes
	Work          time.Duration // -work
	WorkKind      string        // -work-kind: one of work.Kinds
	CallWork      time.Duration // -call-work
	Durability    string        // -durability
	DataDir       string        // -data-dir
	SnapshotEvery int           // -snapshot-every
	Version       bool          // -version
	MaxInflight   int           // -max-inflight
	MaxCalls      int           // -max-calls
	RejectFull    bool          // -reject-when-full
	MetricsAddr   string        // -metrics-addr
	Backend       string        // -backend: one of server.Backends
	DBDSN         string        // -db-dsn: empty starts a private MariaDB
	DBTemplate    string        // -db-template: the private MariaDB's data directory copied from this one, not installed
	DBPool        int           // -db-pool
	Cache         string        // -cache: none or redis
	RedisAddr     string        // -redis-addr: empty (with -cache redis) starts a private Redis
	RequireKey    string        // -require-key: a header every data call must carry (empty: none)
	DBOwner       string        // -db-owner: this replica's name in routed-owner's ownership table
	DBNoFencing   bool          // -db-no-fencing: routed-owner skips its epoch check (a control for tests)
}

// Defaults are the flags' defaults.
func Defaults() Options {
	return Options{
		Addr:        "127.0.0.1:50055",
		Accounts:    workload.DefaultAccounts,
		Balance:     workload.DefaultInitialBalance,
		Scenario:    "A",
		Grace:       5 * time.Second,
		SampleEvery: server.DefaultSampleEvery,
		QueueSize:   store.DefaultQueueSize,
		BatchLimit:  store.DefaultBatchLimit,
		Shards:      store.DefaultShards,
		SpinBudget:  store.DefaultSpinBudget,
		Durability:  server.DurabilityNone,
		WorkKind:    work.KindSpin,
		Backend:     server.BackendMemory,
		DBPool:      dbbank.DefaultPool,
		Cache:       CacheNone,
	}
}

// Main runs the command as a process does: until SIGINT or SIGTERM, writing
// to os.Stdout and os.Stderr, and returns the exit status (ExitCode).
func Main(o Options) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return ExitCode(Run(ctx, o, os.Stdout, os.Stderr), os.Stderr)
}

// ExitCode is the exit status of Run's error: 0, 2 for a usage error (Run
// printed it) or help, 1 for any other, which it prints to stderr.
func ExitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, ErrUsage):
		return 2
	}
	fmt.Fprintln(stderr, "locklab:", err)
	return 1
}

// Run serves until ctx ends, then stops gracefully. It prints one line to
// stderr once it listens — "locklab: mode=<mode> listening on <host:port>" —
// which tools parse to find a server started on port 0, and nothing per
// request. With -metrics-addr a second line follows:
// "locklab: mode=<mode> metrics on http://<host:port>/metrics". With
// -version or -list-modes it prints to stdout and returns at once.
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) error {
	if o.Version {
		fmt.Fprintln(stdout, Version())
		return nil
	}
	if o.ListModes {
		ListModes(stdout, o.Durability, o.Backend)
		return nil
	}
	usage := func(format string, a ...any) error {
		fmt.Fprintf(stderr, "locklab: "+format+"\n", a...)
		return ErrUsage
	}
	// The mode first, so that any bad command line without one names the
	// modes; it is resolved here once and the server gets the row.
	mode, err := server.LookupMode(o.Mode)
	if err != nil {
		return usage("-mode: %v", err)
	}
	cfg, err := o.config()
	if err != nil {
		return usage("%v", err)
	}
	cfg.Logger = log.New(stderr, "locklab: ", 0)
	var reg *prometheus.Registry
	metricsAddr := o.MetricsAddr
	if metricsAddr != "" {
		if metricsAddr, err = loopbackIfBare(metricsAddr); err != nil {
			return usage("-metrics-addr %q: %v", o.MetricsAddr, err)
		}
		reg = server.NewMetricsRegistry()
		cfg.Metrics = reg
	}
	if err := mode.CanServeOn(o.Backend, o.Durability); err != nil {
		return usage("-mode %s -backend %s: %v", mode.Name, o.Backend, err)
	}
	stopDB, err := o.privateServers(ctx, &cfg, stderr)
	if err != nil {
		return err
	}
	defer stopDB()
	srv, err := mode.New(cfg)
	if errors.Is(err, server.ErrDataDir) || errors.Is(err, server.ErrBackend) {
		return err // a runtime failure: status 1, not a usage error
	}
	if err != nil {
		return usage("%v", err)
	}
	lis, err := net.Listen("tcp", o.Addr)
	if err != nil {
		srv.Stop(context.Background())
		return err
	}
	var mlis net.Listener
	if reg != nil {
		if mlis, err = net.Listen("tcp", metricsAddr); err != nil {
			_ = lis.Close()
			srv.Stop(context.Background())
			return fmt.Errorf("-metrics-addr: %w", err)
		}
	}
	fmt.Fprintf(stderr, "locklab: mode=%s listening on %s\n", mode.Name, lis.Addr())
	if mlis != nil {
		fmt.Fprintf(stderr, "locklab: mode=%s metrics on http://%s/metrics\n", mode.Name, mlis.Addr())
	}
	if err := serve(ctx, srv, lis, mlis, reg, o.Grace); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "locklab: mode=%s stopped\n", mode.Name)
	return nil
}

// serve runs the gRPC server on lis and, if mlis is set, the metrics server
// on it, until ctx ends or a listener fails; then it stops both, giving the
// calls in flight grace.
func serve(ctx context.Context, srv *server.Server, lis, mlis net.Listener, reg *prometheus.Registry, grace time.Duration) error {
	// Both servers report on one channel; serve waits for as many answers
	// as it started servers.
	served := make(chan error, 2)
	running := 1
	go func() { served <- srv.Serve(lis) }() // owned by serve: joined below
	var hs *http.Server
	if mlis != nil {
		hs = &http.Server{Handler: server.MetricsHandler(reg), ReadHeaderTimeout: 10 * time.Second}
		running++
		go func() { // owned by serve: joined below
			if err := hs.Serve(mlis); !errors.Is(err, http.ErrServerClosed) {
				served <- err
				return
			}
			served <- nil
		}()
	}
	var failed error
	select {
	case failed = <-served: // a listener failed
		running--
	case <-ctx.Done():
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if hs != nil {
		// /debug/pprof/profile and trace may run for seconds: they get the
		// same grace as RPCs, then are cut.
		if err := hs.Shutdown(stopCtx); err != nil {
			_ = hs.Close()
		}
	}
	srv.Stop(stopCtx)
	for ; running > 0; running-- {
		failed = errors.Join(failed, <-served)
	}
	return failed
}

// config checks the options other than the mode and turns them into the
// server's Config; its errors name the flag at fault.
func (o Options) config() (server.Config, error) {
	sc, ok := map[string]workload.Scenario{"A": workload.ScenarioA, "B": workload.ScenarioB, "C": workload.ScenarioC}[strings.ToUpper(o.Scenario)]
	if !ok {
		return server.Config{}, fmt.Errorf("-scenario %q: want A, B or C", o.Scenario)
	}
	if o.Accounts == 0 || o.Accounts > workload.MaxAccounts {
		return server.Config{}, fmt.Errorf("-accounts %d: want 1..%d", o.Accounts, workload.MaxAccounts)
	}
	if o.Balance <= 0 {
		return server.Config{}, fmt.Errorf("-balance %d: want > 0", o.Balance)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"queue-size", o.QueueSize}, {"batch-limit", o.BatchLimit}, {"shards", o.Shards}} {
		if f.v < 0 {
			return server.Config{}, fmt.Errorf("-%s %d: want >= 0", f.name, f.v)
		}
	}
	if o.MaxInflight < 0 {
		return server.Config{}, fmt.Errorf("-max-inflight %d: want a count >= 0 (0: no bound)", o.MaxInflight)
	}
	if o.MaxCalls < 0 {
		return server.Config{}, fmt.Errorf("-max-calls %d: want a count >= 0 (0: no bound)", o.MaxCalls)
	}
	if o.Work < 0 {
		return server.Config{}, fmt.Errorf("-work %v: want >= 0", o.Work)
	}
	if o.CallWork < 0 {
		return server.Config{}, fmt.Errorf("-call-work %v: want >= 0", o.CallWork)
	}
	if !slices.Contains(work.Kinds(), o.WorkKind) {
		return server.Config{}, fmt.Errorf("-work-kind %q: want one of %s", o.WorkKind, strings.Join(work.Kinds(), ", "))
	}
	if o.SpinBudget < 0 {
		return server.Config{}, fmt.Errorf("-spin-budget %v: want >= 0", o.SpinBudget)
	}
	if !slices.Contains(server.Durabilities(), o.Durability) {
		return server.Config{}, fmt.Errorf("-durability %q: want one of %s", o.Durability, strings.Join(server.Durabilities(), ", "))
	}
	if o.Durability == server.DurabilityWAL && o.DataDir == "" {
		return server.Config{}, fmt.Errorf("-durability %s needs -data-dir", o.Durability)
	}
	if o.Durability != server.DurabilityWAL && o.DataDir != "" {
		return server.Config{}, fmt.Errorf("-data-dir is only used with -durability %s", server.DurabilityWAL)
	}
	if o.SnapshotEvery < 0 {
		return server.Config{}, fmt.Errorf("-snapshot-every %d: want >= 0", o.SnapshotEvery)
	}
	if err := o.checkBackend(); err != nil {
		return server.Config{}, err
	}
	if o.RequireKey != "" {
		if err := server.ValidKeyHeader(o.RequireKey); err != nil {
			return server.Config{}, fmt.Errorf("-require-key %q: %v", o.RequireKey, err)
		}
	}
	return server.Config{
		Mode:          o.Mode,
		Bank:          workload.BankConfig{Scenario: sc, Accounts: uint32(o.Accounts), InitialBalance: o.Balance},
		SampleEvery:   o.SampleEvery,
		Store:         store.Config{QueueSize: o.QueueSize, BatchLimit: o.BatchLimit, Shards: o.Shards, RejectWhenFull: o.RejectFull, SpinBudget: o.SpinBudget},
		MaxInflight:   o.MaxInflight,
		MaxCalls:      o.MaxCalls,
		Work:          o.Work,
		WorkKind:      o.WorkKind,
		CallWork:      o.CallWork,
		Durability:    o.Durability,
		DataDir:       o.DataDir,
		SnapshotEvery: o.SnapshotEvery,
		Backend:       o.Backend,
		DB:            dbbank.Config{DSN: o.DBDSN, Pool: o.DBPool, RedisAddr: o.RedisAddr, Owner: o.DBOwner, NoFencing: o.DBNoFencing},
		RequireKey:    o.RequireKey,
	}, nil
}
