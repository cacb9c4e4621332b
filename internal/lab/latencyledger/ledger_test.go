package latencyledger

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/locklab/locklab/internal/lab/ledger"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

// ledgerStates are each mode's median call and tail, µs by state, in block
// 0: the inputQ's median call waits 20 µs on its owner's channel that the
// mutex's does not, and its tail waits for a CPU; the mutex's tail waits
// on its lock. Block b scales every figure by 1 + b/100.
var ledgerStates = map[string]struct{ median, tail map[string]float64 }{
	"mutex":  {map[string]float64{ledger.Running: 20, ledger.Syscall: 5}, map[string]float64{ledger.Running: 30, ledger.Sync: 200}},
	"inputQ": {map[string]float64{ledger.Running: 15, ledger.Syscall: 5, ledger.Chan: 20}, map[string]float64{ledger.Running: 20, ledger.Chan: 100, ledger.Runnable: 300}},
	"noop":   {map[string]float64{ledger.Running: 10, ledger.Syscall: 5}, map[string]float64{ledger.Running: 15, ledger.Runnable: 20}},
}

// ledgerClocks are the store-backed modes' clocks in block 0, µs (block b
// scales the waits by 1 + b/100): the inputQ's commands wait 20 µs longer
// at the median for their owner than the mutex's for their lock, and its
// owner takes 2.5 commands per run; a lock has no batch.
var ledgerClocks = map[string]struct {
	p50, p99, mean float64
	batches        uint64
	batch          float64
}{
	"mutex":  {p50: 5, p99: 50, mean: 9},
	"inputQ": {p50: 25, p99: 300, mean: 60, batches: 1000, batch: 2.5},
}

// ledgerRun is a counter run at 100 callers of 1 s; traced, its ledger is
// ledgerStates', and it served 5% fewer calls (what tracing cost it).
func ledgerRun(t *testing.T, idx int, mode, tr string, rep int) *record.Run {
	t.Helper()
	scale := 1 + float64(rep)/100
	calls := 50_000.0
	if tr == "on" {
		calls *= 0.95
	}
	st := &locklabv1.GetStatsResponse{Mode: mode, StoreBacked: mode != "noop", WindowSeconds: 1, Requests: uint64(calls),
		CpuSeconds: 0.9, RssBytes: 20 << 20}
	if c, ok := ledgerClocks[mode]; ok {
		st.Serial = []*locklabv1.SerialDemand{{Workload: "counter", Resources: 1, BusySeconds: 0.3, MaxBusySeconds: 0.3, SampleEvery: 16,
			Waits: uint64(calls / 16), WaitP50Ns: c.p50 * scale * 1e3, WaitP99Ns: c.p99 * scale * 1e3, WaitMeanNs: c.mean * scale * 1e3,
			Batches: c.batches, BatchCommands: uint64(float64(c.batches) * c.batch)}}
	}
	raw, err := protojson.Marshal(st)
	require.NoError(t, err)
	pt := plan.DefaultPoint().With(plan.Ledger, tr)
	r := &record.Run{
		Spec: plan.Spec{Index: idx, ID: fmt.Sprintf("%03d-counter-go-%s-vus100%s-rep%d", idx, mode, pt.IDSuffix(), rep),
			Workload: "counter", Driver: "go", Factors: pt, Mode: mode, Model: "closed", Level: 100, Rep: rep},
		Result: &summary.Summary{Schema: summary.Schema, Driver: "go", Workload: "counter", Model: "closed", Callers: 100, DurationS: 1,
			Calls: int64(calls), CallsPerS: calls, OK: int64(calls), LatencyMs: summary.LatencyMs{P50: 1, P99: 2, P999: 3, Max: 4}},
		ServerProc: record.ProcUsage{CPUs: []int{0}, CPUSeconds: 0.95, WallSeconds: 1},
		DriverProc: record.ProcUsage{CPUs: []int{1}, CPUSeconds: 0.5, WallSeconds: 1},
		Stats:      raw, StatsBefore: raw,
	}
	if tr == "on" {
		s := &ledger.Summary{Calls: int(calls), Accounted: 0.99, StateP50Us: map[string]float64{}, StateP99Us: map[string]float64{},
			AtP50Us: map[string]float64{}, AtP99Us: map[string]float64{}, TailUs: map[string]float64{}}
		for _, c := range ledger.Names() {
			s.AtP50Us[c] = ledgerStates[mode].median[c] * scale
			s.StateP50Us[c] = s.AtP50Us[c]
			s.AtP99Us[c] = ledgerStates[mode].tail[c] * scale * 0.8
			s.StateP99Us[c] = s.AtP99Us[c]
			s.TailUs[c] = ledgerStates[mode].tail[c] * scale
		}
		r.Ledger = s
	}
	r.Derived = mustDerive(t, r)
	return r
}

func ledgerReport(t *testing.T) *report.Report { return ledgerReportOf(t, nil) }

// ledgerReportOf is ledgerReport with every run's record changed by edit
// first (nil: none).
func ledgerReportOf(t *testing.T, edit func(r *record.Run)) *report.Report {
	t.Helper()
	var runs []*record.Run
	idx := 0
	for rep := 1; rep <= 4; rep++ {
		for _, tr := range []string{"off", "on"} {
			for _, mode := range []string{"mutex", "inputQ", "noop"} {
				idx++
				r := ledgerRun(t, idx, mode, tr, rep)
				if edit != nil {
					edit(r)
				}
				runs = append(runs, r)
			}
		}
	}
	sp, err := plan.ParseSpace(map[string]string{plan.Ledger: "off,on"})
	require.NoError(t, err)
	meta := record.Meta{Command: "compare -ledger off,on", Model: "closed", Workloads: []string{"counter"},
		Modes: []string{"mutex", "inputQ", "noop"}, Drivers: []string{"go"}, Levels: []int{100}, Duration: "1s", Warmup: "1s", Reps: 4, CPUs: 2,
		Factors: sp}
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

// -update rewrites the golden files from what the code renders now; read
// the diff before committing it.
var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// ledgerSectionOf is the ledger's section of a report's Markdown.
func ledgerSectionOf(t *testing.T, md string) string {
	t.Helper()
	start := strings.Index(md, "## Where the time went")
	require.GreaterOrEqual(t, start, 0, "the report has the ledger's section")
	end := strings.Index(md[start:], "## Every run")
	require.Positive(t, end)
	return md[start : start+end]
}

// TestLedgerWorkedExample puts known ledgers through the report: the
// sentences name the state that differs most (the inputQ's channel at the
// median, 20 µs scaled by 1.01 to 1.04, 20.5 µs on average; its runnable
// in the tail, 300 µs so scaled), only
// traced cells have the section, every state is a row, and tracing's cost
// is the 5% fewer calls.
func TestLedgerWorkedExample(t *testing.T) {
	rep := ledgerReport(t)
	md := rep.Markdown()
	sec := ledgerSectionOf(t, md)
	assert.Contains(t, sec, "### Where the time went · counter · go · ledger on · 100 callers")
	assert.NotContains(t, sec, "ledger off", "only where the ledger ran (and in the cost's table)")
	assert.Contains(t, sec, "In a median call (ranked 45th to 55th percentile), inputQ spends 20.5µs more than mutex in chan, "+
		"the state whose time differs most (95% interval +20.1µs to +20.9µs, 4 blocks).")
	assert.Contains(t, sec, "In the tail (every call slower than the p99), inputQ spends 307.5µs more than mutex in runnable")
	for _, c := range ledger.Categories {
		assert.Contains(t, sec, "| "+c.Name+" | "+c.Help+" |", "the states' table is the ledger's")
	}
	assert.Contains(t, sec, "| state | mutex p50 | mutex p99 | inputQ p50 | inputQ p99 | noop p50 | noop p99 |", "each state's own quantiles")
	assert.Contains(t, md, "### What tracing costs")
	assert.Contains(t, md, "−5.0%", "tracing's cost, the 5% fewer calls")

	page, err := rep.HTML()
	require.NoError(t, err)
	assert.Contains(t, page, "a call&#39;s time by state at the median and the p99 (µs, medians over runs)</figcaption>",
		"the page stacks every design's states at p50 and p99")
}

// TestLedgerGolden: the section as rendered, against
// testdata/ledger.md.golden (-update rewrites it); a report without traced
// runs has no such section, the control that the golden text is the
// ledger's doing.
func TestLedgerGolden(t *testing.T) {
	got := ledgerSectionOf(t, ledgerReport(t).Markdown())
	path := filepath.Join("testdata", "ledger.md.golden")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -run LedgerGolden -update once to create it")
	assert.Equal(t, string(want), got, "if the change is meant, go test ./internal/lab/latencyledger -run LedgerGolden -update")

	untraced := ledgerReportOf(t, func(r *record.Run) { r.Ledger = nil }).Markdown()
	assert.NotContains(t, untraced, "## Where the time went", "no traced run, no section")
}

// TestLedgerClocks: the store's own clocks beside the ledger — each
// design's wait at the median and the p99 and its mean batch, the paired
// difference of the inputQ's mailbox age against the mutex's lock wait
// (20 µs scaled by 1.01 to 1.04: 20.5 µs), the inputQ's 2.5 commands per
// run and no batch for the lock; records from a server without the clocks
// (the control) render the section without them.
func TestLedgerClocks(t *testing.T) {
	sec := ledgerSectionOf(t, ledgerReport(t).Markdown())
	assert.Contains(t, sec, clocksHowToRead)
	assert.Contains(t, sec, "| clock | mutex | inputQ | inputQ − mutex |", "noop has no store, no clocks")
	assert.Contains(t, sec, "| wait p50 (lock wait, mailbox age) |")
	assert.Contains(t, sec, "+20.5µs [+20.1µs, +20.9µs]", "the mailbox age against the lock wait, paired by block")
	assert.Contains(t, sec, "| mean batch (commands) | — | 2.5 (2.5–2.5) | — |", "a lock has no batch")

	old := ledgerSectionOf(t, ledgerReportOf(t, func(r *record.Run) {
		if s := r.Derived.Serial; s != nil {
			s.Waits, s.WaitP50Us, s.WaitP99Us, s.WaitMeanUs, s.Batches, s.BatchCommands = 0, 0, 0, 0, 0, 0
		}
	}).Markdown())
	assert.NotContains(t, old, "The store's own clocks")
	assert.NotContains(t, old, "| clock |")
	assert.Contains(t, old, "Each state's own median and p99", "the rest of the section stays")
}
