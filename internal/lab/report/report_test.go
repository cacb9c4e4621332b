package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

// chartSrc starts every chart's image: html/template writes the '+' of the
// media type as an entity, which the browser reads back as '+'.
const chartSrc = `src="data:image/svg&#43;xml;base64,`

// fakeRun is a record as runOne would write it, with chosen headline figures.
// Its server was busy (server-bound) unless changed afterwards.
func fakeRun(t *testing.T, idx int, wl string, level int, mode string, rep int, rps, p99 float64) *record.Run {
	t.Helper()
	backed := mode != "noop"
	st := &locklabv1.GetStatsResponse{
		Mode: mode, StoreBacked: backed, WindowSeconds: 10, CpuSeconds: 9.5, Requests: uint64(rps * 10),
		TotalBalance: 20_000_000_000, MinBalance: 1, RssBytes: 20 << 20,
	}
	if backed {
		st.StoreLatency = []*locklabv1.StoreLatency{{Workload: "counter", Op: "increment", Count: uint64(rps * 10), P50Ns: 100 * float64(rep), P99Ns: 900, P999Ns: 2000, MaxNs: 50_000}}
	}
	if mode == "inputQ" {
		st.QueueHighWater = int64(level)
	}
	raw, err := protojson.Marshal(st)
	require.NoError(t, err)
	res := &summary.Summary{Schema: summary.Schema, Driver: "go", Workload: wl, Model: "closed", Callers: level, DurationS: 10,
		Calls: int64(rps * 10), CallsPerS: rps, OK: int64(rps * 10),
		LatencyMs:   summary.LatencyMs{Min: 0.1, Mean: p99 / 4, P50: p99 / 5, P90: p99 / 2, P95: p99 / 1.5, P99: p99, P999: p99 * 2, Max: p99 * 3},
		Percentiles: [][2]float64{{0, 0.1}, {50, p99 / 5}, {90, p99 / 2}, {99, p99}, {99.9, p99 * 2}, {100, p99 * 3}},
	}
	r := &record.Run{
		Spec: plan.Spec{Index: idx, ID: fmt.Sprintf("%03d-%s-go-%s-vus%d-rep%d", idx, wl, mode, level, rep),
			Workload: wl, Driver: "go", Factors: plan.DefaultPoint(), Mode: mode, Model: "closed", Level: level, Rep: rep},
		Started:    time.Date(2026, 11, 23, 0, 0, idx, 0, time.UTC),
		Result:     res,
		DriverProc: record.ProcUsage{CPUs: []int{1}, CPUSeconds: 5, WallSeconds: 10},
		ServerProc: record.ProcUsage{CPUs: []int{0}, CPUSeconds: 9.5, WallSeconds: 10},
		Stats:      raw, StatsBefore: raw,
	}
	r.Checks = []record.Check{{Name: "money conserved", OK: true, Detail: "unchanged"}}
	r.Derived = mustDerive(t, r)
	return r
}

func fakeMeta() record.Meta {
	return record.Meta{Command: "go run ./cmd/compare -workloads counter", Model: "closed", Workloads: []string{"counter"},
		Modes: []string{"mutex", "inputQ", "noop"}, Drivers: []string{"go"}, Levels: []int{10, 100}, Duration: "10s", Warmup: "2s", Reps: 5, CPUs: 2,
		Factors: plan.DefaultSpace()}
}

var counterGo = Section{Workload: "counter", Driver: "go", Factors: plan.DefaultPoint()}

// fakeRuns: at 10 callers mutex clearly beats inputQ; at 100 they overlap.
func fakeRuns(t *testing.T) []*record.Run {
	figures := map[string]map[int][5]float64{ // mode → level → calls/s per rep
		"mutex":  {10: {1000, 1010, 1020, 1005, 1015}, 100: {5000, 5400, 5200, 5100, 5300}},
		"inputQ": {10: {800, 810, 790, 805, 795}, 100: {5100, 5300, 4900, 5250, 5050}},
		"noop":   {10: {2000, 2000, 2000, 2000, 2000}, 100: {10000, 10000, 10000, 10000, 10000}},
	}
	var runs []*record.Run
	idx := 0
	for rep := 1; rep <= 5; rep++ {
		for _, level := range []int{10, 100} {
			for _, mode := range []string{"mutex", "inputQ", "noop"} {
				idx++
				runs = append(runs, fakeRun(t, idx, "counter", level, mode, rep, figures[mode][level][rep-1], float64(level)/10))
			}
		}
	}
	return runs
}

func TestAggregateMedians(t *testing.T) {
	rep := mustNew(t, fakeMeta(), fakeRuns(t))
	g := rep.group(counterGo, 100, "mutex")
	require.NotNil(t, g)
	s := g.fig(mCallsPerSec)
	assert.Equal(t, 5200.0, s.Median)
	assert.Equal(t, 5000.0, s.Min)
	assert.Equal(t, 5400.0, s.Max)
	assert.Equal(t, 5, s.N)
	assert.False(t, s.CI, "5 runs are too few for a 95% interval of the median")
	assert.Equal(t, 300.0, g.fig(family("store.%s.p50_ns").forOp("counter.increment")).Median)
	assert.True(t, g.StoreBacked)
	assert.Equal(t, 5, g.Classes[record.ClassServerBound])
	assert.False(t, rep.group(counterGo, 100, "noop").StoreBacked)
	assert.Equal(t, 100.0, rep.group(counterGo, 100, "inputQ").Figures["queue_high_water"].Median)
	_, ok := g.Figures["queue_high_water"]
	assert.False(t, ok, "a mutex has no queue")
	assert.Equal(t, 20.0, g.Figures["server_rss_mib"].Median)
}

func TestStatConfidenceInterval(t *testing.T) {
	s := statOfValues([]float64{5, 1, 4, 2, 3, 6, 7}, nil)
	assert.Equal(t, 4.0, s.Median)
	require.True(t, s.CI, "7 runs give a 95% interval")
	assert.LessOrEqual(t, s.Lo, s.Median)
	assert.GreaterOrEqual(t, s.Hi, s.Median)
	assert.Equal(t, "4 [1–7]", fmtCI(s, fmtNum))
	assert.Equal(t, "2 (1–3)", fmtCI(statOfValues([]float64{1, 3, 2}, nil), fmtNum), "too few runs: the range, in parentheses")
	assert.Equal(t, "—", fmtCI(Stat{}, fmtNum))
}

func TestMarkdownStructure(t *testing.T) {
	runs := fakeRuns(t)
	runs[4].Problems = []string{"INVARIANT VIOLATED: no lost increment: counter moved by 9, go saw 10 acknowledged"}
	rep := mustNew(t, fakeMeta(), runs)
	md := rep.Markdown()
	assert.NotContains(t, md, "sampled", "servers that measure every command say nothing of sampling")
	for _, want := range []string{
		"# locklab comparison: mutex vs inputQ vs noop",
		"Command: `go run ./cmd/compare -workloads counter`",
		"Contents:",
		"- [counter · go driver · work 0s, durability none, skew 0, read ratio default, server CPUs half, attribution off](#counter--go-driver--work-0s-durability-none-skew-0-read-ratio-default-server-cpus-half-attribution-off)",
		"  - [counter · go · 10 callers](#counter--go--10-callers)",
		"## Problems",
		"| " + runs[4].ID + " | INVARIANT VIOLATED: no lost increment",
		"## counter · go driver · work 0s, durability none, skew 0, read ratio default, server CPUs half, attribution off",
		"### counter · go · 10 callers",
		"### counter · go · 100 callers",
		"| figure | mutex (5 runs) | inputQ (5 runs) | noop (5 runs) |",
		"| calls/s | 5,200 (5,000–5,400) |",
		"| runs by class | 5 server-bound |",
		"| store latency counter.increment |",
		"| server memory (RSS) | 20.0 MiB (20.0 MiB–20.0 MiB) |",
		"n/a: keeps no state",
		"FAILED in 1 of 5 runs",
		"| design | against | calls/s | p99 latency | server CPU per call |",
		"| inputQ | mutex | −21% [",
		"| inputQ | mutex | too few blocks (n=4) |",
		"p50=300ns p99=900ns p99.9=2.0µs max=50.0µs (n=10,100 a run)",
		"## Every run",
	} {
		assert.Contains(t, md, want)
	}
	// report.md counts the runs; report.html lists each.
	assert.Contains(t, md, fmt.Sprintf("%d runs, by class over their measured window: %d server-bound; 1 failed or broke an invariant", len(runs), len(runs)))
	assert.NotContains(t, md, "| 001-counter-go-mutex-vus10-rep1 |")
	page, err := rep.HTML()
	require.NoError(t, err)
	for _, want := range []string{
		"<tr><td>001-counter-go-mutex-vus10-rep1</td><td>1</td><td>server-bound</td><td>95%</td><td>50%</td><td>—</td><td>—</td><td>—</td><td>—</td><td>1,000</td><td>1.00ms</td><td>held</td><td>the server&#39;s CPU</td></tr>",
		"<tr><td>" + runs[4].ID + "</td><td>1</td><td>server-bound</td><td>95%</td><td>50%</td><td>—</td><td>—</td><td>—</td><td>—</td><td>5,100</td><td>10.00ms</td><td>FAILED</td><td>the server&#39;s CPU</td></tr>",
		"<tr><td>003-counter-go-noop-vus10-rep1</td><td>1</td><td>server-bound</td><td>95%</td><td>50%</td><td>—</td><td>—</td><td>—</td><td>—</td><td>2,000</td><td>1.00ms</td><td>n/a</td><td>the server&#39;s CPU</td></tr>",
	} {
		assert.Contains(t, page, want)
	}
	assert.Equal(t, 1, strings.Count(md, "How to read"), "the long explanation once per report")
}

func TestNotApplicableCells(t *testing.T) {
	meta := fakeMeta()
	meta.Modes = []string{"mutex", "atomic", "inputQ"}
	meta.NA = []plan.NA{{Workload: "counter", Mode: "atomic", Factor: "durability", Value: "wal", Reason: "atomic cannot run with a write-ahead log"}}
	wal := plan.DefaultPoint().With("durability", "wal")
	var runs []*record.Run
	for i, mode := range []string{"mutex", "inputQ"} {
		r := fakeRun(t, i+1, "counter", 10, mode, 1, 1000, 1)
		r.Factors = wal
		runs = append(runs, r)
	}
	rep := mustNew(t, meta, runs)
	md := rep.Markdown()
	assert.Contains(t, md, "| figure | mutex (1 runs) | atomic | inputQ (1 runs) |")
	assert.Contains(t, md, "| calls/s | 1,000 | n/a | 1,000 |")
	assert.Contains(t, md, "| 10 callers | 1,000 | 1.00ms | n/a | n/a | 1,000 | 1.00ms |")
	assert.Contains(t, md, "## Not applicable")
	assert.Contains(t, md, "| counter | atomic | durability wal | atomic cannot run with a write-ahead log |")
	// The control: a mode that is servable but simply did not run is —, not n/a.
	meta.NA = nil
	md = mustNew(t, meta, runs).Markdown()
	assert.Contains(t, md, "| calls/s | 1,000 | — | 1,000 |")
}

func TestMarkdownNamesLatencySampling(t *testing.T) {
	runs := fakeRuns(t)
	for _, r := range runs {
		var st locklabv1.GetStatsResponse
		require.NoError(t, protojson.Unmarshal(r.Stats, &st))
		st.LatencySampleEvery = 16
		raw, err := protojson.Marshal(&st)
		require.NoError(t, err)
		r.Stats = raw
	}
	md := mustNew(t, fakeMeta(), runs).Markdown()
	assert.Contains(t, md, "| store latency (1 in 16 sampled) counter.increment |")
}

// TestRuntimeStats: the runtime's figures are read through GetStats' typed
// fields; a zero is a measured zero, not a missing figure.
func TestRuntimeStats(t *testing.T) {
	r := fakeRun(t, 1, "counter", 10, "inputQ", 1, 1000, 1)
	var st locklabv1.GetStatsResponse
	require.NoError(t, protojson.Unmarshal(r.Stats, &st))
	st.SchedLatencyP99Ns, st.MutexWaitSeconds = 25000, 0.01
	r.Stats, _ = protojson.Marshal(&st)
	r = &record.Run{Spec: r.Spec, Result: r.Result, Stats: r.Stats} // decoded afresh
	value := func(key string) float64 {
		t.Helper()
		v, ok, err := metricByKey(t, key).value(r)
		require.NoError(t, err)
		require.True(t, ok, key)
		return v
	}
	assert.Equal(t, 25000.0, value("sched_latency_p99_ns"))
	assert.InDelta(t, 1.0, value("mutex_wait_us_per_call"), 1e-9, "0.01 s over 10,000 calls is 1 µs a call")
	assert.Equal(t, 0.0, value("sched_latency_p50_ns"), "a zero protojson left out is still a zero")
}

func TestHTMLSelfContained(t *testing.T) {
	rep := mustNew(t, fakeMeta(), fakeRuns(t))
	page, err := rep.HTML()
	require.NoError(t, err)
	// the forest plot of the primaries, the headline's effects on each
	// compared metric; throughput, p99, CPU per call, store latency,
	// scheduler latency (a measured zero here), and a percentile curve per
	// level
	assert.Equal(t, 1+len(Compared())+7, strings.Count(page, chartSrc))
	assert.NotRegexp(t, regexp.MustCompile(`(src|href)="https?:`), page, "nothing may be fetched")
	assert.NotContains(t, page, "<script")
	assert.Contains(t, page, `<h3 id="counter--go--100-callers">counter · go · 100 callers</h3>`)
	assert.Contains(t, page, `<a href="#counter--go--100-callers">`)
	assert.Contains(t, page, "<code>noop</code>")
	assert.NotContains(t, page, "ZgotmplZ", "every chart URL passed html/template")
}

func TestHTMLEscapesText(t *testing.T) {
	meta := fakeMeta()
	meta.Command = "compare -out <script>alert(1)</script>"
	page, err := mustNew(t, meta, fakeRuns(t)).HTML()
	require.NoError(t, err)
	assert.NotContains(t, page, "<script>alert")
	assert.Contains(t, page, "&lt;script&gt;alert(1)&lt;/script&gt;")
}

func TestMergedCurve(t *testing.T) {
	runs := fakeRuns(t)[:3]
	curve := mergedCurve(runs[:1])
	assert.Equal(t, [][2]float64{{0, 0.1}, {50, 0.2}, {90, 0.5}, {99, 1}, {99.9, 2}}, curve, "no HDR: the driver's points, up to 99.999")

	for i, r := range runs {
		h := summary.NewHistogram()
		for v := int64(1); v <= 1000; v++ {
			require.NoError(t, h.RecordValue(v*int64(i+1)))
		}
		enc, err := summary.EncodeHDR(h)
		require.NoError(t, err)
		r.Result.HDR = enc
	}
	merged := mergedCurve(runs)
	require.NotEmpty(t, merged)
	last := merged[len(merged)-1]
	assert.LessOrEqual(t, last[0], maxCurvePercentile, "100% is at infinity on the 1/(1-p) axis")
	assert.Greater(t, last[0], 99.9)
	assert.InDelta(t, 3.0, last[1], 0.05, "the merged tail is the slowest run's")
}

// TestFiguresTraceable writes runs as runOne does, rebuilds the report from
// the files alone, and recomputes every figure from the runs it names.
func TestFiguresTraceable(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "runs"), 0o755))
	for _, r := range fakeRuns(t) {
		require.NoError(t, record.WriteJSON(filepath.Join(dir, "runs", r.ID+".json"), r))
	}
	require.NoError(t, record.WriteJSON(filepath.Join(dir, "meta.json"), fakeMeta()))
	require.NoError(t, Rerender(dir, new(strings.Builder)))

	var groups []*Group
	b, err := os.ReadFile(filepath.Join(dir, "figures.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &groups))
	require.Len(t, groups, 6)

	records, err := record.Load(os.DirFS(dir))
	require.NoError(t, err)
	byID := map[string]*record.Run{}
	for _, r := range records {
		byID[r.ID] = r
	}
	ops, err := storeOpsOf(records)
	require.NoError(t, err)
	metrics := expand(ops)
	checked := 0
	for _, g := range groups {
		for key, s := range g.Figures {
			var m *Metric
			for _, c := range metrics {
				if c.Key == key {
					m = c
				}
			}
			require.NotNil(t, m, "figure %s has no definition", key)
			var from []*record.Run
			for _, id := range s.Runs {
				r := byID[id]
				require.NotNil(t, r, "figure %s names run %s, which has no file", key, id)
				assert.Equal(t, g.Section, Section{Workload: r.Workload, Driver: r.Driver, Factors: r.Factors})
				assert.Equal(t, g.Mode, r.Mode)
				assert.Equal(t, g.Level, r.Level)
				from = append(from, r)
			}
			again, err := statOf(from, m)
			require.NoError(t, err)
			assert.Equal(t, s, again, "%s %s %d %s", key, g.Workload, g.Level, g.Mode)
			checked++
		}
	}
	assert.GreaterOrEqual(t, checked, 100)
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "5,200 (5,000–5,400)")
}

// TestWALRows: where runs kept a write-ahead log, the level table shows its
// syncs per second and records per sync (group commit); where none did, the
// rows are left out (the control).
func TestWALRows(t *testing.T) {
	rowOf := func(tb table, name string) []string {
		for _, r := range tb.rows {
			if r[0] == name {
				return r
			}
		}
		return nil
	}
	runs := fakeRuns(t)
	rep := mustNew(t, fakeMeta(), runs)
	tb := rep.levelTable(counterGo, 10)
	assert.Nil(t, rowOf(tb, metricByKey(t, "wal_records_per_sync").Label), "no log, no row")

	for _, r := range runs {
		var st locklabv1.GetStatsResponse
		require.NoError(t, protojson.Unmarshal(r.Stats, &st))
		st.WalSyncs, st.WalRecords = 100, 1000
		r.Stats, _ = protojson.Marshal(&st)
	}
	rep = mustNew(t, fakeMeta(), runs)
	tb = rep.levelTable(counterGo, 10)
	perSync := rowOf(tb, metricByKey(t, "wal_records_per_sync").Label)
	require.NotNil(t, perSync)
	assert.Contains(t, perSync[1], "10.0")
	perSec := rowOf(tb, metricByKey(t, "wal_syncs_per_s").Label)
	require.NotNil(t, perSec)
	assert.Contains(t, perSec[1], "10") // 100 syncs in a 10 s window
}

func mustDerive(t *testing.T, r *record.Run) record.Derived {
	t.Helper()
	d, err := record.Derive(r)
	require.NoError(t, err)
	return d
}

// mustNew builds a report as New does: figures and paired verdicts, with
// testLab's parts.
func mustNew(t *testing.T, meta record.Meta, runs []*record.Run) *Report {
	t.Helper()
	rep, err := New(meta, runs, testLab.Parts...)
	require.NoError(t, err)
	return rep
}

func mustAggregate(t *testing.T, runs []*record.Run) []*Group {
	t.Helper()
	g, err := Aggregate(runs)
	require.NoError(t, err)
	return g
}

// metricByKey finds a catalogue metric (not a family) by its key.
func metricByKey(t *testing.T, key string) *Metric {
	t.Helper()
	for _, m := range Catalogue {
		if m.Key == key {
			return m
		}
	}
	t.Fatalf("no metric %s in the catalogue", key)
	return nil
}

// TestMachineLineNamesTheDatabase: a comparison over a database and its
// cache names their versions in the setup lines; one in memory names none
// (the control).
func TestMachineLineNamesTheDatabase(t *testing.T) {
	meta := fakeMeta()
	mem := mustNew(t, meta, fakeRuns(t)).Markdown()
	assert.NotContains(t, mem, "MariaDB")
	meta.MariaDBVersion, meta.RedisVersion = "mariadbd  Ver 11.8.3-MariaDB", "Redis server v=8.0.2"
	md := mustNew(t, meta, fakeRuns(t)).Markdown()
	line := md[strings.Index(md, "Machine: "):]
	line, _, _ = strings.Cut(line, "\n")
	assert.Contains(t, line, "; mariadbd  Ver 11.8.3-MariaDB; Redis server v=8.0.2;")
}
