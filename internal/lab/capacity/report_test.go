package capacity

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
	"github.com/locklab/locklab/summary"
)

// -update rewrites the golden files from what the code renders now; read
// the diff before committing it.
var update = flag.Bool("update", false, "rewrite testdata/*.golden")

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

// capFixture is a study of mutex and inputQ over five blocks: mutex's knee
// in [8,000, 8,500] in every block, inputQ's in [6,000, 6,500] or [6,500,
// 7,000], noop above the ladder; at 5,000/s inputQ's p99 half again
// mutex's in every block; then the overload phase in every block, one of
// its attempts spoiled by the gate and run again.
func capFixture() (record.Meta, *Capacity, []*record.Run) {
	seed := 7
	meta := record.Meta{Command: "compare -study capacity", Workloads: []string{"counter"}, Modes: []string{"mutex", "inputQ", "noop"},
		Drivers: []string{"go"}, Model: "open", Duration: "1s", Warmup: "250ms", Reps: 5, Seed: &seed, Baseline: "mutex", MaxVUsOpen: 1000,
		Gate: &record.Gate{MaxForeign: 0.1, Reruns: 2, Margin: 0.03}}
	c := &Capacity{SLO: "p99<=1ms,achieved>=0.99,errors=0", Steps: []float64{0.5, 1}, Refine: 1, ProbeCallers: 100, Overload: 1.5, Recover: 0.5,
		Policies: PolicyNames(), Ceilings: []Ceiling{{Workload: "counter", Driver: "go", CallsPerS: 10000, RunID: "001-probe"}},
		FloorMultiple: 3, Floors: []Floor{{Workload: "counter", Driver: "go", Rate: 5000, P99Ms: 0.3, RunID: "002-floor"}},
		Gate: CapGate{Cells: 40, Rerun: 1, SpoiledRuns: 1}}
	var runs []*record.Run
	caps := map[string][]int{"mutex": {8000, 8000, 8000, 8000, 8000}, "inputQ": {6000, 6500, 6000, 6000, 6500}}
	slow := map[string]float64{"mutex": 0.4, "inputQ": 0.6, "noop": 0.3}
	for b := 1; b <= 5; b++ {
		for _, m := range meta.Modes {
			for _, rate := range []int{5000, 10000} {
				id := strings.Join([]string{"ladder", m, itoa(rate), "b" + itoa(b)}, "-")
				p99 := slow[m] * (1 + 0.01*float64(b))
				if m != "noop" && rate > caps[m][b-1] {
					p99 = 7.5 * slow[m] / 0.4 * (1 + 0.01*float64(b))
				}
				runs = append(runs, capRun(id, m, rate, p99, nil))
				c.Points = append(c.Points, CapPoint{Workload: "counter", Driver: "go", Mode: m, Block: b, Phase: "ladder", Rate: rate, RunID: id,
					Pass: p99 < 1})
			}
			k := CapKnee{Workload: "counter", Driver: "go", Mode: m, Block: b, State: KneeAbove.String(), Rate: 10000}
			if m != "noop" {
				k = CapKnee{Workload: "counter", Driver: "go", Mode: m, Block: b, State: KneeFound.String(), Found: true, Rate: caps[m][b-1], Fail: caps[m][b-1] + 500}
			}
			c.Knees = append(c.Knees, k)
		}
	}
	c.Points[len(c.Points)-1].Beyond = "go dropped 12 calls using 97% of its CPUs"
	for b := 1; b <= 5; b++ {
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
			{"mutex", "max-calls", 7900, 4100, 0.8, 50, 24 << 20, true},
			{"inputQ", "owner-queue", 6000, 6000, 0.8, 40, 25 << 20, true},
		} {
			id := fmt.Sprintf("over-%s-%s-b%d", o.mode, o.policy, b)
			spread := int64(100 * (b - 3)) // the blocks differ a little
			runs = append(runs, capRun(id, o.mode, 12000, 900, func(s *summary.Summary) {
				s.OK, s.UnexpectedErrors = (o.goodput+spread)*2, o.rejected*2
				s.DurationS, s.Calls = 2, s.OK+s.UnexpectedErrors
				s.ByCode = map[string]int64{"OK": s.OK}
				if o.rejected > 0 {
					s.ByCode["RESOURCE_EXHAUSTED"] = o.rejected * 2
				}
				s.LatencyOKMs = &summary.LatencyMs{P99: o.okP99 * (1 + 0.01*float64(b))}
			}))
			or := OverloadRun{Workload: "counter", Driver: "go", Mode: o.mode, Policy: o.policy, Block: b, Attempt: 1, Bound: 8, Capacity: 8000,
				Rate: 12000, RecoverRate: 4000, RunID: id, RecoverID: "rec-" + id, BaseRSS: 20 << 20, PeakRSS: o.rss, PeakGoroutines: o.gor,
				Recovered: o.recovered, RecoveryS: 0.3}
			if o.policy == "none" {
				or.Bound = 0
			}
			runs = append(runs, capRun(or.RecoverID, o.mode, 4000, 0.5, nil)) // 1 s
			if b == 3 && o.policy == "max-calls" {
				// The first attempt ran beside something else: spoiled,
				// with a goodput that would show if it were counted.
				spoiled := or
				spoiled.RunID, spoiled.Spoiled = id+"-spoiled", "foreign CPU 40%"
				runs = append(runs, capRun(spoiled.RunID, o.mode, 12000, 900, func(s *summary.Summary) { s.OK, s.DurationS = 2, 2 }))
				c.Overruns = append(c.Overruns, spoiled)
				or.Attempt = 2
			}
			c.Overruns = append(c.Overruns, or)
		}
	}
	c.Overruns = append(c.Overruns, OverloadRun{Workload: "counter", Driver: "go", Mode: "mutex", Policy: "owner-queue", Block: 1, Bound: 8, Capacity: 8000,
		Rate: 12000, RecoverRate: 4000, NA: "mutex has no owner queue"})
	return meta, c, runs
}

func TestCapacityHeadlineAndTables(t *testing.T) {
	meta, c, runs := capFixture()
	rep, err := NewCapacity(meta, c, runs)
	require.NoError(t, err)
	md := rep.Markdown()
	assert.Contains(t, md, "counter · go: capacity at p99 ≤ 1 ms, between the last passing and the first failing rate (medians over the blocks): "+
		"mutex [8,000, 8,500] calls/s, inputQ [6,000, 6,500] calls/s, noop ≥ 10,000/s (above the ladder)", "the headline: brackets")
	assert.Contains(t, md, "| inputQ | [6,000, 6,500] calls/s | 1: [6,000, 6,500]; 2: [6,500, 7,000]; 3: [6,000, 6,500]; 4: [6,000, 6,500]; 5: [6,500, 7,000] | 5 of 5 | — |", "every block's bracket")
	assert.Contains(t, md, "block 1: above the highest rate tried (≥ 10,000/s)")
	assert.NotContains(t, md, "0% [0%, 0%]", "no interval on knees that lie on a grid")
	assert.Regexp(t, `\| 5,000 \| inputQ \| 618\.0µs \| 412\.0µs \| \+50% \[\+50%, \+50%\] p_adj=\S+ \(5\) \|`, md, "the latency at a fixed rate, paired per block")
	assert.Contains(t, md, "The objective's bound comes from the harness's floor", "the floor that set the objective")
	assert.Contains(t, md, "0.3 ms on counter · go at 5,000 calls/s (run 002-floor)")
	assert.Contains(t, md, "of 40 cells (a ladder rate with every design, a refinement run, a design under a policy, each in a block), 1 were rerun and 0 dropped")
	assert.Contains(t, md, "| counter | mutex | max-calls | 8 | 12,000 → 4,000 | 5 of 5 | 7,900 [7,704, 8,096] | 99% [96%, 101%] |",
		"the overload phase over the blocks, the spoiled attempt left out")
	assert.Contains(t, md, "| counter | mutex | none | — | 12,000 → 4,000 | 5 of 5 | 9,000 [8,804, 9,196] |")
	assert.Contains(t, md, "(recovered in 0 of 5)", "none never recovered within the phase")
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
	assert.Equal(t, string(want), got, "capacity.md.golden differs: if the change is meant, go test ./internal/lab/capacity -run Golden -update")

	c.Knees[0].Rate = 7000
	rep, err = NewCapacity(meta, c, runs)
	require.NoError(t, err)
	assert.NotEqual(t, string(want), rep.Markdown(), "the control: another capacity, another report")
}

// TestCapacityRerender: a folder with a capacity.json rerenders as a
// capacity report through an assembly that lists Kind; the control, the
// zero assembly, reads the same folder as a comparison.
func TestCapacityRerender(t *testing.T) {
	meta, c, runs := capFixture()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "runs"), 0o755))
	require.NoError(t, record.WriteJSON(filepath.Join(dir, "meta.json"), meta))
	require.NoError(t, record.WriteJSON(filepath.Join(dir, CapacityFile), c))
	for _, r := range runs {
		require.NoError(t, record.WriteJSON(filepath.Join(dir, "runs", r.ID+".json"), r))
	}
	var out strings.Builder
	require.NoError(t, report.Assembly{Kinds: []report.Kind{Kind{}}}.Rerender(dir, &out))
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(md), "# locklab capacity study"), "a capacity directory rerenders as a capacity report")
	assert.FileExists(t, filepath.Join(dir, report.ForestFile), "with the plot its report links")

	folder, err := record.Open(dir)
	require.NoError(t, err)
	_, err = report.Assembly{}.Render(folder)
	assert.ErrorContains(t, err, "a block holds one run of each mode", "the control: without Kind, the folder is read as a comparison's, which its runs are not")
}

// TestCapacityForest: a capacity study's plot has a row per fixed-rate
// comparison, with the margin.
func TestCapacityForest(t *testing.T) {
	meta, c, runs := capFixture()
	rep, err := NewCapacity(meta, c, runs)
	require.NoError(t, err)
	svg, err := rep.Forest()
	require.NoError(t, err)
	texts := svgTexts(t, svg)
	fo := rep.forest()
	require.Len(t, fo.Rows, len(rep.latency))
	assert.Contains(t, texts, fo.Title)
	assert.Contains(t, fo.Title, "±"+paired.PctAbs(rep.margin()))
	for _, r := range fo.Rows {
		assert.Contains(t, texts, r.Label)
		assert.True(t, r.Drawn, r.Label)
	}
	assert.Contains(t, rep.Markdown(), "]("+report.ForestFile+")")
}

// svgTexts are the text elements of an SVG image, in order.
func svgTexts(t *testing.T, svg []byte) []string {
	t.Helper()
	var out []string
	d := xml.NewDecoder(bytes.NewReader(svg))
	inText := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err, "the plot is well-formed XML")
		switch x := tok.(type) {
		case xml.StartElement:
			inText = x.Name.Local == "text"
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				out = append(out, string(x))
			}
		}
	}
}

const dirtyLine = "> **Warning:** made from a working tree with uncommitted changes: locklab commit "

// A capacity report made from a dirty tree says so in its first line, in
// both renderings; a clean one opens with its title and names its commit.
func TestCapacityDirtyTreeWarning(t *testing.T) {
	for _, dirty := range []bool{true, false} {
		meta, c, runs := capFixture()
		meta.GitCommit, meta.GitDirty = "a29ec72", dirty
		rep, err := NewCapacity(meta, c, runs)
		require.NoError(t, err)
		page, err := rep.HTML()
		require.NoError(t, err)
		md := rep.Markdown()
		first, _, _ := strings.Cut(md, "\n")
		if dirty {
			assert.True(t, strings.HasPrefix(md, dirtyLine+"a29ec72"), first)
			body := page[strings.Index(page, "<body>"):]
			assert.True(t, strings.HasPrefix(body, "<body>\n<p role=\"alert\" style=\"border:3px solid #222;padding:0.5rem 0.8rem;font-weight:bold\">Warning: made from a working tree with uncommitted changes"), body[:200])
			continue
		}
		assert.True(t, strings.HasPrefix(md, "# locklab capacity study\n"), first)
		assert.Contains(t, md, "from locklab commit a29ec72.", "the capacity report names its commit")
		for _, p := range []string{md, page} {
			assert.NotContains(t, p, "Warning")
			assert.NotContains(t, p, "uncommitted")
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestCapacityGateSaysHowBusy: the gate's paragraph gives the median and
// the most foreign CPU of a run where the CPU sets were read; the control,
// runs without them, says nothing of it.
func TestCapacityGateSaysHowBusy(t *testing.T) {
	meta, c, runs := capFixture()
	rep, err := NewCapacity(meta, c, runs)
	require.NoError(t, err)
	assert.NotContains(t, rep.Markdown(), "During the runs", "no CPU set read")

	for _, r := range runs {
		r.ServerSet = record.SetUsage{CPUs: []int{0}, User: 0.6, Idle: 0.4}
		r.Derived, err = record.Derive(r)
		require.NoError(t, err)
	}
	rep, err = NewCapacity(meta, c, runs)
	require.NoError(t, err)
	assert.Regexp(t, `During the runs something else took a median \S+ of a run's CPUs \(at most \S+\)\.`, rep.Markdown())
}
