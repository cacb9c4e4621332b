package main

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

	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
)

// fakeRun is a record as runOne would write it, with chosen headline figures.
func fakeRun(t *testing.T, idx int, wl string, level int, mode string, rep int, rps, p99 float64) *RunRecord {
	t.Helper()
	backed := mode != "noop"
	st := &locklabv1.GetStatsResponse{
		Mode: mode, StoreBacked: backed, WindowSeconds: 10, CpuSeconds: 5, Requests: uint64(rps * 10),
		TotalBalance: 20_000_000_000, MinBalance: 1,
	}
	if backed {
		st.StoreLatency = []*locklabv1.StoreLatency{{Workload: "counter", Op: "increment", Count: uint64(rps * 10), P50Ns: 100 * float64(rep), P99Ns: 900, P999Ns: 2000, MaxNs: 50_000}}
	}
	if mode == "inputQ" {
		st.QueueHighWater = int64(level)
	}
	raw, err := protojson.Marshal(st)
	require.NoError(t, err)
	sum := &K6Summary{Schema: k6SummarySchema, Script: wl, TestRunDurationMs: 10_000}
	sum.Iterations = Rate{Count: rps * 10, Rate: rps}
	sum.DataReceived = ByteRate{Bytes: rps * 10 * 60, Rate: rps * 60}
	sum.DataSent = ByteRate{Bytes: rps * 10 * 80, Rate: rps * 80}
	sum.GRPCReqDuration.All = Trend{Avg: p99 / 4, Min: 0.1, Med: p99 / 5, Max: p99 * 3, P90: p99 / 2, P95: p99 / 1.5, P99: p99, Count: rps * 10}
	sum.IterationDuration = Trend{Avg: p99 / 3, Min: 0.2, Med: p99 / 4, Max: p99 * 4, P90: p99 / 1.8, P95: p99 / 1.4, P99: p99 * 1.1}
	sum.Checks.Passes = rps * 10
	r := &RunRecord{
		RunSpec: RunSpec{Index: idx, ID: fmt.Sprintf("%03d-%s-%s-vus%d-rep%d", idx, wl, mode, level, rep),
			Workload: wl, Mode: mode, Model: "closed", Level: level, Rep: rep},
		Started: time.Date(2026, 11, 23, 0, 0, idx, 0, time.UTC),
		K6:      k6Result{WallSeconds: 11, CPUSeconds: 5.5, Cores: 0.5},
		Summary: sum, Stats: raw, StatsBefore: raw,
	}
	r.Checks = checkInvariants(r.RunSpec, sum, st, st)
	r.Derived = derive(sum, r.K6, st)
	return r
}

func fakeMeta() Meta {
	return Meta{Command: "go run ./cmd/compare -workloads counter", Model: "closed", Workloads: []string{"counter"},
		Modes: []string{"mutex", "inputQ", "noop"}, Levels: []int{10, 100}, Duration: "10s", Warmup: "2s", Reps: 3, CPUs: 2}
}

// fakeRuns: at 10 VUs mutex clearly beats inputQ; at 100 VUs they overlap.
func fakeRuns(t *testing.T) []*RunRecord {
	figures := map[string]map[int][3]float64{ // mode → level → rps per rep
		"mutex":  {10: {1000, 1010, 1020}, 100: {5000, 5400, 5200}},
		"inputQ": {10: {800, 810, 790}, 100: {5100, 5300, 4900}},
		"noop":   {10: {2000, 2000, 2000}, 100: {10000, 10000, 10000}},
	}
	var runs []*RunRecord
	idx := 0
	for rep := 1; rep <= 3; rep++ {
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
	rep := &Report{Meta: fakeMeta(), Groups: aggregate(fakeRuns(t))}
	g := rep.group("counter", 100, "mutex")
	require.NotNil(t, g)
	s := g.fig("requests_per_sec")
	assert.Equal(t, Stat{Median: 5200, Min: 5000, Max: 5400, N: 3, Runs: g.Runs}, s)
	assert.Equal(t, 200.0, g.fig("store.counter.increment.p50_ns").Median)
	assert.True(t, g.StoreBacked)
	assert.False(t, rep.group("counter", 100, "noop").StoreBacked)
	assert.Equal(t, 100.0, rep.group("counter", 100, "inputQ").fig("queue_high_water").Median)
	_, ok := g.Figures["queue_high_water"]
	assert.False(t, ok, "a mutex has no queue")
	assert.Equal(t, 2.0, statOf([]*RunRecord{{}, {}}, func(r *RunRecord) (float64, bool) { return 2, true }).Median)
}

func TestVerdict(t *testing.T) {
	rep := &Report{Meta: fakeMeta(), Groups: aggregate(fakeRuns(t))}
	v10 := rep.verdict("counter", 10)
	assert.Contains(t, v10, "mutex leads inputQ by 26.2% in requests/s (1,010 vs 800)") // 1010/800
	assert.Contains(t, v10, "the ranges do not overlap: larger than the spread")
	assert.Contains(t, v10, "mutex reached 50% of the noop ceiling")
	assert.NotContains(t, v10, "saturated")

	v100 := rep.verdict("counter", 100)
	assert.Contains(t, v100, "mutex leads inputQ by 2.0%")
	assert.Contains(t, v100, "within the spread, no measurable difference")
}

func TestVerdictSaturatedAndSingleRep(t *testing.T) {
	runs := []*RunRecord{
		fakeRun(t, 1, "counter", 10, "mutex", 1, 1000, 1),
		fakeRun(t, 2, "counter", 10, "inputQ", 1, 900, 1),
	}
	runs[0].Derived.K6Saturated = true
	meta := fakeMeta()
	meta.Levels = []int{10}
	rep := &Report{Meta: meta, Groups: aggregate(runs)}
	v := rep.verdict("counter", 10)
	assert.Contains(t, v, "one repetition, so no spread to judge it against")
	assert.Contains(t, v, "k6 was saturated in 1 of 2 runs, so this level measured the load generator")
}

func TestMarkdownStructure(t *testing.T) {
	runs := fakeRuns(t)
	runs[4].Problems = []string{"INVARIANT VIOLATED: no lost increment: counter moved by 9, k6 saw 10 acknowledged"}
	rep := &Report{Meta: fakeMeta(), Groups: aggregate(runs)}
	md := rep.markdown()
	assert.NotContains(t, md, "sampled", "servers that measure every command say nothing of sampling")
	for _, want := range []string{
		"# locklab comparison: mutex vs inputQ vs noop",
		"Command: `go run ./cmd/compare -workloads counter`",
		"## Problems",
		"| " + runs[4].ID + " | INVARIANT VIOLATED: no lost increment",
		"## Workload counter",
		"### counter at 10 VUs",
		"### counter at 100 VUs",
		"| Parameters | mutex (3 runs) | inputQ (3 runs) | noop (3 runs) |",
		"| data_received |", "| data_sent |", "| grpc_req_duration |", "| iteration_duration |", "| iterations |",
		"| requests/s [min–max] | 5,200 [5,000–5,400] |",
		"| store latency counter.increment |",
		"n/a: keeps no state",
		"FAILED in 1 of 3 runs",
		"Verdict: mutex leads inputQ",
	} {
		assert.Contains(t, md, want)
	}
	// Every level table has a column for every mode, and its rows are complete.
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| grpc_req_duration |") {
			assert.Equal(t, 3, strings.Count(line, "avg="), line)
		}
	}
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
	md := (&Report{Meta: fakeMeta(), Groups: aggregate(runs)}).markdown()
	assert.Contains(t, md, "| store latency (1 in 16 sampled) counter.increment |")
}

func TestHTMLSelfContained(t *testing.T) {
	rep := &Report{Meta: fakeMeta(), Groups: aggregate(fakeRuns(t))}
	page, err := rep.html()
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(page, `src="data:image/svg+xml;base64,`), "three charts for one workload")
	assert.NotRegexp(t, regexp.MustCompile(`(src|href)="https?:`), page, "nothing may be fetched")
	assert.NotContains(t, page, "<script")
	assert.Contains(t, page, "<h3>counter at 100 VUs</h3>")
	assert.Contains(t, page, "<code>noop</code>")
}

// TestFiguresTraceable writes runs as runOne does, rebuilds the report from
// the files alone, and recomputes every figure from the runs it names.
func TestFiguresTraceable(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "runs"), 0o755))
	for _, r := range fakeRuns(t) {
		require.NoError(t, writeJSON(filepath.Join(dir, "runs", r.ID+".json"), r))
	}
	require.NoError(t, writeJSON(filepath.Join(dir, "meta.json"), fakeMeta()))
	require.NoError(t, rerender(dir, new(strings.Builder)))

	var groups []*Group
	b, err := os.ReadFile(filepath.Join(dir, "figures.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &groups))
	require.Len(t, groups, 6)

	records, err := loadRecords(dir)
	require.NoError(t, err)
	byID := map[string]*RunRecord{}
	for _, r := range records {
		byID[r.ID] = r
	}
	metrics := append(baseMetrics(), storeLatencyMetrics(records)...)
	checked := 0
	for _, g := range groups {
		for key, s := range g.Figures {
			var m *metric
			for i := range metrics {
				if metrics[i].Key == key {
					m = &metrics[i]
				}
			}
			require.NotNil(t, m, "figure %s has no definition", key)
			var from []*RunRecord
			for _, id := range s.Runs {
				r := byID[id]
				require.NotNil(t, r, "figure %s names run %s, which has no file", key, id)
				assert.Equal(t, g.Workload, r.Workload)
				assert.Equal(t, g.Mode, r.Mode)
				assert.Equal(t, g.Level, r.Level)
				from = append(from, r)
			}
			assert.Equal(t, s, statOf(from, m.get), "%s %s %d %s", key, g.Workload, g.Level, g.Mode)
			checked++
		}
	}
	assert.Greater(t, checked, 100)
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "5,200 [5,000–5,400]")
}
