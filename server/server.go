package server

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/server/calltrace"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workload"
	"github.com/locklab/locklab/workload/dbbank"
)

// MaxRecvMsgSize is the largest request the server decodes; a larger one is
// refused with RESOURCE_EXHAUSTED before it reaches a handler. It is above
// the largest valid request (a Put of a 1 MiB value under a 256-byte key), so
// that an oversize value gets its own INVALID_ARGUMENT from the workload.
const MaxRecvMsgSize = 4 << 20

// DefaultSampleEvery is how many commands share one store-time measurement by
// default. Measuring one command costs two clock reads and a histogram
// Observe (about 120-170 ns here, BenchmarkMeasuredStore), more than a whole
// uncontended Mutex.Do; one in 16 brings the average to a few ns per command
// and still gives some 10,000 samples in a 10 s run at the rates this
// machine serves, enough for a p99.9.
const DefaultSampleEvery = 16

// Config is what a Server is made from.
type Config struct {
	// Mode is one of Modes' names, for New; Mode.New serves its own mode
	// and does not read this.
	Mode string
	// Bank is the bank at start; its zero value is the default (1000
	// accounts, scenario A, 20,000,000 each).
	Bank workload.BankConfig
	// Store holds the design's options (queue size, batch limit, shards);
	// its zero value gives the defaults. The server always measures the
	// stores' serial resources (MeasureSerial is set), for GetStats.
	Store store.Config
	// SampleEvery measures the store time of one command in SampleEvery,
	// chosen at random (a power of two; 0 means DefaultSampleEvery, 1 every
	// command).
	SampleEvery uint64
	// Metrics, if set, gets the server's Prometheus collectors: the gRPC
	// server metrics (their interceptor is installed only then), the store
	// latency and, for owner designs, the queue gauges. Use a registry from
	// NewMetricsRegistry and serve it with MetricsHandler.
	Metrics prometheus.Registerer
	// Work is the CPU work added to every state-changing command, inside
	// the design's critical section (work.Machine); 0 adds none.
	Work time.Duration
	// WorkKind is how Work is spent: one of work.Kinds ("" is work.KindSpin,
	// CPU; work.KindSleep sleeps for it, off the CPU).
	WorkKind string
	// CallWork is CPU work added to every data call outside the stores,
	// in its handler's interceptor (a spin timed by the clock, -call-work): a cost
	// that adds its own CPU to each call whatever the design and however
	// the callers contend, so that the lab can measure a known answer.
	// 0 spins none; the interceptor is there either way, so that a server
	// with call work differs from one without by the spin alone.
	CallWork time.Duration
	// Durability is DurabilityNone ("" too) or DurabilityWAL; with a WAL
	// the state lives in DataDir and is recovered from it on start (the
	// Bank config then only seeds a new directory).
	Durability string
	DataDir    string
	// SnapshotEvery is how many records of a log are replayed at most on
	// start (0: wal.DefaultSnapshotEvery).
	SnapshotEvery int
	// MaxInflight bounds the data calls inside the stores at once, over
	// every workload (-max-inflight): a call over it is answered
	// RESOURCE_EXHAUSTED at once and changes nothing. 0 means no bound.
	// With Store.RejectWhenFull an owner design also refuses when its queue
	// is full.
	MaxInflight int
	// MaxCalls bounds the data calls in the server at once, from their
	// headers to their answer (-max-calls): the transport's tap refuses one
	// more with RESOURCE_EXHAUSTED before a handler runs or the request is
	// decoded, so a refusal costs far less than a call. 0 means no bound.
	MaxCalls int
	// Logger receives the line a log writes when it cuts a torn tail (nil:
	// log.Default()).
	Logger *log.Logger
	// Backend is where the bank's state lives: BackendMemory ("" too) or
	// BackendMySQL, a database reached through DB (the counter and the kv
	// stay in memory). With a database the Bank config only seeds an empty
	// one.
	Backend string
	// DB is the database, its pool and its cache, with BackendMySQL.
	DB dbbank.Config
	// RequireKey, if set, names a request header that every data call
	// must carry, non-empty (-require-key): a call without it is refused
	// INVALID_ARGUMENT (ErrKeyHeader) before its handler runs, and changes
	// nothing. For replicas behind a balancer that routes by the header.
	// Admin calls and health checks need no key.
	RequireKey string
}

// Server is the gRPC server of one mode.
type Server struct {
	mode   Mode
	grpc   *grpc.Server
	health *health.Server
	st     *stores // nil for noop
	// work is the call work's interceptor, in every server's chain.
	work *callWork
}

// New looks up cfg.Mode and builds a server of that mode (Mode.New).
func New(cfg Config) (*Server, error) {
	mode, err := LookupMode(cfg.Mode)
	if err != nil {
		return nil, err
	}
	return mode.New(cfg)
}

// New builds a server of mode m and its stores, every workload's store
// wrapped in m's design as looked up once (cfg.Mode is not read); Serve
// starts it, and Stop releases the stores' goroutines (call it even if Serve
// never ran).
func (m Mode) New(cfg Config) (*Server, error) {
	if m.design == nil && m.Name != noopMode.Name {
		// A Mode made by hand, not by Modes or LookupMode: it has no design.
		return nil, fmt.Errorf("mode %q is not one of Modes; modes: %s", m.Name, ModeNames())
	}
	if cfg.SampleEvery == 0 {
		cfg.SampleEvery = DefaultSampleEvery
	}
	if n := cfg.SampleEvery; n&(n-1) != 0 {
		return nil, fmt.Errorf("sample every %d: want a power of two", n)
	}
	if cfg.MaxInflight < 0 {
		return nil, fmt.Errorf("max inflight %d: want >= 0 (0: no bound)", cfg.MaxInflight)
	}
	if cfg.MaxCalls < 0 {
		return nil, fmt.Errorf("max calls %d: want >= 0 (0: no bound)", cfg.MaxCalls)
	}
	// The workloads' services, then the ones every server has.
	var services []*grpc.ServiceDesc
	var data []string // the workloads' methods: the data calls
	for _, w := range workloads {
		services = append(services, w.desc())
		for _, md := range w.desc().Methods {
			data = append(data, "/"+w.desc().ServiceName+"/"+md.MethodName)
		}
	}
	var keys *keyGate
	if cfg.RequireKey != "" {
		var err error
		if keys, err = newKeyGate(cfg.RequireKey, data); err != nil {
			return nil, err
		}
	}
	services = append(services, &pb.AdminService_ServiceDesc, &healthpb.Health_ServiceDesc)
	var methods []string
	for _, sd := range services {
		for _, md := range sd.Methods {
			methods = append(methods, "/"+sd.ServiceName+"/"+md.MethodName)
		}
	}
	mt := newMetrics(methods, cfg.SampleEvery)

	s := &Server{mode: m, health: health.NewServer()}
	if err := m.CanRun(cfg.Durability); err != nil {
		return nil, err
	}
	if cfg.Backend == "" {
		cfg.Backend = BackendMemory
	}
	// In memory a mode that serves no workload (db-rowlock) still builds,
	// every data RPC answering UNIMPLEMENTED as for any workload it does
	// not serve; the command refuses it (CanServeOn). Over a database the
	// mode must serve the bank, or the database would be opened for
	// nothing.
	if cfg.Backend != BackendMemory {
		if err := m.CanServeOn(cfg.Backend, cfg.Durability); err != nil {
			return nil, err
		}
	}
	if m.StoreBacked() {
		ms, err := newMachines(cfg)
		if err != nil {
			return nil, err
		}
		sc := cfg.Store
		sc.MeasureSerial = true
		var in *inflight
		if cfg.MaxInflight > 0 {
			in = newInflight(cfg.MaxInflight)
		}
		if s.st, err = newStores(m, sc, ms, mt, in); err != nil {
			return nil, err // newStores closed the logs
		}
	} else {
		for _, w := range workloads { // noop refuses the flags the others refuse
			if _, err := w.instance(cfg, nil); err != nil {
				return nil, err
			}
		}
	}
	unary := []grpc.UnaryServerInterceptor{mt.unary}
	var gm *grpcprom.ServerMetrics
	if cfg.Metrics != nil {
		gm = grpcMetrics()
		collected := []prometheus.Collector{gm, mt.storeSeconds}
		if s.st != nil && s.st.owner() {
			collected = append(collected, queueCollectors(s.st)...)
		}
		if s.st != nil {
			collected = append(collected, serialCollector{s.st})
		}
		for _, c := range collected {
			if err := cfg.Metrics.Register(c); err != nil {
				if s.st != nil {
					s.st.close()
				}
				return nil, fmt.Errorf("metrics: %w", err)
			}
		}
		unary = append([]grpc.UnaryServerInterceptor{gm.UnaryServerInterceptor()}, unary...)
	}
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(MaxRecvMsgSize),
		// Stop returns only once every handler has returned, so the stores
		// are closed after their last caller.
		grpc.WaitForHandlers(true),
	}
	if keys != nil {
		// Inside the metrics' interceptor: a refusal is counted among its
		// method's answers.
		unary = append(unary, keys.unary)
	}
	if cfg.CallWork < 0 {
		return nil, fmt.Errorf("call work %v: want >= 0", cfg.CallWork)
	}
	// Innermost: only a call that reaches its handler spins. Every server
	// has it, spinning or not, so that the known-answer arm and its
	// baseline run the same interceptors.
	s.work = newCallWork(cfg.CallWork, data, spinCost)
	unary = append(unary, s.work.unary)
	if cfg.MaxCalls > 0 {
		// A refusal never reaches the interceptor: the gate counts it
		// among its method's answers itself.
		gate := newTapGate(cfg.MaxCalls, data, func(method string) { mt.answered(method, codes.ResourceExhausted) })
		opts = append(opts, grpc.InTapHandle(gate.handle))
		unary = append([]grpc.UnaryServerInterceptor{gate.unary}, unary...)
	}
	// Outermost: a call's region in an execution trace holds every
	// interceptor's time.
	unary = append([]grpc.UnaryServerInterceptor{calltrace.Unary}, unary...)
	opts = append(opts, grpc.ChainUnaryInterceptor(unary...))
	s.grpc = grpc.NewServer(opts...)
	for wl, w := range workloads {
		if s.st != nil {
			s.st.ms.wls[wl].register(s.grpc)
		} else {
			w.registerNoop(s.grpc)
		}
	}
	pb.RegisterAdminServiceServer(s.grpc, &adminService{mode: m, st: s.st, m: mt, sampleEvery: cfg.SampleEvery})
	healthpb.RegisterHealthServer(s.grpc, s.health)
	reflection.Register(s.grpc)
	if gm != nil {
		gm.InitializeMetrics(s.grpc)
	}
	for _, sd := range services[:len(workloads)+1] { // the workloads' and the admin's
		s.health.SetServingStatus(sd.ServiceName, healthpb.HealthCheckResponse_SERVING)
	}
	return s, nil
}

// Mode is the mode the server serves.
func (s *Server) Mode() Mode { return s.mode }

// Serve accepts connections on lis until Stop. It returns nil after Stop.
func (s *Server) Serve(lis net.Listener) error {
	err := s.grpc.Serve(lis)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// Stop stops accepting, lets the RPCs in flight finish until ctx ends, then
// cancels the rest, and closes the stores once no handler runs. Every
// command a store accepted is applied before its Close returns.
func (s *Server) Stop(ctx context.Context) {
	s.health.Shutdown() // health checks now answer NOT_SERVING
	done := make(chan struct{})
	go func() { // owned here: Stop waits for it below
		s.grpc.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		s.grpc.Stop() // cancels what is left; GracefulStop then returns
		<-done
	}
	if s.st != nil {
		s.st.close()
	}
}
