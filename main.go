// Command locklab serves locklab's gRPC API over the state design chosen with
// -mode: `go run main.go -mode inputQ` or `-mode mutex` (and noop, the
// harness's ceiling). See README.md and DESIGN.md §4.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

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
// find a server started on port 0, and nothing per request.
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
		list     = fs.Bool("list-modes", false, "print the modes, one per line with the workloads each serves, and exit")
		work     = fs.Duration("work", 0, "CPU work added inside every state-changing command's critical section (a calibrated spin, e.g. 10us)")
		dur      = fs.String("durability", server.DurabilityNone, "none, or wal: log every state-changing command and make it durable before answering; recover from -data-dir on start")
		dataDir  = fs.String("data-dir", "", "directory of the write-ahead logs (-durability wal); created if missing")
		snapEv   = fs.Int("snapshot-every", 0, "with -durability wal, snapshot each workload's state every N logged commands, bounding replay at start (0: 100000)")
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
	if *list {
		for _, m := range server.Modes() {
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
	srv, err := server.New(server.Config{
		Mode:          *mode,
		Bank:          workload.BankConfig{Scenario: sc, Accounts: uint32(*accounts), InitialBalance: *balance},
		SampleEvery:   *sample,
		Store:         store.Config{QueueSize: *queue, BatchLimit: *batch, Shards: *shards},
		Work:          *work,
		Durability:    *dur,
		DataDir:       *dataDir,
		SnapshotEvery: *snapEv,
		Logger:        log.New(stderr, "locklab: ", 0),
	})
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
	fmt.Fprintf(stderr, "locklab: mode=%s listening on %s\n", *mode, lis.Addr())

	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }() // owned by run: joined below
	select {
	case err := <-served: // the listener failed
		srv.Stop(context.Background())
		return err
	case <-ctx.Done():
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), *grace)
	defer cancel()
	srv.Stop(stopCtx)
	if err := <-served; err != nil {
		return err
	}
	fmt.Fprintf(stderr, "locklab: mode=%s stopped\n", *mode)
	return nil
}
