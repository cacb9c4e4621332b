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
// headline's numbers, computed by hand. Calls/s: the log ratios are −0.1
// plus the offsets; Yuen sets one block aside at each end (8 blocks), so
// the trimmed mean is −0.1 (0.90484, −9.5%), the Winsorized sample
// −0.13, −0.13, −0.12, −0.11, −0.09, −0.08, −0.07, −0.07 has variance
// 0.0046/7, SE = √(7·0.0046/7/(6·5)) = 0.0123828, and t(0.975, 5) =
// 2.570582 from a printed table gives [e^−0.131831, e^−0.068169] =
// [0.87649, 0.93410]. The fake server spends the same CPU whatever it
// serves, so CPU per call is the inverse. Both are primaries, one family
// of two: Holm doubles the smaller p. p99 is the same for both, an
// estimate: 0% [0%, 0%].
func TestPairedWorkedExample(t *testing.T) {
	rep := mustNew(t, workedMeta(), workedRuns(t, 0.25))
	require.Len(t, rep.Findings, len(Compared()), "one pair, every compared metric")
	c := Cell{counterGo, 10}
	calls, ok := rep.finding(c, Pair{"inputQ", "mutex"}, mCallsPerSec)
	require.True(t, ok)
	require.True(t, calls.IsPrimary())
	assert.Equal(t, len(workedOffsets), calls.Est.N)
	assert.Equal(t, 1, calls.Est.Trim)
	assert.InDelta(t, 0.904837, calls.Est.Ratio, 1e-5)
	assert.InDelta(t, 0.0123828, calls.Est.SE, 1e-6)
	assert.InDelta(t, 0.876489, calls.Est.Lo, 1e-5)
	assert.InDelta(t, 0.934103, calls.Est.Hi, 1e-5)
	assert.Less(t, calls.Primary.P, 0.001)
	assert.Equal(t, 2, calls.Primary.Family)
	assert.Equal(t, paired.OutcomeDetected, calls.Primary.Outcome)
	cpu, ok := rep.finding(c, Pair{"inputQ", "mutex"}, mServerCPUPerCall)
	require.True(t, ok)
	assert.InDelta(t, 1/0.904837, cpu.Est.Ratio, 1e-4)
	assert.InDelta(t, 2*cpu.Primary.P, cpu.Primary.AdjP, 1e-12, "Holm over two equal p: both doubled")
	p99, ok := rep.finding(c, Pair{"inputQ", "mutex"}, mP99)
	require.True(t, ok)
	assert.False(t, p99.IsPrimary(), "p99 is an estimate")
	assert.Equal(t, 1.0, p99.Est.Ratio)

	md := rep.Markdown()
	assert.Contains(t, md, "| counter · go · 10 callers | inputQ | mutex | −9.5% [−12%, −6.6%] p_adj=<0.001 | +11% [+7.1%, +14%] p_adj=<0.001 |")
	assert.Contains(t, md, "**counter · go · 10 callers** — inputQ against mutex: calls/s 9.5% [6.6%, 12%] lower (p_adj=<0.001); server CPU per call 11% [7.1%, 14%] higher (p_adj=<0.001).")
	assert.Contains(t, md, "| counter · go · 10 callers | inputQ | mutex | (primary: above) | 0% [0%, 0%] | (primary: above) |")
	assert.Less(t, strings.Index(md, "## Headline"), strings.Index(md, "### counter · go · 10 callers"), "the headline is on top")
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
		assert.Equal(t, paired.OutcomeDetected, f.Primary.Outcome)
		assert.InDelta(t, 0.904837, f.Est.Ratio, 1e-5, "the drift cancels out of every block's ratio")
	}
	assert.Greater(t, unpaired(drifting), 0.05, "unpaired, the drift hides a 10% effect")
	assert.Less(t, unpaired(steady), 0.05, "unpaired, without drift, the effect is found")
}

// TestTooFewRepetitions: the ladder's two blocks give no verdict and no
// interval, whatever the data; the report says so instead of "the same".
func TestTooFewRepetitions(t *testing.T) {
	var runs []*record.Run
	for _, r := range workedRuns(t, 0.25) {
		if r.Rep <= 2 {
			runs = append(runs, r)
		}
	}
	rep := mustNew(t, workedMeta(), runs)
	for _, f := range rep.Findings {
		if f.IsPrimary() {
			assert.Equal(t, paired.OutcomeTooFew, f.Primary.Outcome, "%s on %s", f.Pair.Design, f.Metric.Label)
		} else {
			assert.Zero(t, f.Est.N, "no interval from two blocks")
		}
	}
	md := rep.Markdown()
	assert.Contains(t, md, "too few blocks (n=2)")
	assert.Contains(t, md, "— (too few blocks for an interval)")
	assert.NotContains(t, md, ": the same within")
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
	assert.Contains(t, md, "| inputQ | mutex | −9.5% [−12%, −6.6%] p_adj=<0.001 |", "the detail keeps the verdict")
	assert.Contains(t, md, "1 of this level's runs were load-bound")
}

// gatedRuns are the worked runs as the gate saw them: blocks listed in
// spoiled had foreign CPU over the limit in their inputQ run.
func gatedRuns(t *testing.T, spoiled ...int) []*record.Run {
	runs := workedRuns(t, 0.25)
	for _, r := range runs {
		r.ServerSet = record.SetUsage{CPUs: []int{0}, User: 9.5, Idle: 0.5}
		r.DriverSet = record.SetUsage{CPUs: []int{1}, User: 5, Idle: 5}
		for _, b := range spoiled {
			if r.Rep == b && r.Mode == "inputQ" {
				r.ServerSet.User, r.ServerSet.Nice = 8, 1.5 // the server's 9.5 s of 10 less what a niced process took
				r.ServerProc.CPUSeconds = 8
			}
		}
		r.Derived = mustDerive(t, r)
	}
	return runs
}

// TestGateWithholdsATooNoisyVerdict: with four of eight blocks spoiled the
// group keeps four clean blocks, too few: the verdict is withheld, saying
// why, instead of anything that reads as "no difference". The control:
// one spoiled block leaves seven, and a verdict on them.
func TestGateWithholdsATooNoisyVerdict(t *testing.T) {
	meta := workedMeta()
	meta.Gate = &record.Gate{MaxForeign: 0.10, Reruns: 2, Margin: 0.03}
	rep := mustNew(t, meta, gatedRuns(t, 1, 3, 5, 7))
	md := rep.Markdown()
	assert.Contains(t, md, "inputQ against mutex: verdict withheld, too noisy: 4 of 8 blocks clean (the analysis needs 5)")
	assert.Contains(t, md, "Of 8 block cells, 0 were rerun and 4 dropped (4 spoiled runs).")
	assert.Contains(t, md, "## Spoiled runs")
	assert.Contains(t, md, "The validity gate spoiled 4 runs")
	assert.Contains(t, md, "| counter · go · 10 callers | inputQ | 4 |", "report.md counts them by group and design")
	page, err := rep.HTML()
	require.NoError(t, err)
	assert.Contains(t, page, "15% (spoiled)", "report.html lists each run")
	assert.NotContains(t, md, "15% (spoiled)", "report.md does not")
	assert.NotContains(t, md, ": the same within")
	f, ok := rep.finding(Cell{counterGo, 10}, Pair{"inputQ", "mutex"}, mCallsPerSec)
	require.True(t, ok)
	assert.Equal(t, 4, f.Est.N, "the analysis saw the clean blocks only")

	rep = mustNew(t, meta, gatedRuns(t, 3))
	f, ok = rep.finding(Cell{counterGo, 10}, Pair{"inputQ", "mutex"}, mCallsPerSec)
	require.True(t, ok)
	assert.Empty(t, f.Withheld)
	assert.Equal(t, 7, f.Est.N)
	assert.Equal(t, paired.OutcomeDetected, f.Primary.Outcome)

	// Every block spoiled: no group is left to analyse, and the headline
	// still names the group and withholds its verdicts.
	md = mustNew(t, meta, gatedRuns(t, 1, 2, 3, 4, 5, 6, 7, 8)).Markdown()
	assert.Contains(t, md, "**counter · go · 10 callers** — every verdict withheld, too noisy: 0 of 8 blocks clean (the analysis needs 5).")

	meta.Gate = nil // records from before the gate: nothing spoiled, nothing dropped
	rep = mustNew(t, meta, gatedRuns(t, 1, 3, 5, 7))
	f, _ = rep.finding(Cell{counterGo, 10}, Pair{"inputQ", "mutex"}, mCallsPerSec)
	assert.Equal(t, 8, f.Est.N)
	assert.Contains(t, rep.Markdown(), "made before the validity gate")
}

// TestAAControl: the baseline's second server in every block is estimated
// against the first on every compared metric, outside the family, and the
// headline says how far apart the two came out.
func TestAAControl(t *testing.T) {
	runs := workedRuns(t, 0.25)
	n := len(runs)
	for b, off := range workedOffsets {
		base := 1000 * (1 + 0.25*float64(b))
		r := fakeRun(t, n+b+1, "counter", 10, "mutex", b+1, base*math.Exp(off/4), 1)
		r.Twin = true
		r.ID += "-aa"
		runs = append(runs, r)
	}
	meta := workedMeta()
	meta.Gate = &record.Gate{MaxForeign: 0.10, Reruns: 2, Margin: 0.03, Twin: "mutex"}
	rep := mustNew(t, meta, runs)
	aa, ok := rep.finding(Cell{counterGo, 10}, Pair{"mutex" + plan.TwinSuffix, "mutex"}, mCallsPerSec)
	require.True(t, ok)
	assert.False(t, aa.IsPrimary())
	assert.InDelta(t, 1, aa.Est.Ratio, 1e-9, "the twin's offsets are symmetric")
	assert.Equal(t, 2, rep.primaryCount(), "the A/A control is not a primary")
	md := rep.Markdown()
	assert.Contains(t, md, "The noise floor: an A/A control ran mutex twice in every block, as two servers; the two came out calls/s within ±")
	assert.Contains(t, md, "| counter · go · 10 callers | mutex (A/A) | mutex |")
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
	assert.Len(t, rep.Findings, 2*3*len(Compared()), "2 levels × 3 pairs × every compared metric")
	for _, f := range rep.Findings {
		if f.IsPrimary() {
			assert.Equal(t, 2*2, f.Primary.Family, "2 levels × mutex against inputQ × 2 primary metrics")
		}
	}
	assert.Contains(t, rep.Markdown(), "modes mutex, inputQ, noop (baseline inputQ)")
}

// TestFamilyOfAPlan: the plan's count of primaries is the report's, from
// the same pairs.
func TestFamilyOfAPlan(t *testing.T) {
	var specs []plan.Spec
	for _, r := range fakeRuns(t) {
		specs = append(specs, r.Spec)
	}
	rep := mustNew(t, fakeMeta(), fakeRuns(t))
	assert.Equal(t, rep.primaryCount(), Family(specs, DefaultBaseline))
}

// TestCompareIsDeclared: the metrics every pair is compared on are the
// catalogue's rows marked Compare: calls/s, p99 and server CPU per call.
func TestCompareIsDeclared(t *testing.T) {
	assert.Equal(t, []*Metric{mCallsPerSec, mP99, mServerCPUPerCall}, Compared())
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestPrimaryIsDeclared: the primaries are the catalogue's rows marked
// Primary, among the compared ones: calls/s and server CPU per call.
func TestPrimaryIsDeclared(t *testing.T) {
	var ps []*Metric
	for _, m := range Catalogue {
		if m.Primary {
			assert.True(t, m.Compare, m.Label)
			ps = append(ps, m)
		}
	}
	assert.Equal(t, []*Metric{mCallsPerSec, mServerCPUPerCall}, ps)
}

// TestKnownSpinIsolated: a plan that sweeps the call work sets each design
// with the spin against itself without it, block by block, on server CPU
// per call in µs, beside the spin's length; inside where the runs add the
// spin's CPU, and outside in the control, where they add twice as much.
func TestKnownSpinIsolated(t *testing.T) {
	offsets := []float64{0.3, -0.3, 0.2, -0.2, 0.1, -0.1} // µs, mean 0
	build := func(added float64) string {
		space, err := plan.ParseSpace(map[string]string{plan.CallWork: "0,2us"})
		require.NoError(t, err)
		meta := workedMeta()
		meta.Modes, meta.Reps, meta.Factors = []string{"mutex"}, len(offsets), space
		var runs []*record.Run
		for b, off := range offsets {
			base := 1000 * (1 + 0.1*float64(b)) // calls/s, drifting
			// fakeRun's server spends 9.5 s over 10 s: 950,000/rps µs a call.
			perCall := 950_000/base + added + off
			for _, spin := range []string{"0", "2µs"} {
				rps := base
				if spin != "0" {
					rps = 950_000 / perCall
				}
				r := fakeRun(t, len(runs)+1, "counter", 10, "mutex", b+1, rps, 1)
				r.Factors = plan.DefaultPoint().With(plan.CallWork, spin)
				runs = append(runs, r)
			}
		}
		return mustNew(t, meta, runs).Markdown()
	}
	md := build(2)
	assert.Regexp(t, `The known answer, isolated: .* inside in 1 of 1: counter · go · call work 2µs · 10 callers, mutex: \+2\.0\d µs \[\+1\.\d\d, \+2\.\d\d\] \(true \+2\.00 µs, inside\)\.`, md)
	md = build(4)
	assert.Regexp(t, `inside in 0 of 1: counter · go · call work 2µs · 10 callers, mutex: \+4\.0\d µs \[\+3\.\d\d, \+4\.\d\d\] \(true \+2\.00 µs, outside\)\.`, md)
	assert.NotContains(t, mustNew(t, workedMeta(), workedRuns(t, 0)).Markdown(), "The known answer, isolated", "a plan without the call work has none")
}
