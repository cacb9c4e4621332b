package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/summary"
)

// capRun is a fixture run of the capacity study.
func capRun(id, mode string, rate int, p99 float64, res func(*summary.Summary)) *record.Run {
	s := &summary.Summary{Schema: summary.Schema, Driver: "go", Model: "open", DurationS: 1, Calls: int64(rate), CallsPerS: float64(rate),
		OK: int64(rate), ByCode: map[string]int64{"OK": int64(rate)}, LatencyMs: summary.LatencyMs{P50: p99 / 4, P99: p99, P999: 2 * p99}}
	if res != nil {
		res(s)
	}
	stats := json.RawMessage(`{"mode":"` + mode + `","storeBacked":true,"requests":"1000","cpuSeconds":0.5,"windowSeconds":1}`)
	return &record.Run{Spec: plan.Spec{ID: id, Workload: "counter", Driver: "go", Mode: mode, Model: "open", Level: rate}, Result: s,
		Stats: stats, StatsBefore: stats}
}

// capFixture is a study of mutex and inputQ over three blocks: mutex's
// knee at 8,000/s in every block, inputQ's at 6,000, 6,500 and 6,000 (so
// −23% on average), noop above the ladder; then the overload phase.
func capFixture() (record.Meta, *record.Capacity, []*record.Run) {
	seed := 7
	meta := record.Meta{Command: "compare -study capacity", Workloads: []string{"counter"}, Modes: []string{"mutex", "inputQ", "noop"},
		Drivers: []string{"go"}, Model: "open", Duration: "1s", Warmup: "250ms", Reps: 3, Seed: &seed, Baseline: "mutex", MaxVUsOpen: 1000}
	c := &record.Capacity{SLO: plan.DefaultSLO, Steps: []float64{0.5, 1}, Refine: 1, ProbeCallers: 100, Overload: 1.5, Recover: 0.5,
		Policies: plan.PolicyNames(), Ceilings: []record.Ceiling{{Workload: "counter", Driver: "go", CallsPerS: 10000, RunID: "001-probe"}}}
	var runs []*record.Run
	caps := map[string][]int{"mutex": {8000, 8000, 8000}, "inputQ": {6000, 6500, 6000}, "noop": {20000, 20000, 20000}}
	for b := 1; b <= 3; b++ {
		for _, m := range meta.Modes {
			for _, rate := range []int{5000, 10000} {
				id := strings.Join([]string{"ladder", m, itoa(rate), "b" + itoa(b)}, "-")
				p99 := 0.4
				if rate > caps[m][b-1] {
					p99 = 7.5
				}
				runs = append(runs, capRun(id, m, rate, p99, nil))
				c.Points = append(c.Points, record.CapPoint{Workload: "counter", Driver: "go", Mode: m, Block: b, Phase: "ladder", Rate: rate, RunID: id,
					Pass: p99 < 1})
			}
			k := record.CapKnee{Workload: "counter", Driver: "go", Mode: m, Block: b, State: plan.KneeFound.String(), Found: true, Rate: caps[m][b-1], Fail: 10000}
			if m == "noop" {
				k = record.CapKnee{Workload: "counter", Driver: "go", Mode: m, Block: b, State: plan.KneeAbove.String(), Rate: 10000}
			}
			c.Knees = append(c.Knees, k)
		}
	}
	c.Points[len(c.Points)-1].Beyond = "go dropped 12 calls using 97% of its CPUs"
	for _, o := range []struct {
		mode, policy string
		goodput      int64
		rejected     int64
		okP99        float64
		gor          int64
		rss          uint64
		recovered    bool
	}{
		{"mutex", "none", 9000, 0, 850, 4100, 300 << 20, false},
		{"mutex", "max-inflight", 8000, 4000, 0.9, 60, 30 << 20, true},
		{"inputQ", "owner-queue", 6000, 6000, 0.8, 40, 25 << 20, true},
	} {
		id := "over-" + o.mode + "-" + o.policy
		runs = append(runs, capRun(id, o.mode, 12000, 900, func(s *summary.Summary) {
			s.OK, s.UnexpectedErrors = o.goodput*2, o.rejected*2
			s.DurationS, s.Calls = 2, s.OK+s.UnexpectedErrors
			s.ByCode = map[string]int64{"OK": s.OK}
			if o.rejected > 0 {
				s.ByCode["RESOURCE_EXHAUSTED"] = o.rejected * 2
			}
			s.LatencyOKMs = &summary.LatencyMs{P99: o.okP99}
		}))
		c.Overruns = append(c.Overruns, record.OverloadRun{Workload: "counter", Driver: "go", Mode: o.mode, Policy: o.policy, Bound: 8, Capacity: 8000,
			Rate: 12000, RecoverRate: 4000, RunID: id, RecoverID: "rec-" + id, BaseRSS: 20 << 20, PeakRSS: o.rss, PeakGoroutines: o.gor,
			Recovered: o.recovered, RecoveryS: 0.3})
	}
	c.Overruns[0].Bound = 0
	c.Overruns = append(c.Overruns, record.OverloadRun{Workload: "counter", Driver: "go", Mode: "mutex", Policy: "owner-queue", Bound: 8, Capacity: 8000,
		Rate: 12000, RecoverRate: 4000, NA: "mutex has no owner queue"})
	return meta, c, runs
}

func TestCapacityHeadlineAndTables(t *testing.T) {
	meta, c, runs := capFixture()
	rep, err := NewCapacity(meta, c, runs)
	require.NoError(t, err)
	md := rep.Markdown()
	assert.Contains(t, md, "counter · go: capacity at p99 ≤ 1 ms: mutex 8,000/s (8,000–8,000), inputQ 6,000/s (6,000–6,500) (−23% [", "the headline")
	assert.Contains(t, md, "noop ≥ 10,000/s (above the ladder)", "noop's knee lay above the ladder")
	assert.Contains(t, md, "block 1: above the highest rate tried (≥ 10,000/s)")
	assert.Contains(t, md, "too few repetitions for a test (n=3 blocks)", "three blocks cannot reach p ≤ 0.05")
	assert.Contains(t, md, "| counter | mutex | none | — | 12,000 → 4,000 | 9,000 | 850.00ms | none | 4100 | 300.0 MiB (15.00×) | not within the phase |")
	assert.Contains(t, md, "| counter | mutex | max-inflight | 8 | 12,000 → 4,000 | 8,000 | 900.0µs | RESOURCE_EXHAUSTED 8,000 | 60 | 30.0 MiB (1.50×) | 0.3 s |")
	assert.Contains(t, md, "n/a: mutex has no owner queue")
	assert.Contains(t, md, "could not offer these rates on its CPUs", "a point beyond the driver is said, not plotted")
	page, err := rep.HTML()
	require.NoError(t, err)
	assert.Contains(t, page, "p99 latency against offered load")
}

// TestCapacityGolden compares the capacity report of the fixture with
// testdata/capacity.md.golden; -update rewrites it. The control: a changed
// figure changes the report.
func TestCapacityGolden(t *testing.T) {
	meta, c, runs := capFixture()
	rep, err := NewCapacity(meta, c, runs)
	require.NoError(t, err)
	got := rep.Markdown()
	path := filepath.Join("testdata", "capacity.md.golden")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -run Golden -update once to create it")
	assert.Equal(t, string(want), got, "capacity.md.golden differs: if the change is meant, go test ./internal/lab/report -run Golden -update")

	c.Knees[0].Rate = 7000
	rep, err = NewCapacity(meta, c, runs)
	require.NoError(t, err)
	assert.NotEqual(t, string(want), rep.Markdown(), "the control: another capacity, another report")
}

func TestCapacityRerender(t *testing.T) {
	meta, c, runs := capFixture()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "runs"), 0o755))
	require.NoError(t, record.WriteJSON(filepath.Join(dir, "meta.json"), meta))
	require.NoError(t, record.WriteJSON(filepath.Join(dir, record.CapacityFile), c))
	for _, r := range runs {
		require.NoError(t, record.WriteJSON(filepath.Join(dir, "runs", r.ID+".json"), r))
	}
	var out strings.Builder
	require.NoError(t, Rerender(dir, &out))
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(md), "# locklab capacity study"), "a capacity directory rerenders as a capacity report")
}
