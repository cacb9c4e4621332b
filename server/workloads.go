package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"google.golang.org/grpc"

	"github.com/locklab/locklab/internal/work"
	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/server/internal/durable"
	"github.com/locklab/locklab/server/internal/wal"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workload"
	"github.com/locklab/locklab/workload/dbbank"
)

// workloads is the server's one list of workloads, in the order of the API.
// Everything in the server that deals with a workload ranges over it: which
// modes serve it (-list-modes, -help), its machine and its log in
// DataDir/<name>, its stores, its store latency and serial demand, its gRPC
// service and health, Reset and GetStats. A workload is one row here, made by
// def from its typed parts; what stays a file of its own is the machine
// (package workload), the service in proto/locklab/v1/locklab.proto, and the
// handlers that turn its requests into commands (services.go).
var workloads = []workloadDef{
	def[workload.CounterCmd, int64]{
		name: "counter", ops: []string{1: "increment", 2: "get", 3: "reset"},
		service: &pb.CounterService_ServiceDesc,
		machine: func(Config) (store.Machine[workload.CounterCmd, int64], durable.Codec[workload.CounterCmd, int64], error) {
			c := workload.NewCounter()
			return c, workload.CounterLog{C: c}, nil
		},
		op: func(c workload.CounterCmd) int { return int(c.Op) },
		register: func(s *grpc.Server, d *data[workload.CounterCmd, int64]) {
			pb.RegisterCounterServiceServer(s, &counterService{d: d})
		},
		noop: func(s *grpc.Server) { pb.RegisterCounterServiceServer(s, noopCounter{}) },
		reset: func(*pb.ResetRequest) (workload.CounterCmd, error) {
			return workload.CounterCmd{Op: workload.CounterReset}, nil
		},
		stats: func(ctx context.Context, s store.Store[workload.CounterCmd, int64], out *pb.GetStatsResponse) error {
			v, err := s.Do(ctx, workload.CounterCmd{Op: workload.CounterGet})
			out.CounterValue = v
			return err
		},
	},
	def[workload.BankCmd, workload.BankResult]{
		name: "bank", ops: []string{1: "transfer", 2: "balance", 3: "history", 4: "reset", 5: "summary"},
		service: &pb.BankService_ServiceDesc,
		machine: func(cfg Config) (store.Machine[workload.BankCmd, workload.BankResult], durable.Codec[workload.BankCmd, workload.BankResult], error) {
			b, err := workload.NewBank(cfg.Bank)
			return b, workload.BankLog{B: b}, err
		},
		inDB: &remote[workload.BankCmd, workload.BankResult]{
			caps: store.CapabilitiesOf[workload.BankCmd, workload.BankResult](&dbbank.Bank{}),
			open: func(cfg Config) (store.Machine[workload.BankCmd, workload.BankResult], io.Closer, error) {
				db := cfg.DB
				db.Bank = cfg.Bank
				b, err := dbbank.Open(context.Background(), db)
				if err != nil {
					return nil, nil, fmt.Errorf("%w: %w", ErrBackend, err)
				}
				return b, b, nil
			},
		},
		op: func(c workload.BankCmd) int { return int(c.Op) },
		register: func(s *grpc.Server, d *data[workload.BankCmd, workload.BankResult]) {
			pb.RegisterBankServiceServer(s, &bankService{d: d})
		},
		noop: func(s *grpc.Server) { pb.RegisterBankServiceServer(s, noopBank{}) },
		// The bank is made from the request; a request out of range is
		// refused before any workload is reset, served or not.
		reset: func(r *pb.ResetRequest) (workload.BankCmd, error) {
			// The enum is an int32 on the wire and workload.Scenario a
			// uint8: check before narrowing, or 257 would pass as A's 1.
			if sc := r.GetScenario(); sc < 0 || sc > math.MaxUint8 {
				return workload.BankCmd{}, workload.ErrScenario
			}
			cfg := workload.BankConfig{Scenario: workload.Scenario(r.GetScenario()), Accounts: r.GetAccounts(), InitialBalance: r.GetInitialBalance()}
			return workload.BankCmd{Op: workload.BankReset, Config: cfg}, cfg.Check()
		},
		stats: func(ctx context.Context, s store.Store[workload.BankCmd, workload.BankResult], out *pb.GetStatsResponse) error {
			sum, err := s.Do(ctx, workload.BankCmd{Op: workload.BankSummary})
			out.TotalBalance, out.MinBalance, out.Accounts, out.Transfers = sum.Total, sum.MinBalance, sum.Accounts, sum.Seq
			return err
		},
	},
	def[workload.KVCmd, workload.KVResult]{
		name: "kv", ops: []string{1: "put", 2: "get", 3: "reset", 4: "len"},
		service: &pb.KVService_ServiceDesc,
		machine: func(Config) (store.Machine[workload.KVCmd, workload.KVResult], durable.Codec[workload.KVCmd, workload.KVResult], error) {
			kv := workload.NewKV()
			return kv, workload.KVLog{KV: kv}, nil
		},
		op: func(c workload.KVCmd) int { return int(c.Op) },
		register: func(s *grpc.Server, d *data[workload.KVCmd, workload.KVResult]) {
			pb.RegisterKVServiceServer(s, &kvService{d: d})
		},
		noop:  func(s *grpc.Server) { pb.RegisterKVServiceServer(s, noopKV{}) },
		reset: func(*pb.ResetRequest) (workload.KVCmd, error) { return workload.KVCmd{Op: workload.KVReset}, nil },
		stats: func(ctx context.Context, s store.Store[workload.KVCmd, workload.KVResult], out *pb.GetStatsResponse) error {
			n, err := s.Do(ctx, workload.KVCmd{Op: workload.KVLen})
			out.KvKeys = n.Version
			return err
		},
	},
}

// Workloads are the names of the server's workloads, in the order of the API.
func Workloads() []string {
	names := make([]string, len(workloads))
	for i, w := range workloads {
		names[i] = w.Name()
	}
	return names
}

// workloadDef is a row of workloads with its command types erased.
type workloadDef interface {
	Name() string
	// opName names an op code of the workload as the report shows it.
	opName(op int) string
	numOps() int
	desc() *grpc.ServiceDesc
	// caps are what the workload's machine can do on backend (one of
	// Backends): the designs that serve it follow.
	caps(backend string) store.Capability
	// hasBackend reports whether the workload's state can live on backend
	// (every workload lives in memory).
	hasBackend(backend string) bool
	registerNoop(*grpc.Server)
	// checkReset refuses a Reset request the workload cannot apply.
	checkReset(*pb.ResetRequest) error
	// instance makes the workload's machine for cfg, with spin's work in
	// every state change (nil: none).
	instance(cfg Config, spin *work.Spinner) (instance, error)
}

// instance is one workload in one server: its machine, its log and its
// stores, with the command types erased.
type instance interface {
	// openLog recovers the machine from the log in dir and logs every
	// state change from now on.
	openLog(dir string, opts wal.Options) (*wal.Log, wal.RecoveryInfo, error)
	// serve wraps the machine in design d, measured as workload wl and
	// bounded by in; a design that cannot serve it leaves the refusal the
	// data RPCs answer.
	serve(mode Mode, cfg store.Config, m *metrics, wl int, in *inflight) error
	register(*grpc.Server)
	reset(context.Context, *pb.ResetRequest) error
	stats(context.Context, *pb.GetStatsResponse) error
	// served is false for a workload the design refused.
	served() bool
	queue() store.QueueReporter   // nil unless an owner design serves it
	serial() store.SerialReporter // nil if not served
	close() error
}

// def is a workload's typed parts.
type def[C, R any] struct {
	name    string
	ops     []string // by op code; "" for a code with no name
	service *grpc.ServiceDesc
	// machine makes the workload's machine for cfg, and the codec of its
	// log over that same machine.
	machine func(cfg Config) (store.Machine[C, R], durable.Codec[C, R], error)
	// op is a command's op code, the index into ops.
	op func(C) int
	// register serves the service's RPCs through d; noop with empty answers.
	register func(s *grpc.Server, d *data[C, R])
	noop     func(s *grpc.Server)
	// reset is the command Reset applies, or why the request is refused.
	reset func(*pb.ResetRequest) (C, error)
	// stats fills the workload's fields of GetStats, read through s.
	stats func(ctx context.Context, s store.Store[C, R], out *pb.GetStatsResponse) error
	// inDB is the workload's machine over a database (BackendMySQL); nil
	// if its state lives only in memory.
	inDB *remote[C, R]
}

// remote is a workload's machine whose state lives in a database.
type remote[C, R any] struct {
	caps store.Capability // what the machine can do, known without connecting
	// open connects to cfg.DB; the closer releases the connections once
	// the store is closed.
	open func(cfg Config) (store.Machine[C, R], io.Closer, error)
}

func (d def[C, R]) Name() string { return d.name }

func (d def[C, R]) opName(op int) string {
	if op >= 0 && op < len(d.ops) && d.ops[op] != "" {
		return d.ops[op]
	}
	return fmt.Sprintf("op%d", op)
}

func (d def[C, R]) numOps() int                         { return len(d.ops) }
func (d def[C, R]) desc() *grpc.ServiceDesc             { return d.service }
func (d def[C, R]) registerNoop(s *grpc.Server)         { d.noop(s) }
func (d def[C, R]) checkReset(r *pb.ResetRequest) error { _, err := d.reset(r); return err }

func (d def[C, R]) hasBackend(backend string) bool {
	return backend == BackendMemory || backend == BackendMySQL && d.inDB != nil
}

func (d def[C, R]) caps(backend string) store.Capability {
	if backend == BackendMySQL && d.inDB != nil {
		return d.inDB.caps
	}
	m, _, err := d.machine(Config{})
	if err != nil {
		return 0
	}
	return store.CapabilitiesOf(m)
}

func (d def[C, R]) instance(cfg Config, spin *work.Spinner) (instance, error) {
	var in *inst[C, R]
	if cfg.Backend == BackendMySQL && d.inDB != nil {
		m, closer, err := d.inDB.open(cfg)
		if err != nil {
			return nil, err
		}
		in = &inst[C, R]{def: d, m: m, data: &data[C, R]{}, closer: closer}
	} else {
		bare, codec, err := d.machine(cfg)
		if err != nil {
			return nil, err
		}
		in = &inst[C, R]{def: d, m: bare, codec: codec, data: &data[C, R]{}}
	}
	if spin != nil {
		in.m = work.New(in.m, *spin)
	}
	return in, nil
}

// data is a workload's store as its data RPCs see it: measured and bounded,
// or nil with the refusal they answer.
type data[C, R any] struct {
	store   store.Store[C, R]
	refused error
}

func (d *data[C, R]) Do(ctx context.Context, cmd C) (R, error) {
	if d.store == nil {
		var zero R
		return zero, d.refused
	}
	return d.store.Do(ctx, cmd)
}

// inst is an instance of def.
type inst[C, R any] struct {
	def   def[C, R]
	m     store.Machine[C, R] // as the design gets it: with work, and logged
	codec durable.Codec[C, R] // nil for a machine over a database
	// closer releases a database machine's connections once its store is
	// closed (nil: nothing to release).
	closer io.Closer
	// bare serves Reset and GetStats, so that they are not in the latency
	// the window reports; data serves the data RPCs.
	bare store.Store[C, R]
	data *data[C, R]
	q    store.QueueReporter
	sr   store.SerialReporter
}

func (in *inst[C, R]) openLog(dir string, opts wal.Options) (*wal.Log, wal.RecoveryInfo, error) {
	d, info, err := durable.Open(dir, in.m, in.codec, opts)
	if err != nil {
		return nil, info, fmt.Errorf("%w: %w", ErrDataDir, err)
	}
	in.m = d
	return d.Log(), info, nil
}

func (in *inst[C, R]) serve(mode Mode, cfg store.Config, m *metrics, wl int, lim *inflight) error {
	s, err := store.Wrap(*mode.design, in.m, cfg)
	if errors.Is(err, store.ErrUnsupported) {
		in.data.refused = fmt.Errorf("%w: mode %s does not serve workload %s: %w", errNotServed, mode.Name, in.def.name, err)
		return nil
	}
	if err != nil {
		return err
	}
	in.bare = s
	if q, ok := s.(store.QueueReporter); ok && mode.design.Owner {
		in.q = q
	}
	if r, ok := s.(store.SerialReporter); ok {
		in.sr = r
	}
	in.data.store = bound(measure(s, m, wl, in.def.op), lim)
	return nil
}

func (in *inst[C, R]) register(s *grpc.Server)      { in.def.register(s, in.data) }
func (in *inst[C, R]) served() bool                 { return in.bare != nil }
func (in *inst[C, R]) queue() store.QueueReporter   { return in.q }
func (in *inst[C, R]) serial() store.SerialReporter { return in.sr }

func (in *inst[C, R]) reset(ctx context.Context, r *pb.ResetRequest) error {
	cmd, err := in.def.reset(r)
	if err != nil || in.bare == nil {
		return err
	}
	_, err = in.bare.Do(ctx, cmd)
	return err
}

func (in *inst[C, R]) stats(ctx context.Context, out *pb.GetStatsResponse) error {
	if in.bare == nil {
		return nil
	}
	return in.def.stats(ctx, in.bare, out)
}

func (in *inst[C, R]) close() error {
	var err error
	if in.bare != nil {
		err = in.bare.Close()
	}
	if in.closer != nil {
		err = errors.Join(err, in.closer.Close())
		in.closer = nil
	}
	return err
}
