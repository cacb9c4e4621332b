// Command locklab serves locklab's gRPC API over the state design chosen with
// -mode: `go run main.go -mode inputQ`, `-mode mutex` or any other design of
// the registry (and noop, the harness's ceiling). This file declares the
// flags; package server/serve does the rest. See README.md and
// docs/design.md §the-server. With -backend mysql the bank's state lives in
// a database (docs/database.md).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/locklab/locklab/internal/work"
	"github.com/locklab/locklab/server"
	"github.com/locklab/locklab/server/serve"
)

func main() {
	o := serve.Defaults()
	fs := flag.NewFlagSet("locklab", flag.ContinueOnError)
	fs.StringVar(&o.Mode, "mode", o.Mode, "the state design: "+server.ModeNames()+" (required)")
	fs.StringVar(&o.Addr, "addr", o.Addr, "listen address (loopback unless asked)")
	fs.UintVar(&o.Accounts, "accounts", o.Accounts, "bank accounts at start")
	fs.Int64Var(&o.Balance, "balance", o.Balance, "initial balance of a funded account")
	fs.StringVar(&o.Scenario, "scenario", o.Scenario, "bank scenario at start: A (all funded), B (even ids at 0), C (all at 0)")
	fs.DurationVar(&o.Grace, "grace", o.Grace, "on SIGINT/SIGTERM, how long RPCs in flight may finish before they are cancelled")
	fs.Uint64Var(&o.SampleEvery, "sample-every", o.SampleEvery, "measure the store time of one command in N, chosen at random (a power of two; 1: every command)")
	fs.IntVar(&o.QueueSize, "queue-size", o.QueueSize, "owner designs: capacity of each owner's queue")
	fs.IntVar(&o.BatchLimit, "batch-limit", o.BatchLimit, "inputQ-batch: commands applied (and committed) per batch")
	fs.IntVar(&o.Shards, "shards", o.Shards, "sharded designs: shard count")
	fs.DurationVar(&o.SpinBudget, "spin-budget", o.SpinBudget, "inputQ-spin: how long the idle owner polls its queue, and a caller its answer, before it parks (0: the default)")
	fs.BoolVar(&o.ListModes, "list-modes", o.ListModes, "print the modes that can run with the other flags given (-durability), one per line with the workloads each serves, and exit")
	fs.DurationVar(&o.Work, "work", o.Work, "CPU work added inside every state-changing command's critical section (a calibrated spin, e.g. 10us)")
	fs.DurationVar(&o.CallWork, "call-work", o.CallWork, "CPU spun in every data call outside the stores, before its handler (a spin timed by the clock): a cost the same whatever the design; the lab's known answer")
	fs.StringVar(&o.WorkKind, "work-kind", o.WorkKind, "how -work is spent: "+strings.Join(work.Kinds(), " or ")+" (sleep: the same time off the CPU, a wait inside the critical section)")
	fs.StringVar(&o.Durability, "durability", o.Durability, "none, or wal: log every state-changing command and make it durable before answering; recover from -data-dir on start")
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir, "directory of the write-ahead logs (-durability wal); created if missing")
	fs.IntVar(&o.SnapshotEvery, "snapshot-every", o.SnapshotEvery, "with -durability wal, snapshot each workload's state every N logged commands, bounding replay at start (0: 100000)")
	fs.BoolVar(&o.Version, "version", o.Version, "print the version (module, VCS revision, Go) and exit")
	fs.IntVar(&o.MaxInflight, "max-inflight", o.MaxInflight, "admission control: at most N data calls inside the store at once, over every workload; one more is answered RESOURCE_EXHAUSTED at once (0: no bound)")
	fs.IntVar(&o.MaxCalls, "max-calls", o.MaxCalls, "admission control before decoding: at most N data calls in the server at once (from their headers to their answer); one more is refused by the transport with RESOURCE_EXHAUSTED before a handler runs (0: no bound)")
	fs.BoolVar(&o.RejectFull, "reject-when-full", o.RejectFull, "owner designs: answer RESOURCE_EXHAUSTED at once when the owner's queue is full, instead of waiting for room")
	fs.StringVar(&o.MetricsAddr, "metrics-addr", o.MetricsAddr, "serve Prometheus /metrics and /debug/pprof/ over HTTP here (off if empty; a bare port such as 9090 or :9090 means 127.0.0.1)")
	fs.StringVar(&o.Backend, "backend", o.Backend, "where the bank's state lives: "+strings.Join(server.Backends(), " or ")+" (a MariaDB/MySQL database; the counter and kv stay in memory)")
	fs.StringVar(&o.DBDSN, "db-dsn", o.DBDSN, "-backend mysql: the database, as a go-sql-driver DSN (user@unix(/path/sock)/db or user:pw@tcp(host:3306)/db); empty starts a private MariaDB in a temporary directory for the server's lifetime")
	fs.IntVar(&o.DBPool, "db-pool", o.DBPool, "-backend mysql: database connections open at most")
	fs.StringVar(&o.Cache, "cache", o.Cache, "-backend mysql: none, or redis: a cache-aside for balances and histories, invalidated by every transfer before it is answered")
	fs.StringVar(&o.RedisAddr, "redis-addr", o.RedisAddr, "-cache redis: the Redis server's host:port; empty starts a private Redis for the server's lifetime")
	fs.StringVar(&o.DBTemplate, "db-template", o.DBTemplate, "-backend mysql without -db-dsn: copy the private MariaDB's data directory from this one (made by mariadb-install-db, used by no server) instead of installing one")
	fs.StringVar(&o.DBOwner, "db-owner", o.DBOwner, "-backend mysql, -mode routed-owner: this replica's name in the database's ownership table (empty: host name/process id)")
	fs.BoolVar(&o.DBNoFencing, "db-no-fencing", o.DBNoFencing, "-backend mysql, -mode routed-owner: skip the epoch check of every write-through. A control for tests only: a replica that lost its accounts then overwrites the new owner's changes")
	fs.StringVar(&o.RequireKey, "require-key", o.RequireKey, "refuse (INVALID_ARGUMENT) every data call that does not carry this request header, e.g. x-key: for replicas behind a balancer that routes by it (empty: no header needed)")
	fs.Usage = func() {
		serve.PrintUsage(fs.Output())
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	} else if err != nil {
		os.Exit(2) // flag has printed the error and the usage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "locklab: unexpected arguments %q; modes: %s\n", fs.Args(), server.ModeNames())
		os.Exit(2)
	}
	os.Exit(serve.Main(o))
}
