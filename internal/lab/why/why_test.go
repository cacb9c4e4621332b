package why

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/locklab/locklab/internal/lab/attrib"
	"github.com/locklab/locklab/internal/lab/instrumented"
	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

// whyCPU is each mode's CPU per call by category, in µs, in block 0: the
// mutex 20 µs, the inputQ 3 µs more (scheduler +3, channels +2, locks −2),
// noop 15. Block b scales every figure by 1 + b/100, so the differences
// vary between blocks and have intervals.
var whyCPU = map[string]map[string]float64{
	"mutex":  {"grpc": 10, "syscalls": 6, "store": 2, "locks": 2},
	"inputQ": {"grpc": 10, "syscalls": 6, "store": 2, "scheduler": 3, "channels": 2},
	"noop":   {"grpc": 9, "syscalls": 6},
	// combining: 1 µs more than the mutex, all of it locks.
	"combining": {"grpc": 10, "syscalls": 6, "store": 2, "locks": 3},
}

// whyWrites are the write system calls per call.
var whyWrites = map[string]float64{"mutex": 1, "inputQ": 0.5, "noop": 1, "combining": 1}

const whyCalls = 50_000

// whyRun is a counter run at 100 callers of 1 s: with attribution on, its
// profile folded into whyCPU's shares; off, none, and 5% more calls/s
// (what attribution cost it).
func whyRun(t *testing.T, idx int, mode, attr string, rep int) *record.Run {
	t.Helper()
	scale := 1 + float64(rep)/100
	var total float64
	for _, us := range whyCPU[mode] {
		total += us * scale
	}
	calls := float64(whyCalls)
	if attr == "off" {
		calls *= 1 / 0.95
	}
	st := &locklabv1.GetStatsResponse{Mode: mode, StoreBacked: mode != "noop", WindowSeconds: 1, Requests: whyCalls,
		CpuSeconds: total * whyCalls / 1e6, RssBytes: 20 << 20}
	raw, err := protojson.Marshal(st)
	require.NoError(t, err)
	pt := plan.DefaultPoint().With(plan.Attribute, attr)
	r := &record.Run{
		Spec: plan.Spec{Index: idx, ID: fmt.Sprintf("%03d-counter-go-%s-vus100%s-rep%d", idx, mode, pt.IDSuffix(), rep),
			Workload: "counter", Driver: "go", Factors: pt, Mode: mode, Model: "closed", Level: 100, Rep: rep},
		Result: &summary.Summary{Schema: summary.Schema, Driver: "go", Workload: "counter", Model: "closed", Callers: 100, DurationS: 1,
			Calls: int64(calls), CallsPerS: calls, OK: int64(calls), LatencyMs: summary.LatencyMs{P50: 1, P99: 2, P999: 3, Max: 4}},
		ServerProc: record.ProcUsage{CPUs: []int{0}, CPUSeconds: 0.95, WallSeconds: 1},
		DriverProc: record.ProcUsage{CPUs: []int{1}, CPUSeconds: 0.5, WallSeconds: 1},
		Stats:      raw, StatsBefore: raw,
	}
	if attr == "on" {
		a := &record.Attribution{Profile: r.ID + ".cpu.pprof", ProfileSeconds: 2, Samples: 95, CPUSeconds: map[string]float64{},
			Calls: whyCalls, ReadSyscalls: whyCalls, WriteSyscalls: int64(whyWrites[mode] * whyCalls)}
		for _, c := range attrib.CategoryNames() {
			a.CPUSeconds[c] = whyCPU[mode][c] * scale / 100 // shares are what count
		}
		r.Attribution = a
	}
	r.Derived = mustDerive(t, r)
	return r
}

func whyReport(t *testing.T) *report.Report {
	t.Helper()
	var runs []*record.Run
	idx := 0
	for rep := 1; rep <= 4; rep++ {
		for _, attr := range []string{"off", "on"} {
			for _, mode := range []string{"mutex", "inputQ", "noop"} {
				idx++
				runs = append(runs, whyRun(t, idx, mode, attr, rep))
			}
		}
	}
	sp, err := plan.ParseSpace(map[string]string{plan.Attribute: "off,on"})
	require.NoError(t, err)
	meta := record.Meta{Command: "compare -attribute off,on", Model: "closed", Workloads: []string{"counter"},
		Modes: []string{"mutex", "inputQ", "noop"}, Drivers: []string{"go"}, Levels: []int{100}, Duration: "1s", Warmup: "1s", Reps: 4, CPUs: 2,
		Factors: sp}
	return mustNew(t, meta, runs)
}

// mustNew builds a report with this section.
func mustNew(t *testing.T, meta record.Meta, runs []*record.Run) *report.Report {
	t.Helper()
	rep, err := report.New(meta, runs, Part{})
	require.NoError(t, err)
	return rep
}

func mustDerive(t *testing.T, r *record.Run) record.Derived {
	t.Helper()
	d, err := record.Derive(r)
	require.NoError(t, err)
	return d
}

// groupOf is the report's group of a section, level and mode.
func groupOf(t *testing.T, rep *report.Report, sec report.Section, level int, mode string) *report.Group {
	t.Helper()
	for _, g := range rep.Groups {
		if g.Section.String() == sec.String() && g.Level == level && g.Mode == mode {
			return g
		}
	}
	t.Fatalf("no group %s at %d of %s", sec, level, mode)
	return nil
}

// metricByKey is the catalogue's row of a key.
func metricByKey(t *testing.T, key string) *report.Metric {
	t.Helper()
	for _, m := range report.Catalogue {
		if m.Key == key {
			return m
		}
	}
	t.Fatalf("no metric %s in the catalogue", key)
	return nil
}

// TestWhyWorkedExample puts known categories through the report: the
// inputQ's 3 µs more than the mutex (3.075 µs over blocks scaled by 1.01 to
// 1.04) are the scheduler's (+3, 100%) and the channels' (+2, 67%) less the
// locks' (−2), and it writes half as often per call.
func TestWhyWorkedExample(t *testing.T) {
	rep := whyReport(t)
	md := rep.Markdown()
	assert.Contains(t, md, "## Why: where the server's CPU went")
	assert.Contains(t, md, "### Why · counter · go · attribution on · 100 callers")
	assert.NotContains(t, md, "### Why · counter · go · attribution off", "only where attribution ran")
	assert.Contains(t, md, "inputQ costs 3.1µs more per call than mutex (95% interval +3.0µs to +3.1µs, 4 blocks); "+
		"scheduler (100%) and channels (67%) explain most of it.")
	for _, c := range attrib.Categories() {
		assert.Contains(t, md, "| "+c.Name+" | "+c.Holds+" |", "the categories' table is attrib's")
	}

	section := md[strings.Index(md, "### Why · counter · go · attribution on"):]
	tb := tableAfter(t, section)
	assert.Equal(t, []string{"per call", "mutex (4 runs)", "inputQ (4 runs)", "noop (4 runs)", "inputQ − mutex", "mutex − noop", "inputQ − noop"}, tb[0])
	rows := map[string][]string{}
	for _, r := range tb[1:] {
		rows[r[0]] = r
	}
	require.Len(t, rows, len(attrib.CategoryNames())+4, "every category, the total, two system calls, the samples")
	assert.True(t, strings.HasPrefix(rows["scheduler"][4], "+3.1µs ["), rows["scheduler"][4])
	assert.True(t, strings.HasPrefix(rows["locks"][4], "−2.0µs ["), rows["locks"][4])
	assert.True(t, strings.HasPrefix(rows["store"][5], "+2.0µs ["), "the mutex's store against noop's none: %s", rows["store"][5])
	assert.Equal(t, "0.0µs", rows["gc"][4], "no difference prints unsigned")
	assert.Contains(t, rows["write system calls per call"][1], "1.00")
	assert.Contains(t, rows["write system calls per call"][2], "0.50")
	assert.True(t, strings.HasPrefix(rows["write system calls per call"][4], "−0.50 ["))
	total := rows["total: "+report.ServerCPUPerCall.Label]
	require.NotNil(t, total)
	assert.True(t, strings.HasPrefix(total[4], "+3.1µs ["), total[4])

	// What attribution cost: 5% of the calls/s in every design.
	assert.Contains(t, md, "### What attribution costs")
	cost := tableAfter(t, md[strings.Index(md, "### What attribution costs"):])
	require.Len(t, cost, 4, "one row a design")
	assert.Equal(t, "counter · go · 100 callers", cost[1][0])
	assert.True(t, strings.HasPrefix(cost[1][2], "−5.0% [−5.0%, −5.0%]"), cost[1][2])

	// The figures: every category per call, where attribution ran.
	g := groupOf(t, rep, report.Section{Workload: "counter", Driver: "go", Factors: plan.DefaultPoint().With(plan.Attribute, "on")}, 100, "inputQ")
	require.NotNil(t, g)
	assert.InDelta(t, 3*1.025, g.Fig(metricByKey(t, "cpu_us_per_call.scheduler")).Median, 1e-9)
	off := groupOf(t, rep, report.Section{Workload: "counter", Driver: "go", Factors: plan.DefaultPoint().With(plan.Attribute, "off")}, 100, "inputQ")
	assert.Zero(t, off.Fig(metricByKey(t, "cpu_us_per_call.scheduler")).N, "none without attribution")

	page, err := rep.HTML()
	require.NoError(t, err)
	assert.Contains(t, page, "server CPU per call by category (µs, medians)</figcaption>")
}

// TestWhySentence: the two largest parts in the difference's direction,
// whichever way it goes; and the control, a sentence that says when its
// interval holds no difference.
func TestWhySentence(t *testing.T) {
	p := report.Pair{Design: "inputQ", Against: "mutex"}
	parts := []namedDiff{{"locks", -1}, {"scheduler", 2}, {"channels", 1}, {"grpc", 0}}
	e := paired.Difference{N: 8, Mean: 2, Lo: 1.5, Hi: 2.5}
	assert.Equal(t, "inputQ costs 2.0µs more per call than mutex (95% interval +1.5µs to +2.5µs, 8 blocks); "+
		"scheduler (100%) and channels (50%) explain most of it.", whySentence(p, e, parts))

	less := []namedDiff{{"locks", -1.5}, {"scheduler", 0.25}, {"store", -0.5}, {"grpc", -0.25}}
	e = paired.Difference{N: 8, Mean: -2, Lo: -2.5, Hi: -1.5}
	assert.Equal(t, "inputQ costs 2.0µs less per call than mutex (95% interval −2.5µs to −1.5µs, 8 blocks); "+
		"locks (75%) and store (25%) explain most of it.", whySentence(p, e, less))

	spread := []namedDiff{{"a", 0.25}, {"b", 0.2}, {"c", 0.2}, {"d", 0.2}, {"e", 0.15}}
	e = paired.Difference{N: 8, Mean: 1, Lo: -0.2, Hi: 2.2}
	assert.Equal(t, "inputQ costs 1.0µs more per call than mutex (95% interval −200ns to +2.2µs, 8 blocks); "+
		"its largest parts are a (25%) and b (20%), but the interval holds no difference at all.", whySentence(p, e, spread))

	e = paired.Difference{N: 1, Mean: 1, Lo: math.Inf(-1), Hi: math.Inf(1)}
	assert.Equal(t, "inputQ costs 1.0µs more per call than mutex (one block: no interval); a (100%) explains it.",
		whySentence(p, e, []namedDiff{{"a", 1}}))
}

// TestWhySentencesSkipUnpaired: a design with no block in common with the
// baseline gets no sentence, and the others still get theirs.
func TestWhySentencesSkipUnpaired(t *testing.T) {
	wc := instrumented.CellRuns{Modes: []string{"mutex", "inputQ", "combining"}, Runs: map[string][]*record.Run{
		"mutex":     {whyRun(t, 1, "mutex", "on", 1)},
		"inputQ":    {whyRun(t, 2, "inputQ", "on", 2)},
		"combining": {whyRun(t, 3, "combining", "on", 1)},
	}, Pairs: []report.Pair{{Design: "inputQ", Against: "mutex"}, {Design: "combining", Against: "mutex"}}}
	ss, err := whySentences(wc, "mutex")
	require.NoError(t, err)
	require.Len(t, ss, 1)
	assert.True(t, strings.HasPrefix(ss[0], "combining costs 1.0µs more per call than mutex (one block: no interval); locks (100%) explains it"), ss[0])
	tb, err := whyTable(wc)
	require.NoError(t, err)
	assert.Equal(t, "— (no block with both)", tb.Rows[0][4], "the table says why inputQ has none")
}

// TestWhyNeedsAttribution: a report with no profiled run has no Why
// section, and its level tables no rows of attribution.
func TestWhyNeedsAttribution(t *testing.T) {
	var runs []*record.Run
	for rep := 1; rep <= 3; rep++ {
		for i, mode := range []string{"mutex", "inputQ"} {
			runs = append(runs, whyRun(t, 2*(rep-1)+i+1, mode, "off", rep))
		}
	}
	meta := record.Meta{Command: "compare", Model: "closed", Workloads: []string{"counter"}, Modes: []string{"mutex", "inputQ"},
		Drivers: []string{"go"}, Levels: []int{100}, Duration: "1s", Warmup: "1s", Reps: 3, CPUs: 2}
	md := mustNew(t, meta, runs).Markdown()
	assert.NotContains(t, md, "## Why")
	assert.NotContains(t, md, report.WritesPerCall.Label)
	assert.Contains(t, whyReport(t).Markdown(), "| "+report.WritesPerCall.Label+" |", "the control: with attribution, the level table has it")
}

// TestWhyRefusesAnotherTable: a record folded with categories the table no
// longer has fails the report, naming what is missing, rather than reading
// as zero.
func TestWhyRefusesAnotherTable(t *testing.T) {
	r := whyRun(t, 1, "mutex", "on", 1)
	delete(r.Attribution.CPUSeconds, "scheduler")
	_, err := report.Aggregate([]*record.Run{r})
	assert.ErrorContains(t, err, `no category "scheduler"`)
}

// tableAfter is the first Markdown table in s, as cells.
func tableAfter(t *testing.T, s string) [][]string {
	t.Helper()
	var rows [][]string
	started := false
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "| ") {
			if started {
				break
			}
			continue
		}
		started = true
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if cells[0] == "---" {
			continue
		}
		rows = append(rows, cells)
	}
	require.NotEmpty(t, rows)
	return rows
}
