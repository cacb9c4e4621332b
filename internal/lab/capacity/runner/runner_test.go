package runner

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/grpc"

	"github.com/locklab/locklab/internal/lab/capacity"
	"github.com/locklab/locklab/internal/lab/cpuset"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/run"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

// The engine's tests serve a fake admin API on a loopback listener; none of
// its goroutines may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// defaultOptions are the comparison's flags' defaults, with a fixed seed.
func defaultOptions() run.Options {
	return run.Options{
		Workloads: run.DefaultWorkloads, Modes: run.DefaultModes, Drivers: run.DefaultDrivers, Model: "closed",
		VUs: run.DefaultLevels, H2loadVUs: run.DefaultH2Levels, MaxVUs: run.DefaultMaxVUs, Conns: run.DefaultConns, Reps: run.DefaultReps,
		Duration: run.DefaultDuration, Warmup: run.DefaultWarmup, Pin: true, Baseline: run.DefaultBaseline, Seed: 1,
		K6: "bin/k6", Load: "bin/load", H2load: "h2load", Server: "bin/locklab", Scripts: "k6",
		MaxForeign: run.DefaultMaxForeign, Margin: run.DefaultMargin, Reruns: run.DefaultReruns,
	}
}

// fakeAdmin is the server's admin API over a counter that only Reset
// touches.
type fakeAdmin struct {
	locklabv1.UnimplementedAdminServiceServer
	mu      sync.Mutex // protects counter
	counter int64
}

func (a *fakeAdmin) Reset(context.Context, *locklabv1.ResetRequest) (*locklabv1.ResetResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.counter = 0
	return &locklabv1.ResetResponse{}, nil
}

func (a *fakeAdmin) GetStats(context.Context, *locklabv1.GetStatsRequest) (*locklabv1.GetStatsResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return &locklabv1.GetStatsResponse{Mode: "mutex", StoreBacked: true, CounterValue: a.counter,
		Requests: uint64(a.counter), CpuSeconds: 0.5, WindowSeconds: 1, TotalBalance: 1000}, nil
}

// fakeServer is a gRPC server on a loopback listener, with no process.
type fakeServer struct {
	srv *grpc.Server
	lis net.Listener
}

func (s fakeServer) Address() string { return s.lis.Addr().String() }
func (s fakeServer) PID() int        { return 0 }
func (s fakeServer) Stop() (int, time.Duration) {
	s.srv.Stop()
	return 0, time.Millisecond
}

// writeProcStat writes a /proc/stat of two CPUs, in the kernel's ticks
// (USER_HZ = 100): busy and idle ticks per CPU.
func writeProcStat(t *testing.T, dir string, busy0, idle0, busy1, idle1 int) procfs.FS {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	stat := fmt.Sprintf("cpu  %d 0 0 %d 0 0 0 0 0 0\ncpu0 %d 0 0 %d 0 0 0 0 0 0\ncpu1 %d 0 0 %d 0 0 0 0 0 0\n"+
		"intr 0\nctxt 1000\nbtime 1700000000\nprocesses 100\nprocs_running 1\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n",
		busy0+busy1, idle0+idle1, busy0, idle0, busy1, idle1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644))
	fs, err := procfs.NewFS(dir)
	require.NoError(t, err)
	return fs
}

// synthAdmin is a server whose RSS and goroutines grow with each GetStats,
// so that the overload phase's peaks are known.
type synthAdmin struct {
	fakeAdmin
	reads int64
}

func (a *synthAdmin) GetStats(ctx context.Context, r *locklabv1.GetStatsRequest) (*locklabv1.GetStatsResponse, error) {
	st, err := a.fakeAdmin.GetStats(ctx, r)
	a.mu.Lock()
	a.reads++
	st.RssBytes, st.Goroutines = uint64(a.reads)<<20, 10+a.reads
	a.mu.Unlock()
	return st, err
}

// synthProcs is a synthetic server whose capacity is known: each mode's
// p99 is latency(mode, rate), and the driver's summary says so. No process
// runs.
type synthProcs struct {
	admin   *synthAdmin
	latency func(mode string, rate int) float64
	mode    string
	jobs    []run.Job
	// foreign, if set, is the share of the server's CPU something else
	// took during a measured run (fake /proc/stat snapshots, as in the
	// gate's tests).
	t       *testing.T
	foreign func(job run.Job) float64
}

func (p *synthProcs) StartServer(_ run.Config, _ string, args []string, _ []int, _ string) (run.Server, error) {
	p.mode = args[1]
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := grpc.NewServer()
	locklabv1.RegisterAdminServiceServer(srv, p.admin)
	go srv.Serve(lis) // stopped by fakeServer.stop
	return fakeServer{srv, lis}, nil
}

func (p *synthProcs) Drive(_ context.Context, _ run.Config, d run.Driver, job run.Job, _ int) (*summary.Summary, run.DriverRun, error) {
	p.jobs = append(p.jobs, job)
	rate := job.Spec.Level
	p99 := p.latency(p.mode, rate)
	calls := int64(float64(rate) * job.Duration.Seconds())
	res := &summary.Summary{Schema: summary.Schema, Driver: d.Name(), Model: job.Spec.Model, DurationS: job.Duration.Seconds(),
		Calls: calls, CallsPerS: float64(rate), OK: calls, LatencyMs: summary.LatencyMs{P50: p99 / 4, P99: p99, P999: 2 * p99},
		ByCode: map[string]int64{"OK": calls}}
	if job.Timeline > 0 {
		// The phase after an overload: slow for its first 300 ms.
		for t := time.Duration(0); t < job.Duration; t += job.Timeline {
			pt := summary.TimelinePoint{StartS: t.Seconds(), DurationS: job.Timeline.Seconds(), Calls: 10, OK: 10, P99Ms: 0.5}
			if t < 300*time.Millisecond {
				pt.P99Ms = 50
			}
			res.Timeline = append(res.Timeline, pt)
		}
	}
	dr := run.DriverRun{Driver: record.ProcUsage{CPUSeconds: 0.2, WallSeconds: 1}, Server: record.ProcUsage{CPUSeconds: 0.5, WallSeconds: 1}}
	if p.foreign != nil && !job.Warmup {
		// The server's CPU 0 busy for its 0.5 s and what else took it,
		// the driver's CPU 1 for its 0.2 s, over one second.
		dir := p.t.TempDir()
		f := int(100 * p.foreign(job))
		a := writeProcStat(p.t, filepath.Join(dir, "a"), 1000, 1000, 1000, 1000)
		b := writeProcStat(p.t, filepath.Join(dir, "b"), 1000+50+f, 1000+50-f, 1000+20, 1000+80)
		ca, err := cpuset.Read(a)
		require.NoError(p.t, err)
		cb, err := cpuset.Read(b)
		require.NoError(p.t, err)
		dr.ServerSet = cb.Set(job.Place.Server).Minus(ca.Set(job.Place.Server))
		dr.DriverSet = cb.Set(job.Place.Driver).Minus(ca.Set(job.Place.Driver))
	}
	return res, dr, nil
}

// hockey is a latency curve with its knee at capacity: flat below, ten
// times the objective above.
func hockey(capacity int) func(int) float64 {
	return func(rate int) float64 {
		if rate <= capacity {
			return 0.3
		}
		return 10
	}
}

// capacityConfig is a study of modes on the counter with the objective
// slo ("": from the floor, the default).
func capacityConfig(t *testing.T, modes, slo string) (run.Config, Capacity) {
	t.Helper()
	o := defaultOptions()
	o.Workloads, o.Modes = "counter", modes
	set := map[string]bool{"workloads": true, "modes": true, "slo": slo != ""}
	co := CapacityFlags(newFlagSet())
	co.SLO = slo
	cfg, cc, err := NewCapacity(o, *co, func(n string) bool { return set[n] }, 2)
	require.NoError(t, err)
	cfg.Reps, cc.Refine = 2, 4
	return cfg, cc
}

func newStudy(t *testing.T, cfg run.Config, cc Capacity, latency func(mode string, rate int) float64) (*study, *synthProcs) {
	p := &synthProcs{admin: &synthAdmin{}, latency: latency}
	dir := t.TempDir()
	return &study{cfg: cfg, cc: cc, p: p, runsDir: dir, out: io.Discard, start: time.Now()}, p
}

// checkCapacity is the check every search must pass: a found knee within
// the refinement's resolution below the true capacity, never above it.
func checkCapacity(k capacity.CapKnee, capacity int, tol float64) error {
	switch {
	case !k.Found:
		return fmt.Errorf("%s block %d: %s", k.Mode, k.Block, k.State)
	case k.Rate > capacity:
		return fmt.Errorf("%s block %d: claimed %d/s above the true capacity %d/s", k.Mode, k.Block, k.Rate, capacity)
	case float64(k.Rate) < float64(capacity)*(1-tol):
		return fmt.Errorf("%s block %d: claimed %d/s, more than %.0f%% below the true capacity %d/s", k.Mode, k.Block, k.Rate, 100*tol, capacity)
	}
	return nil
}

// TestCapacitySearchFindsAKnownCapacity runs the search against a
// synthetic server whose designs' capacities are known, and finds each
// within the refinement's resolution in every block. The controls: a
// deliberately broken search (claiming the first failing rate) is caught
// by the same check, and a curve that passes again above a failure is
// reported as not found rather than as a rate.
func TestCapacitySearchFindsAKnownCapacity(t *testing.T) {
	cfg, cc := capacityConfig(t, "mutex,inputQ", "p99<=1ms")
	cc.Rates = []int{1000, 2000, 4000, 8000, 16000}
	truth := map[string]int{"mutex": 5300, "inputQ": 11000}
	s, p := newStudy(t, cfg, cc, func(mode string, rate int) float64 { return hockey(truth[mode])(rate) })
	wl, _ := plan.LookupWorkload("counter")
	for block := 1; block <= cfg.Reps; block++ {
		require.NoError(t, s.search(t.Context(), wl, "go", block, cc.Rates))
	}
	require.Len(t, s.rec.Knees, 4)
	// The bracket after the ladder is a factor of 2; four halvings leave
	// it within 1/16 of the passing rate.
	tol := 1.0 / 16
	for _, k := range s.rec.Knees {
		assert.NoError(t, checkCapacity(k, truth[k.Mode], tol))
		broken := k
		broken.Rate = k.Fail // a search that reports the first failing rate
		assert.Error(t, checkCapacity(broken, truth[k.Mode], tol), "the check catches a broken search")
	}
	assert.Equal(t, 2*cfg.Reps*2*(len(cc.Rates)+cc.Refine), len(p.jobs), "a warm-up and a run for every design, block, ladder and refinement step")
	for _, pt := range s.rec.Points {
		want := pt.Rate <= truth[pt.Mode]
		assert.Equal(t, want, pt.Pass, "%s at %d", pt.Mode, pt.Rate)
	}

	// The control: a noisy curve, passing again above a failure.
	noisy := func(_ string, rate int) float64 {
		if rate == 2000 {
			return 10
		}
		return hockey(5300)(rate)
	}
	s, _ = newStudy(t, cfg, cc, noisy)
	require.NoError(t, s.search(t.Context(), wl, "go", 1, cc.Rates))
	for _, k := range s.rec.Knees {
		assert.False(t, k.Found, "%s: a non-monotone curve has no knee", k.Mode)
		assert.Equal(t, capacity.KneeNonMonotone.String(), k.State)
		assert.Error(t, checkCapacity(k, 5300, tol))
	}
}

// TestObjectiveFromTheFloor: a synthetic server whose noop answers in 2.1 ms
// at any rate — a floor above a 1 ms objective — and whose designs answer in
// 2.5 ms up to their capacity, 50 ms past it. By default the study measures
// the floor first, sets the objective to 3 × 2.1 = 6.3 ms, records it, and
// finds every design's knee. The control: the same curves held to p99 ≤ 1 ms
// put every knee below the ladder.
func TestObjectiveFromTheFloor(t *testing.T) {
	truth := map[string]int{"mutex": 5300, "inputQ": 11000}
	curve := func(mode string, rate int) float64 {
		switch {
		case mode == "noop":
			return 2.1
		case rate <= truth[mode]:
			return 2.5
		}
		return 50
	}
	for _, slo := range []string{"", "p99<=1ms"} {
		cfg, cc := capacityConfig(t, "mutex,inputQ,noop", slo)
		cc.Rates, cc.OverloadFor = []int{1000, 2000, 4000, 8000, 16000}, 0
		s, _ := newStudy(t, cfg, cc, curve)
		told := 0
		s.objectiveSet = func() error { told++; return nil }
		require.NoError(t, s.run(t.Context()))
		assert.Equal(t, 1, told, "the objective is announced once")
		var found int
		for _, k := range s.rec.Knees {
			if k.Mode == "noop" {
				continue
			}
			if k.Found {
				found++
				assert.NoError(t, checkCapacity(k, truth[k.Mode], 1.0/16))
			}
		}
		if slo != "" {
			assert.Equal(t, "p99<=1ms,achieved>=0.99,errors=0", s.rec.SLO)
			assert.Empty(t, s.rec.Floors, "no floor run with -slo")
			assert.Zero(t, found, "the control: below a 1 ms objective no design has a knee")
			for _, k := range s.rec.Knees {
				if k.Mode != "noop" {
					assert.Equal(t, capacity.KneeBelow.String(), k.State)
				}
			}
			continue
		}
		require.Len(t, s.rec.Floors, 1)
		f := s.rec.Floors[0]
		assert.Equal(t, 1000, f.Rate, "the floor is measured at the ladder's lowest rate")
		assert.InDelta(t, 2.1, f.P99Ms, 1e-9)
		assert.Equal(t, 3.0, s.rec.FloorMultiple)
		assert.Equal(t, "p99<=6.3ms,achieved>=0.99,errors=0", s.rec.SLO)
		assert.Equal(t, 2*cfg.Reps, found, "every design's knee in every block")
		assert.Contains(t, s.runs[0].ID, "-floor-counter-go-noop-rate1000-b0", "the floor runs first")
	}
}

// TestFloorTooHigh: a floor whose multiple is over the objective's limit
// (a machine too busy to measure on) stops the study with a message
// before the search, rather than with an objective no report can read.
func TestFloorTooHigh(t *testing.T) {
	cfg, cc := capacityConfig(t, "mutex,noop", "")
	cc.Rates, cc.OverloadFor = []int{1000}, 0
	s, _ := newStudy(t, cfg, cc, func(string, int) float64 { return 30_000 })
	err := s.run(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "floor is a p99 of 30000 ms")
	assert.Len(t, s.runs, 1, "only the floor ran")
}

// TestOverloadPhase runs the overload phase through the seam: every store
// design under every policy it can run, the policy's flags on the server,
// the rates scaled by the best capacity, the peaks sampled, and the
// recovery read from the timeline.
func TestOverloadPhase(t *testing.T) {
	cfg, cc := capacityConfig(t, "mutex,inputQ,noop", "p99<=1ms")
	cc.OverloadFor, cc.RecoverFor = 500*time.Millisecond, time.Second
	s, p := newStudy(t, cfg, cc, func(string, int) float64 { return 0.3 })
	s.rec.Knees = []capacity.CapKnee{
		{Workload: "counter", Driver: "go", Mode: "mutex", Block: 1, Found: true, Rate: 10000},
		{Workload: "counter", Driver: "go", Mode: "inputQ", Block: 1, Found: true, Rate: 8000},
		{Workload: "counter", Driver: "go", Mode: "noop", Block: 1, Found: true, Rate: 50000},
	}
	wl, _ := plan.LookupWorkload("counter")
	require.NoError(t, s.overload(t.Context(), wl, "go", 1))
	require.Len(t, s.rec.Overruns, 2*len(capacity.Policies), "noop is left out")
	served := 0
	for _, p := range capacity.Policies {
		for _, m := range []string{"mutex", "inputQ"} {
			if ok, _ := p.Serves(m); ok {
				served++
			}
		}
	}
	for _, o := range s.rec.Overruns {
		assert.Equal(t, 10000, o.Capacity, "the best store-backed design's, not noop's")
		assert.Equal(t, 15000, o.Rate)
		assert.Equal(t, 5000, o.RecoverRate)
		if o.Mode == "mutex" && o.Policy == "owner-queue" {
			assert.Equal(t, "mutex has no owner queue", o.NA)
			continue
		}
		require.Empty(t, o.NA)
		if o.Policy != "none" {
			assert.Equal(t, 10, o.Bound, "10,000/s × 1 ms")
		}
		assert.Positive(t, o.PeakGoroutines)
		assert.Greater(t, o.PeakRSS, o.BaseRSS, "the fake server grows with every read")
		assert.True(t, o.Recovered)
		assert.InDelta(t, 0.3, o.RecoveryS, 1e-9, "the first interval from which on the objective held")
		for _, id := range []string{o.RunID, o.RecoverID} {
			assert.FileExists(t, filepath.Join(s.runsDir, id+".json"))
		}
	}
	var recovery []run.Job
	for _, j := range p.jobs {
		if j.Timeline > 0 {
			recovery = append(recovery, j)
		}
	}
	assert.Equal(t, served, len(recovery), "one phase after each overload asks for a timeline")
	assert.Equal(t, 2*served, len(s.runs))
	for _, r := range s.runs {
		assert.False(t, r.Failed(), "%s: %v", r.ID, r.Problems)
	}
}

// TestCapacityGate: the search and the overload phase go through the
// validity gate. In block 1 the ladder's 4,000/s cell ran beside something
// else once (inputQ's run lost 30% of the server's CPU) and runs again,
// clean; in block 2 the 8,000/s cell was busy every time and is dropped:
// its points are kept, marked, and neither judged nor used by the knee
// finder; an overload run spoiled once runs again. The control, a quiet
// machine, reruns nothing.
func TestCapacityGate(t *testing.T) {
	busy := func(job run.Job) float64 {
		switch {
		case job.Spec.Rep == 1 && job.Spec.Level == 4000 && job.Spec.Attempt <= 1 && job.Spec.Mode == "inputQ":
			return 0.30
		case job.Spec.Rep == 2 && job.Spec.Level == 8000:
			return 0.30
		case job.Spec.Rep == 1 && strings.Contains(job.Spec.ID, "-overload-") && job.Spec.Attempt <= 1 && job.Spec.Mode == "mutex":
			return 0.30 // block 1's overload phase of mutex, once per policy
		}
		return 0.01
	}
	// The designs under the policies that apply to them, per block, and
	// mutex's share, from the one list of policies.
	served, mutexServed := 0, 0
	for _, p := range capacity.Policies {
		for _, m := range []string{"mutex", "inputQ"} {
			if ok, _ := p.Serves(m); ok {
				served++
				if m == "mutex" {
					mutexServed++
				}
			}
		}
	}
	na := 2*len(capacity.Policies) - served
	for _, tt := range []struct {
		name                          string
		foreign                       func(run.Job) float64
		rerun, dropped, spoiled, over int
	}{
		// Spoiled: 1 run in block 1, both designs' runs in 3 attempts in
		// block 2, and mutex's overload once under each of its policies.
		// The overload records: every served pair in each of 2 blocks,
		// the n/a ones once, and mutex's spoiled attempts.
		{"spoiled cells", busy, 2 + mutexServed, 1, 1 + 2*3 + mutexServed, 2*served + na + mutexServed},
		{"control: a quiet machine", func(run.Job) float64 { return 0.01 }, 0, 0, 0, 2*served + na},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, cc := capacityConfig(t, "mutex,inputQ", "p99<=1ms")
			cc.Rates = []int{1000, 2000, 4000, 8000, 16000}
			cc.OverloadFor, cc.RecoverFor = 500*time.Millisecond, 500*time.Millisecond
			truth := map[string]int{"mutex": 5300, "inputQ": 11000}
			s, p := newStudy(t, cfg, cc, func(mode string, rate int) float64 { return hockey(truth[mode])(rate) })
			p.t, p.foreign = t, tt.foreign
			require.NoError(t, s.run(t.Context()))

			assert.Equal(t, tt.rerun, s.rec.Gate.Rerun)
			assert.Equal(t, tt.dropped, s.rec.Gate.Dropped)
			assert.Equal(t, tt.spoiled, s.rec.Gate.SpoiledRuns)
			var dropped, try2 int
			for _, pt := range s.rec.Points {
				if pt.Spoiled != "" {
					dropped++
					assert.Equal(t, 2, pt.Block)
					assert.Equal(t, 8000, pt.Rate)
				}
				if strings.HasSuffix(pt.RunID, "-try2") && pt.Block == 1 {
					try2++
					assert.Equal(t, 4000, pt.Rate, "the rerun cell's points are the clean attempt's")
				}
			}
			if tt.dropped > 0 {
				assert.Equal(t, 2, dropped, "the dropped cell's points are kept, marked")
				assert.Equal(t, 2, try2, "block 1's cell ran again, every design")
				for _, k := range s.rec.Knees {
					if k.Block == 1 {
						assert.NoError(t, checkCapacity(k, truth[k.Mode], 1.0/16), "block 1 found its knees from the clean attempt")
					}
				}
			}
			assert.Len(t, s.rec.Overruns, tt.over, "every attempt of the overload phase is recorded, the n/a cells once per workload")
			for _, o := range s.rec.Overruns {
				if o.Spoiled != "" {
					assert.Equal(t, "mutex", o.Mode)
					assert.Equal(t, 1, o.Attempt)
				}
			}
		})
	}
}

func TestNewCapacityBadInput(t *testing.T) {
	for _, tt := range []struct {
		set  map[string]string
		want string
	}{
		{map[string]string{"slo": "p99<=soon"}, "-slo"},
		{map[string]string{"steps": "50,10"}, "-steps"},
		{map[string]string{"rates": "x"}, "-rates"},
		{map[string]string{"rates": "100", "steps": "10"}, "give one ladder"},
		{map[string]string{"refine": "-1"}, "-refine"},
		{map[string]string{"overload": "0.5"}, "-overload"},
		{map[string]string{"recover": "1"}, "-recover"},
		{map[string]string{"policies": "fifo"}, `unknown policy "fifo"`},
		{map[string]string{"driver": "h2load"}, "h2load cannot hold a rate"},
		{map[string]string{"vus": "10"}, "-vus"},
		{map[string]string{"model": "closed"}, "open model"},
	} {
		fs := newFlagSet()
		co := CapacityFlags(fs)
		o := defaultOptions()
		var args []string
		for k, v := range tt.set {
			args = append(args, "-"+k+"="+v)
		}
		fs.StringVar(&o.Rates, "rates", "", "")
		fs.StringVar(&o.Drivers, "driver", o.Drivers, "")
		fs.StringVar(&o.VUs, "vus", o.VUs, "")
		fs.StringVar(&o.Model, "model", o.Model, "")
		require.NoError(t, fs.Parse(args))
		given := map[string]bool{}
		for k := range tt.set {
			given[k] = true
		}
		_, _, err := NewCapacity(o, *co, func(n string) bool { return given[n] }, 2)
		require.Error(t, err, tt.set)
		assert.Contains(t, err.Error(), tt.want, tt.set)
	}
}

func TestCapacityDefaultsFitTheBudget(t *testing.T) {
	o := defaultOptions()
	cfg, cc, err := NewCapacity(o, *CapacityFlags(newFlagSet()), func(string) bool { return false }, 2)
	require.NoError(t, err)
	assert.Equal(t, "open", cfg.Model)
	assert.Equal(t, []string{"go"}, cfg.Drivers)
	assert.LessOrEqual(t, CapacityEstimate(cfg, cc), 10*time.Minute, "make study NAME=capacity must finish within 10 minutes")
}

func newFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}
