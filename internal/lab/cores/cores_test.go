package cores

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

// coreRun is a counter run of one second at n server CPUs whose server
// served calls with cpu CPU seconds and its serial resource busy for busy
// seconds; at 2 CPUs the driver shared them.
func coreRun(t *testing.T, idx int, mode string, n, rep int, calls, cpu, busy float64) *record.Run {
	t.Helper()
	return coreRunAt(t, idx, mode, n, rep, "0s", 10, calls, cpu, busy)
}

// coreRunAt is coreRun with work per command and callers of its own.
func coreRunAt(t *testing.T, idx int, mode string, n, rep int, work string, callers int, calls, cpu, busy float64) *record.Run {
	t.Helper()
	st := &locklabv1.GetStatsResponse{Mode: mode, StoreBacked: true, WindowSeconds: 1, CpuSeconds: cpu, Requests: uint64(calls),
		RssBytes: 20 << 20, Serial: []*locklabv1.SerialDemand{{Workload: "counter", Resources: 1, BusySeconds: busy, MaxBusySeconds: busy, SampleEvery: 16}}}
	raw, err := protojson.Marshal(st)
	require.NoError(t, err)
	pt := plan.DefaultPoint().With(plan.ServerCPUs, fmt.Sprint(n)).With("work", work)
	server := []int{0, 1}[:n]
	driver := []int{1}
	if n == 2 {
		driver = server
	}
	r := &record.Run{
		Spec: plan.Spec{Index: idx, ID: fmt.Sprintf("%03d-counter-go-%s-vus%d%s-rep%d", idx, mode, callers, pt.IDSuffix(), rep),
			Workload: "counter", Driver: "go", Factors: pt, Mode: mode, Model: "closed", Level: callers, Rep: rep},
		Result: &summary.Summary{Schema: summary.Schema, Driver: "go", Workload: "counter", Model: "closed", Callers: callers, DurationS: 1,
			Calls: int64(calls), CallsPerS: calls, OK: int64(calls), LatencyMs: summary.LatencyMs{P50: 0.2, P99: 1, P999: 2, Max: 3}},
		ServerProc: record.ProcUsage{CPUs: server, CPUSeconds: cpu, WallSeconds: 1},
		DriverProc: record.ProcUsage{CPUs: driver, CPUSeconds: 0.3, WallSeconds: 1},
		SharedCPUs: n == 2,
		Stats:      raw, StatsBefore: raw,
	}
	r.Derived = mustDerive(t, r)
	return r
}

// TestCoresWorkedExample puts known demands through the report and finds
// the model's arithmetic in its tables.
//
//	mutex at 1 CPU:  40,000 calls, 1.0 CPU s, lock busy 0.8 s: D_cpu 25 µs, D_serial 20 µs, N* 1.25;
//	                 bound at 1 min(40,000, 50,000) = 40,000 (CPU), at 2 min(80,000, 50,000) = 50,000 (serial);
//	                 measured 45,000 at 2: within, 90% of the bound, gap 10%.
//	inputQ at 1 CPU: 32,000 calls, 1.0 CPU s, owner busy 0.4 s: D_cpu 31.25 µs, D_serial 12.5 µs, N* 2.5;
//	                 bound at 2 min(64,000, 80,000) = 64,000 (CPU), at 4 80,000 (serial);
//	                 measured 70,000 at 2: above the bound (the control), gap −9.4%.
func TestCoresWorkedExample(t *testing.T) {
	type cell struct{ calls, cpu, busy float64 }
	figures := map[string]map[int]cell{
		"mutex":  {1: {40_000, 1.0, 0.8}, 2: {45_000, 1.8, 0.9}},
		"inputQ": {1: {32_000, 1.0, 0.4}, 2: {70_000, 1.9, 0.85}},
	}
	var runs []*record.Run
	idx := 0
	for rep := 1; rep <= 3; rep++ {
		for _, mode := range []string{"mutex", "inputQ"} {
			for _, n := range []int{1, 2} {
				idx++
				c := figures[mode][n]
				runs = append(runs, coreRun(t, idx, mode, n, rep, c.calls, c.cpu, c.busy))
			}
		}
	}
	sp, err := plan.ParseSpace(map[string]string{plan.ServerCPUs: "1,2"})
	require.NoError(t, err)
	meta := record.Meta{Command: "compare -server-cpus 1,2 -share-cpus", Model: "closed", Workloads: []string{"counter"},
		Modes: []string{"mutex", "inputQ"}, Drivers: []string{"go"}, Levels: []int{10}, Duration: "1s", Warmup: "1s", Reps: 3, CPUs: 2,
		Factors: sp, ShareCPUs: true}
	rep, err := report.New(meta, runs, Part{})
	require.NoError(t, err)
	md := rep.Markdown()

	assert.Contains(t, md, "## "+coresHeading)
	assert.Contains(t, md, "### Bound · counter · go · 10 callers · work 0s, durability none, skew 0, read ratio default")
	// The table: demands, N*, the bound at each count (own runs at their
	// own), the measurement and the gap, and the model beyond.
	assert.Contains(t, md, "| mutex | 1 CPU (3 runs) | 25.0µs | 20.0µs | 1.25 | 40,000 (CPU), own runs | 40,000 (40,000–40,000) | 0.0% | "+
		"50,000 (serial) | 45,000 (45,000–45,000), shared | 10% |")
	assert.Contains(t, md, "| inputQ | 1 CPU (3 runs) | 31.2µs | 12.5µs | 2.50 | 32,000 (CPU), own runs | 32,000 (32,000–32,000) | 0.0% | "+
		"64,000 (CPU) | 70,000 (70,000–70,000), shared | -9.4% |")
	assert.Contains(t, md, "| mutex | 2 CPUs (3 runs) | 40.0µs | 20.0µs | 2.00 | 25,000 (CPU) |", "demands from the 2-CPU runs: a row of their own")
	assert.NotContains(t, md, "(model)", "no bound past the largest count measured")
	// The catalogue's rows.
	assert.Contains(t, md, "| serial demand per call (D_serial, busiest resource) | 20.0µs (20.0µs–20.0µs) | 12.5µs (12.5µs–12.5µs) |")
	assert.Contains(t, md, "| serial resource busy (of the window) | 80% (80%–80%) | 40% (40%–40%) |")
	// The shared flag: on the 2-CPU section, not on the 1-CPU one.
	two := md[strings.Index(md, "## counter · go driver · work 0s, durability none, skew 0, read ratio default, server CPUs 2"):]
	one := md[strings.Index(md, "## counter · go driver · work 0s, durability none, skew 0, read ratio default, server CPUs 1"):strings.Index(md, "## counter · go driver · work 0s, durability none, skew 0, read ratio default, server CPUs 2")]
	assert.Contains(t, two[:400], "**shared CPUs: throughput is shared-CPU throughput; the server's CPU per call and serial demand are still the server's own**")
	assert.NotContains(t, one, "shared CPUs")
	assert.Contains(t, md, "-share-cpus: where a run's server CPUs left the driver none of its own")

	page, err := rep.HTML()
	require.NoError(t, err)
	if os.Getenv("DUMP") != "" {
		os.WriteFile("/tmp/cores.md", []byte(md), 0o644)
		os.WriteFile("/tmp/cores.html", []byte(page), 0o644)
	}
	assert.Contains(t, page, `<figcaption>Bound · counter · go · 10 callers · work 0s, durability none, skew 0, read ratio default, attribution off: calls/s vs server CPUs</figcaption>`)

	// The control: the same arithmetic with one demand changed changes the
	// table (mutex's lock busy 0.4 s: D_serial 10 µs, N* 2.5, bound 80,000).
	runs[0] = coreRun(t, 1, "mutex", 1, 1, 40_000, 1.0, 0.4)
	runs[4] = coreRun(t, 5, "mutex", 1, 2, 40_000, 1.0, 0.4)
	runs[8] = coreRun(t, 9, "mutex", 1, 3, 40_000, 1.0, 0.4)
	rep, err = report.New(meta, runs, Part{})
	require.NoError(t, err)
	assert.Contains(t, rep.Markdown(), "| mutex | 1 CPU (3 runs) | 25.0µs | 10.0µs | 2.50 | 40,000 (CPU), own runs | 40,000 (40,000–40,000) | 0.0% | "+
		"80,000 (CPU) | 45,000 (45,000–45,000), shared | 44% |")
}

// TestNoCoresSection: a plan that neither swept the server's CPUs nor has a
// serial demand gets no bottleneck section; the control, the same runs with
// their serial demand, gets one.
func TestNoCoresSection(t *testing.T) {
	var runs []*record.Run
	for rep := 1; rep <= 3; rep++ {
		for i, mode := range []string{"mutex", "inputQ"} {
			runs = append(runs, coreRun(t, 2*(rep-1)+i+1, mode, 1, rep, 40_000, 1.0, 0.8))
		}
	}
	meta := record.Meta{Command: "compare", Model: "closed", Workloads: []string{"counter"}, Modes: []string{"mutex", "inputQ"},
		Drivers: []string{"go"}, Levels: []int{10}, Duration: "1s", Warmup: "1s", Reps: 3, CPUs: 2, Factors: plan.Space{}}
	with, err := report.New(meta, runs, Part{})
	require.NoError(t, err)
	assert.Contains(t, with.Markdown(), "## "+coresHeading, "the control: a serial demand, a section")

	for _, r := range runs {
		r.Derived.Serial = nil
	}
	rep, err := report.New(meta, runs, Part{})
	require.NoError(t, err)
	assert.NotContains(t, rep.Markdown(), "bottleneck bound")
	assert.NotContains(t, rep.Markdown(), coresHeading)
	assert.NotContains(t, rep.Markdown(), "shared CPUs")
}

func mustDerive(t *testing.T, r *record.Run) record.Derived {
	t.Helper()
	d, err := record.Derive(r)
	require.NoError(t, err)
	return d
}
