// Command locklab serves locklab's gRPC API over the state design chosen with
// -mode: `go run main.go -mode inputQ`, `-mode mutex` or any other design of
// the registry (and noop, the harness's ceiling). See README.md and
// docs/design.md §the-server.
package main

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
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/locklab/locklab/server"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workload"
)

// errUsage marks errors in the command line: exit status 2, as flag does.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "locklab:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends (SIGINT, SIGTERM), then stops gracefully. It
// prints one line to stderr once it listens —
// "locklab: mode=<mode> listening on <host:port>" — which tools parse to
// find a server started on port 0, and nothing per request. With
// -metrics-addr a second line follows:
// "locklab: mode=<mode> metrics on http://<host:port>/metrics".
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("locklab", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		mode     = fs.String("mode", "", "the state design: "+server.ModeNames()+" (required)")
		addr     = fs.String("addr", "127.0.0.1:50055", "listen address (loopback unless asked)")
		accounts = fs.Uint("accounts", workload.DefaultAccounts, "bank accounts at start")
		balance  = fs.Int64("balance", workload.DefaultInitialBalance, "initial balance of a funded account")
		scenario = fs.String("scenario", "A", "bank scenario at start: A (all funded), B (even ids at 0), C (all at 0)")
		grace    = fs.Duration("grace", 5*time.Second, "on SIGINT/SIGTERM, how long RPCs in flight may finish before they are cancelled")
		sample   = fs.Uint64("sample-every", server.DefaultSampleEvery, "measure the store time of one command in N, chosen at random (a power of two; 1: every command)")
		queue    = fs.Int("queue-size", store.DefaultQueueSize, "owner designs: capacity of each owner's queue")
		batch    = fs.Int("batch-limit", store.DefaultBatchLimit, "inputQ-batch: commands applied (and committed) per batch")
		shards   = fs.Int("shards", store.DefaultShards, "sharded designs: shard count")
		list     = fs.Bool("list-modes", false, "print the modes that can run with the other flags given (-durability), one per line with the workloads each serves, and exit")
		work     = fs.Duration("work", 0, "CPU work added inside every state-changing command's critical section (a calibrated spin, e.g. 10us)")
		dur      = fs.String("durability", server.DurabilityNone, "none, or wal: log every state-changing command and make it durable before answering; recover from -data-dir on start")
		dataDir  = fs.String("data-dir", "", "directory of the write-ahead logs (-durability wal); created if missing")
		snapEv   = fs.Int("snapshot-every", 0, "with -durability wal, snapshot each workload's state every N logged commands, bounding replay at start (0: 100000)")
		showVer  = fs.Bool("version", false, "print the version (module, VCS revision, Go) and exit")
		maxIn    = fs.Int("max-inflight", 0, "admission control: at most N data calls inside the store at once, over every workload; one more is answered RESOURCE_EXHAUSTED at once (0: no bound)")
		rejectQ  = fs.Bool("reject-when-full", false, "owner designs: answer RESOURCE_EXHAUSTED at once when the owner's queue is full, instead of waiting for room")
		metrics  = fs.String("metrics-addr", "", "serve Prometheus /metrics and /debug/pprof/ over HTTP here (off if empty; a bare port such as 9090 or :9090 means 127.0.0.1)")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: locklab -mode MODE [flags]\n\nmodes:\n")
		for _, m := range server.Modes() {
			fmt.Fprintf(stderr, "  %-15s %s\n", m.Name, m.Doc)
			if d, ok := m.Design(); ok {
				var unserved []string
				for _, wl := range server.Workloads() {
					if !m.Serves(wl) {
						unserved = append(unserved, wl)
					}
				}
				if len(unserved) > 0 {
					fmt.Fprintf(stderr, "  %-15s (serves no %s: needs %s)\n", "", strings.Join(unserved, ", "), d.Needs)
				}
			}
		}
		fmt.Fprintf(stderr, "\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage // flag has printed the error and the usage
	}
	if *showVer {
		fmt.Fprintln(stdout, version())
		return nil
	}
	if *list {
		for _, m := range server.Modes() {
			if m.CanRun(*dur) != nil {
				continue // the list answers "what can run with these flags"
			}
			line := []string{m.Name}
			for _, wl := range server.Workloads() {
				if m.Serves(wl) {
					line = append(line, wl)
				}
			}
			fmt.Fprintln(stdout, strings.Join(line, " "))
		}
		return nil
	}
	usage := func(format string, a ...any) error {
		fmt.Fprintf(stderr, "locklab: "+format+"\n", a...)
		return errUsage
	}
	if fs.NArg() > 0 {
		return usage("unexpected arguments %q; modes: %s", fs.Args(), server.ModeNames())
	}
	if _, err := server.LookupMode(*mode); err != nil {
		return usage("-mode: %v", err)
	}
	sc, ok := map[string]workload.Scenario{"A": workload.ScenarioA, "B": workload.ScenarioB, "C": workload.ScenarioC}[strings.ToUpper(*scenario)]
	if !ok {
		return usage("-scenario %q: want A, B or C", *scenario)
	}
	if *accounts == 0 || *accounts > workload.MaxAccounts {
		return usage("-accounts %d: want 1..%d", *accounts, workload.MaxAccounts)
	}
	if *balance <= 0 {
		return usage("-balance %d: want > 0", *balance)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"queue-size", *queue}, {"batch-limit", *batch}, {"shards", *shards}} {
		if f.v < 0 {
			return usage("-%s %d: want >= 0", f.name, f.v)
		}
	}
	if *maxIn < 0 {
		return usage("-max-inflight %d: want a count >= 0 (0: no bound)", *maxIn)
	}
	if *work < 0 {
		return usage("-work %v: want >= 0", *work)
	}
	if !slices.Contains(server.Durabilities(), *dur) {
		return usage("-durability %q: want one of %s", *dur, strings.Join(server.Durabilities(), ", "))
	}
	if *dur == server.DurabilityWAL && *dataDir == "" {
		return usage("-durability %s needs -data-dir", *dur)
	}
	if *dur != server.DurabilityWAL && *dataDir != "" {
		return usage("-data-dir is only used with -durability %s", server.DurabilityWAL)
	}
	if *snapEv < 0 {
		return usage("-snapshot-every %d: want >= 0", *snapEv)
	}
	cfg := server.Config{
		Mode:          *mode,
		Bank:          workload.BankConfig{Scenario: sc, Accounts: uint32(*accounts), InitialBalance: *balance},
		SampleEvery:   *sample,
		Store:         store.Config{QueueSize: *queue, BatchLimit: *batch, Shards: *shards, RejectWhenFull: *rejectQ},
		MaxInflight:   *maxIn,
		Work:          *work,
		Durability:    *dur,
		DataDir:       *dataDir,
		SnapshotEvery: *snapEv,
		Logger:        log.New(stderr, "locklab: ", 0),
	}
	var reg *prometheus.Registry
	if *metrics != "" {
		a, err := loopbackIfBare(*metrics)
		if err != nil {
			return usage("-metrics-addr %q: %v", *metrics, err)
		}
		*metrics = a
		reg = server.NewMetricsRegistry()
		cfg.Metrics = reg
	}
	srv, err := server.New(cfg)
	if errors.Is(err, server.ErrDataDir) {
		return err // a runtime failure: status 1, not a usage error
	}
	if err != nil {
		return usage("%v", err)
	}
	lis, err := net.Listen("tcp", *addr)
	if err != nil {
		srv.Stop(context.Background())
		return err
	}
	var mlis net.Listener
	if reg != nil {
		if mlis, err = net.Listen("tcp", *metrics); err != nil {
			_ = lis.Close()
			srv.Stop(context.Background())
			return fmt.Errorf("-metrics-addr: %w", err)
		}
	}
	fmt.Fprintf(stderr, "locklab: mode=%s listening on %s\n", *mode, lis.Addr())
	if mlis != nil {
		fmt.Fprintf(stderr, "locklab: mode=%s metrics on http://%s/metrics\n", *mode, mlis.Addr())
	}

	// Both servers report on one channel; run waits for as many answers as
	// it started servers.
	served := make(chan error, 2)
	running := 1
	go func() { served <- srv.Serve(lis) }() // owned by run: joined below
	var hs *http.Server
	if mlis != nil {
		hs = &http.Server{Handler: server.MetricsHandler(reg), ReadHeaderTimeout: 10 * time.Second}
		running++
		go func() { // owned by run: joined below
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
	stopCtx, cancel := context.WithTimeout(context.Background(), *grace)
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
	if failed != nil {
		return failed
	}
	fmt.Fprintf(stderr, "locklab: mode=%s stopped\n", *mode)
	return nil
}

// version describes the build from what the Go toolchain recorded in it:
// the module version ("(devel)" for a build from a checkout), the VCS
// revision and time when the build stamped them (not with -buildvcs=false),
// and the Go version.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "locklab (no build information)"
	}
	v := "locklab " + bi.Main.Version
	var rev, at, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		v += " " + rev
		if modified == "true" {
			v += "+dirty"
		}
		if at != "" {
			v += " " + at
		}
	}
	return v + " " + bi.GoVersion
}

// loopbackIfBare turns a bare port ("9090" or ":9090") into 127.0.0.1:port,
// so that the metrics and profiles are not served beyond this machine unless
// a host is named ("0.0.0.0:9090").
func loopbackIfBare(addr string) (string, error) {
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("port %q: want a number 0..65535", port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}
