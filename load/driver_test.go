package load_test

import (
	"context"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/locklab/locklab/load"
	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/server"
	"github.com/locklab/locklab/summary"
	"github.com/locklab/locklab/workload"
)

const stopTimeout = 20 * time.Second

// serve runs srv on a loopback port until the test ends.
func serve(t *testing.T, serveFn func(net.Listener) error, stop func(context.Context)) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- serveFn(lis) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		stop(ctx)
		select {
		case err := <-served:
			assert.NoError(t, err)
		case <-ctx.Done():
			t.Error("server did not stop")
		}
	})
	return lis.Addr().String()
}

// startServer serves the real locklab server in mode on a loopback port.
func startServer(t *testing.T, mode string) (addr string, admin pb.AdminServiceClient) {
	t.Helper()
	srv, err := server.New(server.Config{Mode: mode})
	require.NoError(t, err)
	addr = serve(t, srv.Serve, srv.Stop)
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
	return addr, pb.NewAdminServiceClient(cc)
}

// startFake serves whatever register puts on a bare gRPC server, with a
// fake AdminService that claims a store-backed bank of 10 accounts (so the
// driver checks the answers' bodies) unless register brings its own.
func startFake(t *testing.T, register func(*grpc.Server), admin pb.AdminServiceServer) string {
	t.Helper()
	g := grpc.NewServer()
	register(g)
	if admin == nil {
		admin = fakeAdmin{}
	}
	pb.RegisterAdminServiceServer(g, admin)
	return serve(t, func(l net.Listener) error { return g.Serve(l) }, func(context.Context) { g.Stop() })
}

type fakeAdmin struct {
	pb.UnimplementedAdminServiceServer
}

func (fakeAdmin) Reset(context.Context, *pb.ResetRequest) (*pb.ResetResponse, error) {
	return &pb.ResetResponse{}, nil
}

func (fakeAdmin) GetStats(context.Context, *pb.GetStatsRequest) (*pb.GetStatsResponse, error) {
	return &pb.GetStatsResponse{Mode: "fake", StoreBacked: true, Accounts: 10}, nil
}

// quick is a short run's configuration: about 0.4 s of load.
func quick(addr, workload string) load.Config {
	cfg := load.DefaultConfig()
	cfg.Addr, cfg.Workload = addr, workload
	cfg.Callers, cfg.Warmup, cfg.Duration = 3, 100*time.Millisecond, 300*time.Millisecond
	cfg.Rate = 500
	return cfg
}

func stats(t *testing.T, admin pb.AdminServiceClient) *pb.GetStatsResponse {
	t.Helper()
	st, err := admin.GetStats(t.Context(), &pb.GetStatsRequest{})
	require.NoError(t, err)
	return st
}

// bankTotal is what a bank reset to scenario with the default accounts and
// balance holds.
func bankTotal(scenario string) int64 {
	d := load.Workloads()
	return int64(d.FundedAccounts(scenario, d.Bank.Defaults.Accounts)) * workload.DefaultInitialBalance
}

// TestRunAgainstServer drives the real server with every workload, in both
// models, and checks the summary and the server's invariants.
func TestRunAgainstServer(t *testing.T) {
	type tweak func(*load.Config)
	tests := []struct {
		name string
		mode string
		wl   string
		tw   tweak
	}{
		{"counter closed", "mutex", "counter", nil},
		{"counter open", "mutex", "counter", func(c *load.Config) { c.Model = "open" }},
		{"bank A mix", "mutex", "bank", nil},
		{"bank B refusals", "mutex", "bank", func(c *load.Config) { c.Scenario, c.Mix = "B", "transfer:1" }},
		{"bank skewed read ratio open", "mutex", "bank", func(c *load.Config) {
			c.Model, c.Skew, c.ReadRatio = "open", 0.99, 0.5
		}},
		{"kv own keys", "mutex", "kv", func(c *load.Config) { c.ReadRatio = 0.5 }},
		{"kv shared skewed keys, one connection", "mutex", "kv", func(c *load.Config) {
			c.Skew, c.Conns, c.Model = 0.99, 1, "open"
		}},
		{"noop counter", "noop", "counter", nil},
		{"noop bank", "noop", "bank", nil},
		{"noop kv", "noop", "kv", func(c *load.Config) { c.Skew = 0.5 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, admin := startServer(t, tt.mode)
			cfg := quick(addr, tt.wl)
			cfg.Reset = true
			if tt.tw != nil {
				tt.tw(&cfg)
			}
			s, err := load.Run(t.Context(), cfg)
			require.NoError(t, err)
			require.NoError(t, s.Validate())
			assert.Positive(t, s.Calls)
			assert.Zero(t, s.UnexpectedErrors, "by code %v", s.ByCode)
			assert.Equal(t, "go", s.Driver)
			assert.Equal(t, cfg.Workload, s.Workload)
			assert.InDelta(t, 0.3, s.DurationS, 1e-9)
			var byCase int64
			for c, cs := range s.ByCase {
				assert.Contains(t, load.Workloads().Cases(cfg.Workload), c)
				byCase += cs.Count
			}
			assert.Equal(t, s.Calls, byCase)
			h, err := summary.DecodeHDR(s.HDR)
			require.NoError(t, err)
			assert.Equal(t, s.Calls, h.TotalCount())
			if cfg.Model == "open" {
				// 0.3 s at 500/s: 150 intended starts in the window.
				assert.Equal(t, int64(150), s.Calls+s.Dropped)
			}

			st := stats(t, admin)
			if !st.GetStoreBacked() {
				return
			}
			switch cfg.Workload {
			case "counter":
				assert.Equal(t, s.AckedIncrementDelta, st.GetCounterValue(), "every acknowledged increment, warm-up included")
			case "bank":
				assert.Equal(t, s.AckedTransfers, int64(st.GetTransfers()), "every acknowledged transfer, warm-up included")
				assert.Equal(t, bankTotal(s.Scenario), st.GetTotalBalance(), "money conserved")
				if s.Scenario == "B" {
					assert.Positive(t, s.ExpectedRefusals)
					assert.Equal(t, s.ExpectedRefusals, s.ByCode["FAILED_PRECONDITION"])
				}
			}
		})
	}
}

// wrongCounter answers Increment with a configured error, or with a value
// below the delta (a wrong body for a store-backed server).
type wrongCounter struct {
	pb.UnimplementedCounterServiceServer
	err error
}

func (w wrongCounter) Increment(context.Context, *pb.IncrementRequest) (*pb.IncrementResponse, error) {
	if w.err != nil {
		return nil, w.err
	}
	return &pb.IncrementResponse{Value: 0}, nil
}

// refusingBank refuses every transfer as an overdraft and answers the reads
// with a negative balance and a history that is not newest first.
type refusingBank struct {
	pb.UnimplementedBankServiceServer
}

func (refusingBank) TransferMoney(context.Context, *pb.TransferMoneyRequest) (*pb.TransferMoneyResponse, error) {
	return nil, status.Error(codes.FailedPrecondition, "insufficient funds")
}

func (refusingBank) GetBalance(context.Context, *pb.GetBalanceRequest) (*pb.GetBalanceResponse, error) {
	return &pb.GetBalanceResponse{Balance: -1}, nil
}

func (refusingBank) GetHistory(_ context.Context, r *pb.GetHistoryRequest) (*pb.GetHistoryResponse, error) {
	a := r.GetAccount()
	return &pb.GetHistoryResponse{Transfers: []*pb.Transfer{{Seq: 1, FromAccount: a}, {Seq: 2, ToAccount: a}}}, nil
}

// stuckKV answers every Put with version 7 and every Get with an empty value.
type stuckKV struct {
	pb.UnimplementedKVServiceServer
}

func (stuckKV) Put(context.Context, *pb.PutRequest) (*pb.PutResponse, error) {
	return &pb.PutResponse{Version: 7}, nil
}

func (stuckKV) Get(context.Context, *pb.GetRequest) (*pb.GetResponse, error) {
	return &pb.GetResponse{Version: 7}, nil
}

// TestWrongAnswersAreUnexpected is the control of the checks above: servers
// that answer with the wrong status or a wrong body make the driver count
// unexpected errors, and the same refusal is expected in scenario B but not
// in A.
func TestWrongAnswersAreUnexpected(t *testing.T) {
	tests := []struct {
		name     string
		register func(*grpc.Server)
		wl       string
		mix      string
		scenario string
		// wantCode: every call answered with it; all unexpected unless
		// refusals.
		wantCode string
		refusals bool
	}{
		{"INTERNAL", func(g *grpc.Server) {
			pb.RegisterCounterServiceServer(g, wrongCounter{err: status.Error(codes.Internal, "boom")})
		}, "counter", "", "", "INTERNAL", false},
		{"counter value below the delta", func(g *grpc.Server) {
			pb.RegisterCounterServiceServer(g, wrongCounter{})
		}, "counter", "", "", "OK", false},
		{"refused transfer in scenario A", func(g *grpc.Server) {
			pb.RegisterBankServiceServer(g, refusingBank{})
		}, "bank", "transfer:1", "A", "FAILED_PRECONDITION", false},
		{"refused transfer in scenario B is expected", func(g *grpc.Server) {
			pb.RegisterBankServiceServer(g, refusingBank{})
		}, "bank", "transfer:1", "B", "FAILED_PRECONDITION", true},
		{"negative balance", func(g *grpc.Server) {
			pb.RegisterBankServiceServer(g, refusingBank{})
		}, "bank", "balance-random:1,balance-one:1", "A", "OK", false},
		{"history out of order", func(g *grpc.Server) {
			pb.RegisterBankServiceServer(g, refusingBank{})
		}, "bank", "history-one:1,history-random:1", "A", "OK", false},
		{"UNIMPLEMENTED", func(*grpc.Server) {}, "kv", "", "", "UNIMPLEMENTED", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := quick(startFake(t, tt.register, nil), tt.wl)
			cfg.Mix, cfg.Scenario = tt.mix, tt.scenario
			s, err := load.Run(t.Context(), cfg)
			require.NoError(t, err)
			require.Positive(t, s.Calls)
			assert.Equal(t, map[string]int64{tt.wantCode: s.Calls}, s.ByCode)
			if tt.refusals {
				assert.Equal(t, s.Calls, s.ExpectedRefusals)
				assert.Zero(t, s.UnexpectedErrors)
			} else {
				assert.Equal(t, s.Calls, s.UnexpectedErrors)
				assert.Zero(t, s.OK)
			}
		})
	}

	// kv: a version that does not move is caught on a caller's second Put
	// of a key (own keys) or on any Put (shared keys: above the one seen).
	for _, skew := range []float64{0, 0.9} {
		cfg := quick(startFake(t, func(g *grpc.Server) { pb.RegisterKVServiceServer(g, stuckKV{}) }, nil), "kv")
		cfg.Skew, cfg.ReadRatio = skew, 0.2
		s, err := load.Run(t.Context(), cfg)
		require.NoError(t, err)
		assert.Positive(t, s.UnexpectedErrors, "skew %v", skew)
	}
}

// stallingCounter answers at once, except one call, arriving after armAt,
// which it holds for stall.
type stallingCounter struct {
	pb.UnimplementedCounterServiceServer
	armAt   time.Time
	stall   time.Duration
	stalled *atomic.Bool
}

func (s stallingCounter) Increment(ctx context.Context, _ *pb.IncrementRequest) (*pb.IncrementResponse, error) {
	if time.Now().After(s.armAt) && s.stalled.CompareAndSwap(false, true) {
		select {
		case <-time.After(s.stall):
		case <-ctx.Done():
		}
	}
	return &pb.IncrementResponse{Value: 1}, nil
}

// TestOpenModelMeasuresFromIntendedStart: one call stalls the only caller
// for 300 ms. The calls meant to start meanwhile wait for it; measured from
// their intended start (the open model) they are slow, as a user would see;
// measured from when they were sent (the closed model, or a driver with
// coordinated omission) they are not. With a short DropAfter they are dropped
// instead.
func TestOpenModelMeasuresFromIntendedStart(t *testing.T) {
	const stall = 300 * time.Millisecond
	run := func(t *testing.T, model string, dropAfter time.Duration) *summary.Summary {
		t.Helper()
		fake := stallingCounter{armAt: time.Now().Add(300 * time.Millisecond), stall: stall, stalled: new(atomic.Bool)}
		addr := startFake(t, func(g *grpc.Server) { pb.RegisterCounterServiceServer(g, fake) }, nil)
		cfg := quick(addr, "counter")
		cfg.Model, cfg.Callers, cfg.Rate, cfg.DropAfter = model, 1, 200, dropAfter
		cfg.Warmup, cfg.Duration = 100*time.Millisecond, 800*time.Millisecond
		s, err := load.Run(t.Context(), cfg)
		require.NoError(t, err)
		require.True(t, fake.stalled.Load(), "the stall happened")
		require.Zero(t, s.UnexpectedErrors)
		return s
	}

	open := run(t, "open", 0)
	// 200/s for 0.8 s: 160 intended starts, none dropped. The ~60 meant
	// for the stall wait for it, up to 300 ms: dozens of calls take over
	// 150 ms from their intended start.
	assert.Equal(t, int64(160), open.Calls)
	assert.Zero(t, open.Dropped)
	assert.Greater(t, open.Late, int64(20))
	assert.Greater(t, slowCalls(t, open, 150*time.Millisecond), int64(20))
	assert.Greater(t, open.LatencyMs.Max, 250.0)

	// The control: timed from each call's send, only the stalled call is
	// slow. (Counts, not percentiles, so a busy machine does not fail it.)
	closed := run(t, "closed", 0)
	assert.LessOrEqual(t, slowCalls(t, closed, 150*time.Millisecond), int64(3))
	assert.Greater(t, closed.LatencyMs.Max, 250.0, "the stalled call itself")

	dropping := run(t, "open", 50*time.Millisecond)
	assert.Greater(t, dropping.Dropped, int64(20), "calls that could not start within 50 ms")
	assert.Equal(t, int64(160), dropping.Calls+dropping.Dropped)
	assert.Less(t, slowCalls(t, dropping, 150*time.Millisecond), slowCalls(t, open, 150*time.Millisecond))
}

// slowCalls counts the calls of s's histogram that took at least d.
func slowCalls(t *testing.T, s *summary.Summary, d time.Duration) int64 {
	t.Helper()
	h, err := summary.DecodeHDR(s.HDR)
	require.NoError(t, err)
	var n int64
	for _, b := range h.Distribution() {
		if b.From >= d.Microseconds() {
			n += b.Count
		}
	}
	return n
}

func TestRunRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(*load.Config)
	}{
		{"workload", func(c *load.Config) { c.Workload = "queue" }},
		{"scenario", func(c *load.Config) { c.Scenario = "D" }},
		{"model", func(c *load.Config) { c.Model = "half-open" }},
		{"callers", func(c *load.Config) { c.Callers = 0 }},
		{"conns", func(c *load.Config) { c.Conns = -1 }},
		{"rate", func(c *load.Config) { c.Model, c.Rate = "open", 0 }},
		{"duration", func(c *load.Config) { c.Duration = 0 }},
		{"warm-up", func(c *load.Config) { c.Warmup = -time.Second }},
		{"skew 1", func(c *load.Config) { c.Skew = 1 }},
		{"negative skew", func(c *load.Config) { c.Skew = -0.5 }},
		{"read ratio", func(c *load.Config) { c.ReadRatio = 1.5 }},
		{"mix and read ratio", func(c *load.Config) { c.Workload, c.Mix, c.ReadRatio = "bank", "transfer:1", 0.5 }},
		{"mix", func(c *load.Config) { c.Workload, c.Mix = "bank", "deposit:1" }},
		{"value size", func(c *load.Config) { c.ValueSize = 2 << 20 }},
		{"accounts", func(c *load.Config) { c.Accounts = 1 }},
		{"address", func(c *load.Config) { c.Addr = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := quick("127.0.0.1:1", "counter")
			require.NoError(t, cfg.Validate(), "the control: the base config is valid")
			cfg = quick("127.0.0.1:1", "counter")
			tt.spoil(&cfg)
			_, err := load.Run(t.Context(), cfg)
			assert.ErrorContains(t, err, "load:")
		})
	}
}

func TestRunWithoutServer(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	require.NoError(t, lis.Close()) // nobody listens there now
	start := time.Now()
	_, err = load.Run(t.Context(), quick(addr, "counter"))
	assert.ErrorContains(t, err, "cannot connect")
	assert.Less(t, time.Since(start), 5*time.Second, "a refused connection fails at once, not after the connect timeout")
}

// TestRunInterrupted: a run whose context ends mid-window stops early and
// summarises what ran, as k6 does on SIGINT; the calls cut short are not
// counted as the server's answers.
func TestRunInterrupted(t *testing.T) {
	addr, _ := startServer(t, "mutex")
	for _, model := range []string{"closed", "open"} {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second) // connecting takes far less
		cfg := quick(addr, "counter")
		cfg.Model, cfg.Duration = model, 10*time.Second
		start := time.Now()
		s, err := load.Run(ctx, cfg)
		cancel()
		require.ErrorIs(t, err, load.ErrInterrupted, model)
		require.NotNil(t, s, model)
		assert.Less(t, time.Since(start), 5*time.Second, model)
		// The window that ran (what the second left after connecting and
		// the 0.1 s warm-up), not the 10 s asked for.
		assert.True(t, s.DurationS > 0 && s.DurationS < 1, "%s: duration_s %v", model, s.DurationS)
		assert.Positive(t, s.Calls, model)
		assert.Zero(t, s.UnexpectedErrors, "%s: by code %v", model, s.ByCode)
		require.NoError(t, s.Validate())
	}

	// Interrupted during the warm-up: nothing was measured.
	ctx, cancel := context.WithTimeout(t.Context(), time.Second) // connecting takes far less
	defer cancel()
	cfg := quick(addr, "counter")
	cfg.Warmup = 5 * time.Second
	s, err := load.Run(ctx, cfg)
	assert.ErrorIs(t, err, load.ErrInterrupted)
	assert.Nil(t, s)
}

// The per-second counts add up to the calls, one count per second of the
// window (the last may be partial), in both models.
func TestPerSecondCounts(t *testing.T) {
	addr, _ := startServer(t, "mutex")
	for _, model := range []string{"closed", "open"} {
		t.Run(model, func(t *testing.T) {
			cfg := quick(addr, "counter")
			cfg.Model, cfg.Duration = model, 1500*time.Millisecond
			if model == "open" {
				cfg.Rate = 400
			}
			s, err := load.Run(context.Background(), cfg)
			require.NoError(t, err)
			var sum int64
			for _, n := range s.PerSecond {
				sum += n
			}
			assert.Equal(t, s.Calls, sum, "per-second counts add up to the calls")
			assert.Len(t, s.PerSecond, 2, "1.5 s: a whole second and a half")
			assert.Positive(t, s.PeakPerSecond())
			assert.Equal(t, s.PerSecond[0], s.PeakPerSecond(), "the peak leaves the partial last second out")
		})
	}
}

// A window marked from outside (Config.Marks) is the time between the two
// marks, not -warmup and -duration's: the calls that ended in it are the
// summary's, and the callers go on calling to the run's end. The control is
// the run's own count of the calls it made: the marked window's are about
// a third of them.
func TestMarkedWindow(t *testing.T) {
	addr, _ := startServer(t, "mutex")
	cfg := quick(addr, "counter")
	cfg.Warmup, cfg.Duration = 0, 1500*time.Millisecond
	marks := make(chan time.Time)
	cfg.Marks = marks
	// The marks' own instants: on a loaded machine (make test's parallel
	// packages) the second comes later than the half second slept.
	var first, second time.Time
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		time.Sleep(500 * time.Millisecond)
		first = time.Now()
		marks <- first
		time.Sleep(500 * time.Millisecond)
		second = time.Now()
		marks <- second
	}()
	start := time.Now()
	s, err := load.Run(t.Context(), cfg)
	require.NoError(t, err)
	<-sent
	assert.GreaterOrEqual(t, time.Since(start), 1500*time.Millisecond, "the callers call to the run's end")
	assert.InDelta(t, second.Sub(first).Seconds(), s.DurationS, 0.05, "the window is the marks'")
	all := s.AckedIncrementDelta / load.Workloads().Counter.Defaults.Delta
	assert.Positive(t, s.Calls)
	assert.Less(t, float64(s.Calls), 0.6*float64(all), "the window's calls are a part of the run's (%d of %d)", s.Calls, all)
	assert.InDelta(t, float64(s.Calls)/s.DurationS, s.CallsPerS, 1)

	// One mark only: no window was measured.
	cfg.Duration = 600 * time.Millisecond
	once := make(chan time.Time, 1)
	once <- time.Now().Add(50 * time.Millisecond)
	cfg.Marks = once
	s, err = load.Run(t.Context(), cfg)
	assert.ErrorIs(t, err, load.ErrUnmarked)
	assert.Nil(t, s)
}

// A run interrupted right after its second mark, the way the runner ends
// its drivers once it has read the window, measured the marked window:
// the mark sent before the interruption is the run's, however late the
// goroutine taking the marks runs. Many runs, each with its mark still in
// the channel when the run ends, on one P as the runner runs the driver
// (GOMAXPROCS=1), where the goroutine taking the marks is the likeliest
// to run last: there, without the run taking the marks left waiting, 1
// run in 15 to 25 failed.
func TestMarkedThenInterrupted(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	addr, admin := startServer(t, "mutex")
	// The server's data calls so far: the marks wait for the run's callers
	// to call, however long its setup takes on a loaded machine.
	calls := func() uint64 {
		st, err := admin.GetStats(t.Context(), &pb.GetStatsRequest{WindowOnly: true})
		if err != nil {
			return 0
		}
		var n uint64
		for method, c := range st.GetRpcCounts() {
			if !strings.Contains(method, ".AdminService/") {
				n += c.GetTotal()
			}
		}
		return n
	}
	for i := range 40 {
		cfg := quick(addr, "counter")
		cfg.Warmup, cfg.Duration = 0, 30*time.Second
		marks := make(chan time.Time, 2)
		cfg.Marks = marks
		ctx, cancel := context.WithCancel(t.Context())
		before := calls()
		sent := make(chan time.Duration, 1)
		go func() {
			for deadline := time.Now().Add(10 * time.Second); calls() == before && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
			from := time.Now()
			marks <- from
			time.Sleep(30 * time.Millisecond)
			to := time.Now()
			marks <- to
			cancel()
			sent <- to.Sub(from)
		}()
		s, err := load.Run(ctx, cfg)
		cancel()
		require.NoError(t, err, "run %d", i)
		assert.InDelta(t, (<-sent).Seconds(), s.DurationS, 1e-6, "run %d: the window is the marks'", i)
	}
}

// A marked window is the closed model's, without a timeline.
func TestMarkedWindowRefused(t *testing.T) {
	for _, tw := range []func(*load.Config){
		func(c *load.Config) { c.Model = "open" },
		func(c *load.Config) { c.Timeline = 100 * time.Millisecond },
	} {
		cfg := quick("127.0.0.1:1", "counter")
		cfg.Marks = make(chan time.Time)
		tw(&cfg)
		assert.ErrorContains(t, cfg.Validate(), "marked window")
	}
	cfg := quick("127.0.0.1:1", "counter")
	cfg.Marks = make(chan time.Time)
	assert.NoError(t, cfg.Validate(), "the control: closed, no timeline")
}
