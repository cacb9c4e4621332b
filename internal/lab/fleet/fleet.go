// Package fleet runs several locklab replicas behind one balancer, over one
// shared database or each with its state in memory, and does to them what
// happens to replicas in production: a replica killed with SIGKILL, drained
// and stopped, paused with SIGSTOP past its ownership and resumed, or added.
// Its client (Transfer) sends every transfer with its key and a request id
// and retries a call of unknown outcome with the same id; its checker
// (Check) counts, in the database, money created or destroyed, balances
// that disagree with the recorded transfers, acknowledged transfers lost and
// transfers applied more than once.
//
// The replicas listen on loopback ports and are reached through the
// balancer (internal/lab/balancer), which routes by the key header or round
// robin. Every process is started through internal/lab/proc and stopped by
// Close.
package fleet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/locklab/locklab/backend"
	"github.com/locklab/locklab/internal/lab/balancer"
	"github.com/locklab/locklab/internal/lab/proc"
	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/workload"
)

// Config says what fleet to start. Mode and Bin are required; the rest have
// defaults.
type Config struct {
	// Bin is the locklab binary (proc.Build).
	Bin string
	// Mode is every replica's -mode.
	Mode string
	// Replicas is how many to start; 0 means 2.
	Replicas int
	// DSN is the database the replicas share (-backend mysql -db-dsn);
	// empty means -backend memory, every replica with a bank of its own.
	DSN string
	// Balancer is a name of balancer.Kinds; "" means haproxy (the one with
	// a runtime API, for Drain).
	Balancer string
	// Policy is one of balancer.Policies; "" means balancer.Key.
	Policy string
	// Bank is the bank every replica starts with (with a database: the
	// first replica seeds it); zero fields take the server's defaults.
	Bank workload.BankConfig
	// Args gives replica i's extra flags (e.g. -db-no-fencing); nil: none.
	Args func(i int) []string
}

// Fleet is the running replicas and their balancer. Its owner calls Close.
type Fleet struct {
	cfg      Config
	kind     balancer.Kind
	replicas []*proc.Server // by number; every one started, stopped or not
	down     []bool         // stopped or killed: left out of a new balancer
	lb       *balancer.Balancer
	cc       *grpc.ClientConn
}

// Start starts cfg.Replicas replicas one after the other (the first seeds an
// empty database, the others find it seeded) and the balancer in front of
// them, and dials the balancer. On failure it stops what it started.
func Start(cfg Config) (*Fleet, error) {
	if cfg.Bin == "" || cfg.Mode == "" {
		return nil, errors.New("fleet: Config.Bin and Config.Mode are required")
	}
	cfg.Replicas = cmp.Or(cfg.Replicas, 2)
	cfg.Policy = cmp.Or(cfg.Policy, balancer.Key)
	k, err := balancer.Lookup(cmp.Or(cfg.Balancer, "haproxy"))
	if err != nil {
		return nil, err
	}
	f := &Fleet{cfg: cfg, kind: k}
	for range cfg.Replicas {
		if _, err := f.startReplica(); err != nil {
			return nil, errors.Join(err, f.Close())
		}
	}
	if err := f.startBalancer(); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return f, nil
}

// Name is replica i's name: its -db-owner, as the ownership table shows it.
func Name(i int) string { return "r" + strconv.Itoa(i) }

func (f *Fleet) startReplica() (int, error) {
	i := len(f.replicas)
	args := []string{"-mode", f.cfg.Mode, "-addr", "127.0.0.1:0", "-require-key", balancer.KeyHeader, "-grace", "2s"}
	if f.cfg.Bank.Accounts != 0 {
		args = append(args, "-accounts", strconv.FormatUint(uint64(f.cfg.Bank.Accounts), 10))
	}
	if f.cfg.Bank.InitialBalance != 0 {
		args = append(args, "-balance", strconv.FormatInt(f.cfg.Bank.InitialBalance, 10))
	}
	if f.cfg.DSN != "" {
		args = append(args, "-backend", backend.MySQL, "-db-dsn", f.cfg.DSN, "-db-owner", Name(i))
	}
	if f.cfg.Args != nil {
		args = append(args, f.cfg.Args(i)...)
	}
	s, err := proc.StartServer(exec.Command(f.cfg.Bin, args...))
	if err != nil {
		return 0, fmt.Errorf("fleet: replica %s: %w", Name(i), err)
	}
	f.replicas = append(f.replicas, s)
	f.down = append(f.down, false)
	return i, nil
}

// startBalancer starts a balancer over every replica started, in order (a
// replica that is down stays in the list: HAProxy's check marks it down,
// and the servers keep their names and their places on the hash ring), and
// dials it.
func (f *Fleet) startBalancer() error {
	var addrs []string
	for _, s := range f.replicas {
		addrs = append(addrs, s.Addr)
	}
	lb, err := balancer.Start(f.kind, balancer.Config{Policy: f.cfg.Policy, Backends: addrs})
	if err != nil {
		return err
	}
	cc, err := grpc.NewClient(lb.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return errors.Join(err, lb.Close())
	}
	f.lb, f.cc = lb, cc
	return nil
}

// Conn is a client connection to the balancer.
func (f *Fleet) Conn() *grpc.ClientConn { return f.cc }

// Replicas is how many replicas were started (down ones included).
func (f *Fleet) Replicas() int { return len(f.replicas) }

// Addr is replica i's own address, bypassing the balancer.
func (f *Fleet) Addr(i int) string { return f.replicas[i].Addr }

// Kill sends SIGKILL to replica i and waits until it is gone.
func (f *Fleet) Kill(i int) error {
	if err := f.signal(i, syscall.SIGKILL); err != nil {
		return err
	}
	f.down[i] = true
	select {
	case <-f.replicas[i].Exited():
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("fleet: replica %s still running 10s after SIGKILL", Name(i))
	}
}

// Pause stops replica i with SIGSTOP: it keeps its sockets, and the
// kernel keeps accepting connections and queueing calls for it.
func (f *Fleet) Pause(i int) error { return f.signal(i, syscall.SIGSTOP) }

// Resume continues replica i with SIGCONT.
func (f *Fleet) Resume(i int) error { return f.signal(i, syscall.SIGCONT) }

func (f *Fleet) signal(i int, sig syscall.Signal) error {
	if err := syscall.Kill(f.replicas[i].PID(), sig); err != nil {
		return fmt.Errorf("fleet: %v to replica %s: %w", sig, Name(i), err)
	}
	return nil
}

// Drain makes the balancer send replica i no new calls (HAProxy's drain
// state); calls in flight finish.
func (f *Fleet) Drain(i int) error { return f.lb.Drain(i) }

// Stop stops replica i gracefully: SIGTERM, the server's health turns
// NOT_SERVING, the calls in flight finish, and it exits.
func (f *Fleet) Stop(i int) error {
	f.down[i] = true
	return f.replicas[i].Stop()
}

// Add starts one more replica and replaces the balancer with one over every
// replica, the new one last: with the key policy's consistent hash, about
// 1/N of the keys move to it. The old connection is closed; Conn is the new
// one.
func (f *Fleet) Add() (int, error) {
	i, err := f.startReplica()
	if err != nil {
		return 0, err
	}
	old, oldLB := f.cc, f.lb
	f.cc, f.lb = nil, nil
	if err := errors.Join(old.Close(), oldLB.Close()); err != nil {
		return i, err
	}
	return i, f.startBalancer()
}

// Close stops the balancer and every replica (resuming a paused one first,
// so that it can stop), and reports the first failures.
func (f *Fleet) Close() error {
	var errs []error
	if f.cc != nil {
		errs = append(errs, f.cc.Close())
	}
	if f.lb != nil {
		errs = append(errs, f.lb.Close())
	}
	for i, s := range f.replicas {
		_ = syscall.Kill(s.PID(), syscall.SIGCONT)
		err := s.Stop()
		if f.down[i] {
			continue // killed or stopped by the test: its end is the test's
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Transfers is how many TransferMoney calls replica i has answered, asked of
// the replica itself, bypassing the balancer.
func (f *Fleet) Transfers(ctx context.Context, i int) (uint64, error) {
	cc, err := grpc.NewClient(f.replicas[i].Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return 0, err
	}
	defer cc.Close()
	st, err := pb.NewAdminServiceClient(cc).GetStats(ctx, &pb.GetStatsRequest{})
	if err != nil {
		return 0, err
	}
	return st.GetRpcCounts()[pb.BankService_TransferMoney_FullMethodName].GetTotal(), nil
}
