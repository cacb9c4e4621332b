package run

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

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
	jobs    []Job
}

func (p *synthProcs) startServer(_ Config, _ string, args []string, _ []int, _ string) (server, error) {
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

func (p *synthProcs) drive(_ context.Context, _ Config, d Driver, job Job, _ int) (*summary.Summary, driverRun, error) {
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
	return res, driverRun{Driver: record.ProcUsage{CPUSeconds: 0.2, WallSeconds: 1}, Server: record.ProcUsage{CPUSeconds: 0.5, WallSeconds: 1}}, nil
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

func capacityConfig(t *testing.T, modes string) (Config, Capacity) {
	t.Helper()
	o := defaultOptions()
	o.Workloads, o.Modes = "counter", modes
	set := map[string]bool{"workloads": true, "modes": true}
	cfg, cc, err := NewCapacity(o, *CapacityFlags(newFlagSet()), func(n string) bool { return set[n] }, 2)
	require.NoError(t, err)
	cfg.Reps, cc.Refine = 2, 4
	return cfg, cc
}

func newStudy(t *testing.T, cfg Config, cc Capacity, latency func(mode string, rate int) float64) (*study, *synthProcs) {
	p := &synthProcs{admin: &synthAdmin{}, latency: latency}
	dir := t.TempDir()
	return &study{cfg: cfg, cc: cc, p: p, runsDir: dir, out: io.Discard, start: time.Now()}, p
}

// checkCapacity is the check every search must pass: a found knee within
// the refinement's resolution below the true capacity, never above it.
func checkCapacity(k record.CapKnee, capacity int, tol float64) error {
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
	cfg, cc := capacityConfig(t, "mutex,inputQ")
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
		assert.Equal(t, plan.KneeNonMonotone.String(), k.State)
		assert.Error(t, checkCapacity(k, 5300, tol))
	}
}

// TestOverloadPhase runs the overload phase through the seam: every store
// design under every policy it can run, the policy's flags on the server,
// the rates scaled by the best capacity, the peaks sampled, and the
// recovery read from the timeline.
func TestOverloadPhase(t *testing.T) {
	cfg, cc := capacityConfig(t, "mutex,inputQ,noop")
	cc.OverloadFor, cc.RecoverFor = 500*time.Millisecond, time.Second
	s, p := newStudy(t, cfg, cc, func(string, int) float64 { return 0.3 })
	s.rec.Knees = []record.CapKnee{
		{Workload: "counter", Driver: "go", Mode: "mutex", Block: 1, Found: true, Rate: 10000},
		{Workload: "counter", Driver: "go", Mode: "inputQ", Block: 1, Found: true, Rate: 8000},
		{Workload: "counter", Driver: "go", Mode: "noop", Block: 1, Found: true, Rate: 50000},
	}
	wl, _ := plan.LookupWorkload("counter")
	require.NoError(t, s.overload(t.Context(), wl, "go"))
	require.Len(t, s.rec.Overruns, 2*len(plan.Policies), "noop is left out")
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
	var recovery []Job
	for _, j := range p.jobs {
		if j.Timeline > 0 {
			recovery = append(recovery, j)
		}
	}
	assert.Equal(t, 5, len(recovery), "one phase after each overload asks for a timeline")
	assert.Equal(t, len(s.runs), 10)
	for _, r := range s.runs {
		assert.False(t, r.Failed(), "%s: %v", r.ID, r.Problems)
	}
}

func TestRecoveryNeedsEveryLaterInterval(t *testing.T) {
	slo, err := plan.ParseSLO(plan.DefaultSLO)
	require.NoError(t, err)
	tl := func(p99s ...float64) *summary.Summary {
		s := &summary.Summary{}
		for i, p := range p99s {
			s.Timeline = append(s.Timeline, summary.TimelinePoint{StartS: 0.1 * float64(i), Calls: 1, P99Ms: p})
		}
		return s
	}
	at, ok := recovery(slo, tl(5, 0.5, 5, 0.5, 0.5))
	assert.True(t, ok)
	assert.InDelta(t, 0.3, at, 1e-9, "a good interval followed by a bad one is not recovered")
	_, ok = recovery(slo, tl(0.5, 5))
	assert.False(t, ok, "the last interval broke the objective")
	_, ok = recovery(slo, &summary.Summary{})
	assert.False(t, ok, "no timeline, no recovery time")
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
	assert.LessOrEqual(t, CapacityEstimate(cfg, cc), 10*time.Minute, "make capacity must finish within 10 minutes")
}

func newFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}
