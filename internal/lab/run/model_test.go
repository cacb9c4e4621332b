package run

import (
	"context"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/locklab/locklab/internal/lab/mva"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/render"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

// netAdmin is a synthetic server's stats: what its last measured run
// served, zeroed by Reset.
type netAdmin struct {
	locklabv1.UnimplementedAdminServiceServer
	mu    sync.Mutex
	stats *locklabv1.GetStatsResponse
}

func (a *netAdmin) Reset(context.Context, *locklabv1.ResetRequest) (*locklabv1.ResetResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stats = &locklabv1.GetStatsResponse{Mode: a.stats.GetMode(), StoreBacked: true, WindowSeconds: 0}
	return &locklabv1.ResetResponse{}, nil
}

func (a *netAdmin) GetStats(context.Context, *locklabv1.GetStatsRequest) (*locklabv1.GetStatsResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats, nil
}

// netDesign is a synthetic design: its demands, lines in the work, and how
// much its serial demand grows on 2 CPUs (1: not at all).
type netDesign struct {
	cpu, serial mva.Line
	serialAt2   float64
}

// netProcs is a synthetic server of known demands and known contention
// behind the procs seam: each run serves what the closed network of its
// design, work, CPUs and callers serves, and its stats say the demands.
// No process runs.
type netProcs struct {
	admin   *netAdmin
	designs map[string]netDesign
	mode    string
	work    float64
	cpus    int
}

const netThink = 60e-6

func (p *netProcs) startServer(_ Config, _ string, args []string, cpus []int, _ string) (server, error) {
	p.mode, p.cpus, p.work = args[1], len(cpus), 0
	for i, a := range args {
		if a == "-work" {
			d, err := time.ParseDuration(args[i+1])
			if err != nil {
				return nil, err
			}
			p.work = d.Seconds()
		}
	}
	p.admin.stats = &locklabv1.GetStatsResponse{Mode: p.mode, StoreBacked: true}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := grpc.NewServer()
	locklabv1.RegisterAdminServiceServer(srv, p.admin)
	go srv.Serve(lis) // stopped by fakeServer.stop
	return fakeServer{srv, lis}, nil
}

func (p *netProcs) drive(_ context.Context, _ Config, d Driver, job Job, _ int) (*summary.Summary, DriverRun, error) {
	ds := p.designs[p.mode]
	n := mva.Network{Think: netThink, CPUs: p.cpus, CPU: ds.cpu.At(p.work), Serial: ds.serial.At(p.work)}
	if p.cpus == 2 {
		n.Serial *= ds.serialAt2
	}
	x, err := n.Throughput(job.Spec.Level)
	if err != nil {
		return nil, DriverRun{}, err
	}
	secs := job.Duration.Seconds()
	calls := int64(x * secs)
	if !job.Warmup {
		p.admin.mu.Lock()
		p.admin.stats = &locklabv1.GetStatsResponse{Mode: p.mode, StoreBacked: true, WindowSeconds: secs,
			Requests: uint64(calls), CpuSeconds: n.CPU * float64(calls), CounterValue: calls,
			Serial: []*locklabv1.SerialDemand{{Workload: "counter", Resources: 1, SampleEvery: 1,
				BusySeconds: n.Serial * float64(calls), MaxBusySeconds: n.Serial * float64(calls)}}}
		p.admin.mu.Unlock()
	}
	res := &summary.Summary{Schema: summary.Schema, Driver: d.Name(), Model: "closed", Callers: job.Spec.Level, DurationS: secs,
		Calls: calls, CallsPerS: float64(calls) / secs, OK: calls, AckedIncrementDelta: calls}
	return res, DriverRun{
		Driver: record.ProcUsage{CPUs: job.Place.Driver, CPUSeconds: 0.2 * secs, WallSeconds: secs},
		Server: record.ProcUsage{CPUs: job.Place.Server, CPUSeconds: n.CPU * float64(calls), WallSeconds: secs},
	}, nil
}

// modelVerdicts runs the cores plan's shape — 1 and 2 server CPUs, three
// work levels, mutex and inputQ, six blocks — through the runner against
// the synthetic server and returns the report's held-out rows: point →
// the model's verdict, by design.
func modelVerdicts(t *testing.T, designs map[string]netDesign) map[string]map[string]string {
	t.Helper()
	cfg := testConfig(t, func(o *Options) {
		o.Workloads, o.Modes, o.Drivers, o.VUs, o.Reps = "counter", "mutex,inputQ", "go", "16", 6
		o.AA, o.ShareCPUs = false, true
		o.Factors = map[string]string{"work": "0,20us,40us", "server-cpus": "1,2"}
	})
	cfg.Duration, cfg.Warmup, cfg.Out = time.Second, 0, t.TempDir()
	p := &netProcs{admin: &netAdmin{}, designs: designs}
	runs, err := runPlan(t.Context(), cfg, p, layout(cfg), new(nopWriter))
	require.NoError(t, err)
	require.Len(t, runs, 2*2*3*6)
	rep, err := render.New(newMeta(cfg, nil), runs)
	require.NoError(t, err)
	md := rep.Markdown()
	out := map[string]map[string]string{}
	re := regexp.MustCompile(`(?m)^\| (mutex|inputQ) \| (other [^|]*) \| ([^|]*) \|[^|]*\|[^|]*\|[^|]*\| ([^|]*) \|$`)
	for _, m := range re.FindAllStringSubmatch(md, -1) {
		if out[m[1]] == nil {
			out[m[1]] = map[string]string{}
		}
		out[m[1]][m[3]] = m[4]
	}
	return out
}

// TestCoresModelThroughTheRunner: a synthetic server of known demands and
// known contention, behind the runner's procs seam, through the runner,
// the records and the report. The model fitted at 1 CPU predicts every
// point it held out (1 CPU at 20 µs, 2 CPUs at every work) within its
// error. The control: mutex's serial demand grows by half on 2 CPUs —
// contention the model is told nothing of — and its 2-CPU predictions with
// work are off.
func TestCoresModelThroughTheRunner(t *testing.T) {
	designs := map[string]netDesign{
		"mutex":  {cpu: mva.Line{A: 12e-6, B: 1}, serial: mva.Line{A: 1e-6, B: 1.5}, serialAt2: 1},
		"inputQ": {cpu: mva.Line{A: 20e-6, B: 1}, serial: mva.Line{A: 6e-6, B: 1}, serialAt2: 1},
	}
	got := modelVerdicts(t, designs)
	for _, mode := range []string{"mutex", "inputQ"} {
		require.Len(t, got[mode], 4, "%s: four held-out points", mode)
		for point, verdict := range got[mode] {
			assert.Equal(t, "within", verdict, "%s at %s", mode, point)
		}
	}

	grown := designs["mutex"]
	grown.serialAt2 = 1.5
	designs["mutex"] = grown
	got = modelVerdicts(t, designs)
	require.Len(t, got["mutex"], 4)
	off := 0
	for point, verdict := range got["mutex"] {
		if strings.Contains(point, "2 CPUs") && !strings.HasPrefix(point, "0s") {
			assert.True(t, strings.HasPrefix(verdict, "off by +"), "the control: mutex at %s: %q", point, verdict)
			off++
		}
	}
	assert.Equal(t, 2, off, "20 µs and 40 µs at 2 CPUs")
	for point, verdict := range got["inputQ"] {
		assert.Equal(t, "within", verdict, "inputQ at %s", point)
	}
}
