package run

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
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

// fakeAdmin is a server's AdminService whose counter a fake driver moves.
type fakeAdmin struct {
	locklabv1.UnimplementedAdminServiceServer
	mu      sync.Mutex // protects counter and resets
	counter int64
	resets  int
}

func (a *fakeAdmin) Reset(context.Context, *locklabv1.ResetRequest) (*locklabv1.ResetResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.counter = 0
	a.resets++
	return &locklabv1.ResetResponse{}, nil
}

func (a *fakeAdmin) GetStats(context.Context, *locklabv1.GetStatsRequest) (*locklabv1.GetStatsResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return &locklabv1.GetStatsResponse{Mode: "mutex", StoreBacked: true, CounterValue: a.counter,
		Requests: uint64(a.counter), CpuSeconds: 0.5, WindowSeconds: 1, TotalBalance: 1000}, nil
}

// fakeProcs runs no process: the server is fakeAdmin on a loopback
// listener, the driver a function that moves its counter.
type fakeProcs struct {
	admin   *fakeAdmin
	applied int64 // increments the "driver" applies
	acked   int64 // increments it says were acknowledged
	args    []string
	bins    []string // the server binary of every run
	jobs    []Job
}

type fakeServer struct {
	srv *grpc.Server
	lis net.Listener
}

func (s fakeServer) address() string { return s.lis.Addr().String() }
func (s fakeServer) pid() int        { return 0 }
func (s fakeServer) stop() (int, time.Duration) {
	s.srv.Stop()
	return 0, time.Millisecond
}

func (p *fakeProcs) startServer(_ Config, bin string, args []string, _ []int, _ string) (server, error) {
	p.bins = append(p.bins, bin)
	p.args = args
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := grpc.NewServer()
	locklabv1.RegisterAdminServiceServer(srv, p.admin)
	go srv.Serve(lis) // stopped by fakeServer.stop
	return fakeServer{srv, lis}, nil
}

func (p *fakeProcs) drive(_ context.Context, _ Config, d Driver, job Job, _ int) (*summary.Summary, DriverRun, error) {
	p.jobs = append(p.jobs, job)
	if !job.Warmup {
		p.admin.mu.Lock()
		p.admin.counter += p.applied
		p.admin.mu.Unlock()
	}
	res := &summary.Summary{Schema: summary.Schema, Driver: d.Name(), Model: "closed", DurationS: job.Duration.Seconds(),
		Calls: p.acked, CallsPerS: float64(p.acked) / job.Duration.Seconds(), OK: p.acked, AckedIncrementDelta: p.acked}
	return res, DriverRun{
		Driver: record.ProcUsage{CPUs: job.Place.Driver, CPUSeconds: 0.2, WallSeconds: 1},
		Server: record.ProcUsage{CPUs: job.Place.Server, CPUSeconds: 0.95, WallSeconds: 1},
	}, nil
}

// TestRunOneWithoutProcesses runs one run through the procs seam: warm-up,
// reset, measured run, stats, invariants and the record; the control is a
// driver whose acknowledged increments the server did not apply.
func TestRunOneWithoutProcesses(t *testing.T) {
	cfg := testConfig(t, func(o *Options) {
		o.Workloads, o.Modes, o.Drivers, o.VUs, o.Reps = "counter", "mutex", "go", "10", 1
		o.Factors = map[string]string{"work": "10us"}
	})
	spec := layout(cfg)[0]
	p := &fakeProcs{admin: &fakeAdmin{}, applied: 500, acked: 500}
	rec, err := runOne(t.Context(), cfg, p, spec, t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, spec, rec.Spec)
	assert.Empty(t, rec.Problems)
	assert.Equal(t, []string{"-mode", "mutex", "-addr", "127.0.0.1:0", "-work", "10µs"}, p.args, "the factor reached the server")
	require.Len(t, p.jobs, 2)
	assert.True(t, p.jobs[0].Warmup)
	assert.Equal(t, cfg.Warmup, p.jobs[0].Duration)
	assert.Equal(t, cfg.Duration, p.jobs[1].Duration)
	assert.NotNil(t, p.jobs[1].Prior, "the measured run knows its warm-up")
	assert.Equal(t, 1, p.admin.resets)
	assert.Equal(t, record.ClassServerBound, rec.Derived.Class, "95% of the server's CPU")
	for _, c := range rec.Checks {
		assert.True(t, c.OK, "%s: %s", c.Name, c.Detail)
	}
	st, err := rec.ServerStats()
	require.NoError(t, err)
	assert.Equal(t, int64(500), st.GetCounterValue())

	// The control: increments acknowledged but not applied are lost.
	p = &fakeProcs{admin: &fakeAdmin{}, applied: 499, acked: 500}
	rec, err = runOne(t.Context(), cfg, p, spec, t.TempDir())
	require.NoError(t, err)
	assert.True(t, rec.Failed())
	assert.Contains(t, rec.Problems, "INVARIANT VIOLATED: no lost increment: counter moved by 499, go saw 500 acknowledged")
}

var _ plan.Serves = Serves

// TestRunOneSharedCPUs: a server given every CPU runs with the driver on
// the same CPUs only under -share-cpus, and its record says so; a run whose
// driver has CPUs of its own does not.
func TestRunOneSharedCPUs(t *testing.T) {
	cfg := testConfig(t, func(o *Options) {
		o.Workloads, o.Modes, o.Drivers, o.VUs, o.Reps, o.ShareCPUs = "counter", "mutex", "go", "10", 1, true
		o.Factors = map[string]string{plan.ServerCPUs: "1,2"}
	})
	specs := layout(cfg)
	require.Len(t, specs, 2)
	for i, want := range []plan.Placement{{Server: []int{0}, Driver: []int{1}}, {Server: []int{0, 1}, Driver: []int{0, 1}, Shared: true}} {
		p := &fakeProcs{admin: &fakeAdmin{}, applied: 500, acked: 500}
		rec, err := runOne(t.Context(), cfg, p, specs[i], t.TempDir())
		require.NoError(t, err)
		require.Len(t, p.jobs, 2)
		assert.Equal(t, want, p.jobs[1].Place, specs[i].ID)
		assert.Equal(t, want.Shared, rec.SharedCPUs, specs[i].ID)
		b, err := json.Marshal(rec)
		require.NoError(t, err)
		assert.Equal(t, want.Shared, strings.Contains(string(b), `"shared_cpus":true`), "the record says so")
	}
	meta := newMeta(cfg, nil)
	assert.True(t, meta.ShareCPUs, "meta.json says so")
}
