package report

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchmath"

	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
)

// workedOffsets are the log-ratio offsets of the worked example's 8 blocks
// around −0.1: their mean is 0 and their sum of squares 60e-4, so the log
// ratios have mean −0.1 and SD √(60e-4/7) = 0.0292770.
var workedOffsets = []float64{0.01, -0.01, 0.02, -0.02, 0.03, -0.03, 0.04, -0.04}

// workedRuns: mutex and inputQ at 10 callers, one run each per block, in a
// block order that alternates. The machine drifts from block to block (the
// baseline's calls/s climbs from 1,000 to 2,750), and inputQ serves
// e^(−0.1+offset) of mutex's calls in each block. With drift 0 every block
// is at 1,000 calls/s.
func workedRuns(t *testing.T, drift float64) []*record.Run {
	var runs []*record.Run
	for b, off := range workedOffsets {
		base := 1000 * (1 + drift*float64(b))
		modes := []string{"mutex", "inputQ"}
		if b%2 == 1 {
			modes = []string{"inputQ", "mutex"}
		}
		for _, mode := range modes {
			rps := base
			if mode == "inputQ" {
				rps = base * math.Exp(-0.1+off)
			}
			runs = append(runs, fakeRun(t, len(runs)+1, "counter", 10, mode, b+1, rps, 1))
		}
	}
	return runs
}

func workedMeta() record.Meta {
	m := fakeMeta()
	m.Modes, m.Levels, m.Reps = []string{"mutex", "inputQ"}, []int{10}, len(workedOffsets)
	return m
}

// TestPairedWorkedExample: records with known per-block ratios give the
// headline's numbers, computed by hand. Calls/s: geometric mean e^−0.1 =
// 0.90484 (−9.5%); the 95% interval is e^(−0.1 ± t·SD/√8) with t(0.975, 7)
// = 2.364624 from a printed t table: half-width 2.364624·0.0292770/2.828427
// = 0.024476, so [0.88296, 0.92726] (−12%, −7.3%). Every block's ratio is
// below 1, so the exact signed-rank p is 2/2^8 = 0.0078125. The fake server
// spends the same CPU whatever it serves, so CPU per call is the inverse:
// +11% [+7.8%, +13%], same p. p99 is the same for both: ratio 1 in every
// block, p = 1. Holm over the 3 tests: 3·0.0078125 = 0.0234375 for the
// smallest, the next max(that, 2·0.0078125), and 1.
func TestPairedWorkedExample(t *testing.T) {
	rep := mustNew(t, workedMeta(), workedRuns(t, 0.25))
	require.Len(t, rep.Findings, len(Compared()), "one pair, every compared metric")
	c := Cell{counterGo, 10}
	calls, ok := rep.finding(c, Pair{"inputQ", "mutex"}, mCallsPerSec)
	require.True(t, ok)
	assert.Equal(t, len(workedOffsets), calls.Effect.N)
	assert.InDelta(t, 0.904837, calls.Effect.GeoMean, 1e-5)
	assert.InDelta(t, 0.882959, calls.Effect.Lo, 1e-5)
	assert.InDelta(t, 0.927258, calls.Effect.Hi, 1e-5)
	assert.InDelta(t, 0.0078125, calls.P, 1e-12)
	assert.InDelta(t, 0.0234375, calls.AdjP, 1e-12)
	assert.Equal(t, paired.Detected, calls.State)
	cpu, ok := rep.finding(c, Pair{"inputQ", "mutex"}, mServerCPUPerCall)
	require.True(t, ok)
	assert.InDelta(t, 1/0.904837, cpu.Effect.GeoMean, 1e-4)
	assert.InDelta(t, 0.0234375, cpu.AdjP, 1e-12)
	p99, ok := rep.finding(c, Pair{"inputQ", "mutex"}, mP99)
	require.True(t, ok)
	assert.Equal(t, 1.0, p99.P)
	assert.Equal(t, paired.NoDifference, p99.State)

	md := rep.Markdown()
	assert.Contains(t, md, "| counter · go · 10 callers | inputQ | mutex | −9.5% [−12%, −7.3%] p=0.0078 p_adj=0.023 | "+
		"0% [0%, 0%] p=1 p_adj=1: no difference detected, within ±0.0% | +11% [+7.8%, +13%] p=0.0078 p_adj=0.023 |")
	assert.Less(t, strings.Index(md, "## Headline"), strings.Index(md, "### counter · go · 10 callers"), "the headline is on top")
	assert.NotContains(t, md, "Too few repetitions", "8 blocks are enough for 3 tests")
	page, err := rep.HTML()
	require.NoError(t, err)
	assert.Contains(t, page, `alt="effects on calls/s (%, 95% interval)"`)
}

// TestPairingSeesThroughDrift is the control for pairing: on the same runs,
// an unpaired test of the two designs' calls/s (Mann-Whitney, as benchmath
// does it) sees the machine's drift between blocks and finds nothing, while
// the paired verdict is unchanged by it. Without the drift the unpaired test
// does find the difference: it is not blind, the drift hid it.
func TestPairingSeesThroughDrift(t *testing.T) {
	unpaired := func(rep *Report) float64 {
		mutex, inputQ := rep.group(counterGo, 10, "mutex"), rep.group(counterGo, 10, "inputQ")
		return benchmath.AssumeNothing.Compare(
			benchmath.NewSample(mutex.fig(mCallsPerSec).Values, &benchmath.DefaultThresholds),
			benchmath.NewSample(inputQ.fig(mCallsPerSec).Values, &benchmath.DefaultThresholds)).P
	}
	drifting := mustNew(t, workedMeta(), workedRuns(t, 0.25))
	steady := mustNew(t, workedMeta(), workedRuns(t, 0))
	c := Cell{counterGo, 10}
	for _, rep := range []*Report{drifting, steady} {
		f, ok := rep.finding(c, Pair{"inputQ", "mutex"}, mCallsPerSec)
		require.True(t, ok)
		assert.Equal(t, paired.Detected, f.State)
		assert.InDelta(t, 0.904837, f.Effect.GeoMean, 1e-5, "the drift cancels out of every block's ratio")
	}
	assert.Greater(t, unpaired(drifting), 0.05, "unpaired, the drift hides a 10% effect")
	assert.Less(t, unpaired(steady), 0.05, "unpaired, without drift, the effect is found")
}

// TestTooFewRepetitions: the ladder's two blocks cannot reach the level
// after Holm, whatever the data; the report says so instead of "no
// difference", and says how many blocks it would take.
func TestTooFewRepetitions(t *testing.T) {
	var runs []*record.Run
	for _, r := range workedRuns(t, 0.25) {
		if r.Rep <= 2 {
			runs = append(runs, r)
		}
	}
	rep := mustNew(t, workedMeta(), runs)
	for _, f := range rep.Findings {
		assert.Equal(t, paired.TooFew, f.State, "%s on %s", f.Design, f.Metric.Label)
	}
	md := rep.Markdown()
	assert.Contains(t, md, "−9.5% [")
	assert.Contains(t, md, ": too few repetitions for a test (n=2 blocks)")
	assert.NotContains(t, md, "no difference detected,")
	need, err := paired.MinBlocks(Alpha, len(Compared()))
	require.NoError(t, err)
	assert.Contains(t, md, "needs at least "+itoa(need)+" blocks")
}

// TestLoadBoundLeavesTheHeadline: one load-bound run takes its group out of
// the headline, but its verdicts stay in the detail; the control, the same
// runs with none load-bound, is in the headline.
func TestLoadBoundLeavesTheHeadline(t *testing.T) {
	row := "| counter · go · 10 callers | inputQ | mutex |"
	runs := workedRuns(t, 0.25)
	assert.Contains(t, mustNew(t, workedMeta(), runs).Markdown(), row)
	runs[3].DriverProc.CPUSeconds = 9.5
	runs[3].Derived = mustDerive(t, runs[3])
	require.Equal(t, record.ClassLoadBound, runs[3].Derived.Class)
	md := mustNew(t, workedMeta(), runs).Markdown()
	assert.NotContains(t, md, row)
	assert.Contains(t, md, "Left out of the headline, because the driver used nearly all its CPU in some of their runs and may have set the pace "+
		"(their figures and verdicts are in the detail below): counter · go · 10 callers (1 load-bound runs).")
	assert.Contains(t, md, "| inputQ | mutex | −9.5% [−12%, −7.3%] p=0.0078 p_adj=0.023 |", "the detail keeps the verdict")
	assert.Contains(t, md, "1 of this level's runs were load-bound")
}

// TestBaselineAndNoop: every store-backed design is compared with the
// baseline the meta names and with noop; noop is compared with nothing.
func TestBaselineAndNoop(t *testing.T) {
	backed := func(m string) bool { return m != Noop }
	assert.Equal(t, []Pair{{"inputQ", "mutex"}, {"sharded", "mutex"}, {"mutex", "noop"}, {"inputQ", "noop"}, {"sharded", "noop"}},
		Pairs([]string{"mutex", "inputQ", "noop", "sharded"}, "mutex", backed))
	assert.Equal(t, []Pair{{"mutex", "inputQ"}}, Pairs([]string{"mutex", "inputQ"}, "inputQ", backed))
	assert.Empty(t, Pairs([]string{"inputQ"}, "mutex", backed), "no baseline, no noop: nothing to compare")

	meta := fakeMeta()
	meta.Baseline = "inputQ"
	rep := mustNew(t, meta, fakeRuns(t))
	assert.Equal(t, []Pair{{"mutex", "inputQ"}, {"mutex", "noop"}, {"inputQ", "noop"}}, pairsOf(rep.findings(Cell{counterGo, 10})))
	assert.Len(t, rep.Findings, 2*3*len(Compared()), "2 levels × 3 pairs × every compared metric, one family")
	for _, f := range rep.Findings {
		assert.Equal(t, len(rep.Findings), f.Family)
	}
	assert.Contains(t, rep.Markdown(), "modes mutex, inputQ, noop (baseline inputQ)")
}

// TestFamilyOfAPlan: the plan's count of tests is the report's, from the
// same pairs.
func TestFamilyOfAPlan(t *testing.T) {
	var specs []plan.Spec
	for _, r := range fakeRuns(t) {
		specs = append(specs, r.Spec)
	}
	rep := mustNew(t, fakeMeta(), fakeRuns(t))
	assert.Equal(t, len(rep.Findings), Family(specs, DefaultBaseline))
}

// TestCompareIsDeclared: the metrics every pair is compared on are the
// catalogue's rows marked Compare: calls/s, p99 and server CPU per call.
func TestCompareIsDeclared(t *testing.T) {
	assert.Equal(t, []*Metric{mCallsPerSec, mP99, mServerCPUPerCall}, Compared())
}

func itoa(n int) string { return strconv.Itoa(n) }
