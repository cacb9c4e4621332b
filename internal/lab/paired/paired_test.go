package paired

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchmath"
)

// Log ratios −0.1, −0.2, −0.3: mean −0.2, SD 0.1, n = 3; t(0.975, 2) =
// 4.303 from a printed t table, so the half-width is 4.303·0.1/√3 = 0.24843.
func TestEstimateWorkedExample(t *testing.T) {
	e, err := Estimate([]float64{math.Exp(-0.1), math.Exp(-0.3), math.Exp(-0.2)})
	require.NoError(t, err)
	assert.Equal(t, 3, e.N)
	assert.InDelta(t, math.Exp(-0.2), e.GeoMean, 1e-12)
	assert.InDelta(t, math.Exp(-0.2), e.Median, 1e-12)
	assert.InDelta(t, 0.1, e.LogSD, 1e-12)
	assert.InDelta(t, -0.2-0.24843, math.Log(e.Lo), 1e-4)
	assert.InDelta(t, -0.2+0.24843, math.Log(e.Hi), 1e-4)
	assert.True(t, e.Contains(1))

	e, err = Estimate([]float64{0.9, 1.1, 0.8, 1.3})
	require.NoError(t, err)
	assert.InDelta(t, 1.0, e.Median, 1e-12, "even N: mean of the middle two")

	e, err = Estimate([]float64{0.9})
	require.NoError(t, err)
	assert.Equal(t, Effect{N: 1, GeoMean: 0.9, Lo: 0, Hi: math.Inf(1), Median: 0.9}, e)
}

func TestRatiosBadInput(t *testing.T) {
	for _, tc := range []struct{ tr, b []float64 }{
		{[]float64{1, 2}, []float64{1}},
		{nil, nil},
		{[]float64{1, 0}, []float64{1, 1}},
		{[]float64{1, 1}, []float64{-1, 1}},
		{[]float64{math.NaN()}, []float64{1}},
		{[]float64{1}, []float64{math.Inf(1)}},
	} {
		_, err := Ratios(tc.tr, tc.b)
		assert.Error(t, err, "%v / %v", tc.tr, tc.b)
	}
	_, err := Estimate([]float64{1, -1})
	assert.Error(t, err)
}

func TestAnalyseBadInput(t *testing.T) {
	ok := Comparison{Design: "inputQ", Baseline: "mutex", Metric: "calls/s",
		DesignValues: []float64{1, 2, 3}, BaselineValues: []float64{1, 2, 3}}
	bad := ok
	bad.BaselineValues = []float64{1, 2}
	for _, tc := range []struct {
		cs    []Comparison
		alpha float64
	}{
		{[]Comparison{ok, bad}, 0.05},
		{[]Comparison{ok}, 0},
		{[]Comparison{ok}, 1},
		{[]Comparison{ok}, math.NaN()},
		{nil, 0.05},
	} {
		vs, err := Analyse(tc.cs, tc.alpha)
		assert.Error(t, err)
		assert.Nil(t, vs)
	}
}

// withRatios returns a comparison whose per-block ratios are exactly ratios, over
// baselines that vary wildly between blocks (pairing must not care).
func withRatios(ratios ...float64) Comparison {
	c := Comparison{Design: "inputQ", Baseline: "mutex", Metric: "calls/s"}
	for i, r := range ratios {
		base := 1000 * float64(1+i%3)
		c.BaselineValues = append(c.BaselineValues, base)
		c.DesignValues = append(c.DesignValues, base*r)
	}
	return c
}

func TestAnalyseStates(t *testing.T) {
	down8 := withRatios(0.90, 0.88, 0.87, 0.89, 0.86, 0.91, 0.88, 0.85)
	flat8 := withRatios(1.01, 0.99, 1.02, 0.985, 1.005, 0.995, 1.03, 0.97)
	down6 := withRatios(0.90, 0.88, 0.87, 0.89, 0.86, 0.91)
	down4 := withRatios(0.90, 0.88, 0.87, 0.89)

	vs, err := Analyse([]Comparison{down8, flat8, down4}, 0.05)
	require.NoError(t, err)
	// Every ratio below 1: V = 0, p = 2/2^8; Holm with three: 3·p.
	assert.Equal(t, Detected, vs[0].State)
	assert.InDelta(t, 2.0/256, vs[0].P, 1e-12)
	assert.InDelta(t, 6.0/256, vs[0].AdjP, 1e-12)
	assert.Equal(t, 3, vs[0].Family)
	assert.False(t, vs[0].Effect.Contains(1))

	assert.Equal(t, NoDifference, vs[1].State)
	assert.True(t, vs[1].Effect.Contains(1))
	assert.Greater(t, vs[1].Within, 0.0)
	assert.Less(t, vs[1].Within, 0.05)

	// Four blocks in one direction still cannot reach 0.05: 2/2^4 = 0.125.
	assert.Equal(t, TooFew, vs[2].State)
	assert.InDelta(t, 0.125, vs[2].MinP, 1e-12)

	// Six blocks can reach 0.05 alone (2/64 = 0.031) but not as one of a
	// family of two, where Holm's first step asks for 0.025.
	vs, err = Analyse([]Comparison{down6}, 0.05)
	require.NoError(t, err)
	assert.Equal(t, Detected, vs[0].State)
	vs, err = Analyse([]Comparison{down6, down6}, 0.05)
	require.NoError(t, err)
	assert.Equal(t, TooFew, vs[0].State)
	assert.Equal(t, TooFew, vs[1].State)
}

// TestNotConfirmed: an effect whose interval excludes no effect but whose
// test does not survive Holm over its family is "not confirmed", never "no
// difference detected" (which the interval beside it would contradict); the
// control: the same blocks alone are a difference detected.
func TestNotConfirmed(t *testing.T) {
	// Seven of eight blocks below 1: V = 1, p = 4/256 alone.
	mostlyDown := withRatios(0.90, 0.88, 0.87, 0.89, 0.86, 0.91, 0.88, 1.01)
	vs, err := Analyse([]Comparison{mostlyDown}, 0.05)
	require.NoError(t, err)
	assert.Equal(t, Detected, vs[0].State, "the control: alone it is detected")

	family := []Comparison{mostlyDown}
	for range 4 { // a family of five: 5·2/256 ≤ 0.05 can be reached, 5·4/256 cannot
		family = append(family, withRatios(1.01, 0.99, 1.02, 0.985, 1.005, 0.995, 1.03, 0.97))
	}
	vs, err = Analyse(family, 0.05)
	require.NoError(t, err)
	require.False(t, vs[0].Effect.Contains(1))
	assert.Greater(t, vs[0].AdjP, 0.05)
	assert.Equal(t, NotConfirmed, vs[0].State)
	assert.NotContains(t, vs[0].String(), "no difference")
	assert.NotContains(t, vs[0].Short(), "no difference")
	assert.Contains(t, vs[0].Short(), "not confirmed after adjustment")
	assert.Equal(t, NoDifference, vs[1].State)
}

// δ = (t(0.975, 7) + t(0.80, 7))·s/√n with printed t-table values 2.365 and
// 0.896: s = 0.05, n = 8 gives δ = 0.057648, e^δ − 1 = 0.05934.
func TestDetectableWorkedExample(t *testing.T) {
	assert.InDelta(t, 0.05934, detectable(Effect{N: 8, LogSD: 0.05}, 0.05), 5e-4)
	assert.True(t, math.IsInf(detectable(Effect{N: 1}, 0.05), 1))
}

func TestVerdictString(t *testing.T) {
	v := Verdict{Design: "inputQ", Baseline: "mutex", Metric: "calls/s", State: Detected,
		Effect: Effect{N: 8, GeoMean: 0.88, Lo: 0.85, Hi: 0.91}, P: 0.004, AdjP: 0.03, Alpha: 0.05, Family: 7}
	assert.Equal(t, "inputQ vs mutex −12% calls/s [−15%, −9.0%], p=0.004 (adj 0.03), n=8 blocks", v.String())

	v.State, v.P, v.AdjP, v.Effect.Lo, v.Effect.Hi, v.Within, v.Detectable = NoDifference, 0.2, 0.6, 0.97, 1.02, 0.03, 0.051
	v.Effect.GeoMean = 0.995
	assert.Equal(t, "inputQ vs mutex −0.5% calls/s [−3.0%, +2.0%], p=0.2 (adj 0.6), n=8 blocks: "+
		"no difference detected, the effect lies within ±3.0%; these runs could detect ±5.1%", v.String())

	v.State, v.Effect.N, v.MinP, v.Family = TooFew, 4, 0.125, 1
	assert.Equal(t, "inputQ vs mutex −0.5% calls/s [−3.0%, +2.0%], n=4 blocks: "+
		"too few repetitions for a test (smallest p 0.12, needs ≤ 0.05)", v.String())

	v.Effect = Effect{N: 1, GeoMean: 1, Lo: 0, Hi: math.Inf(1)}
	assert.True(t, strings.HasPrefix(v.String(), "inputQ vs mutex 0% calls/s [no interval], n=1 block:"), v.String())
}

// simulate draws one blocked experiment: each block's level is the
// machine's drift (log-normal, SD drift), each run adds its own noise, and
// the design is effect times the baseline.
func simulate(rng *rand.Rand, n int, effect, drift, noise float64) Comparison {
	c := Comparison{Design: "inputQ", Baseline: "mutex", Metric: "calls/s"}
	for range n {
		level := 50000 * math.Exp(drift*rng.NormFloat64())
		c.BaselineValues = append(c.BaselineValues, level*math.Exp(noise*rng.NormFloat64()))
		c.DesignValues = append(c.DesignValues, effect*level*math.Exp(noise*rng.NormFloat64()))
	}
	return c
}

func mannWhitneyP(a, b []float64) float64 {
	th := &benchmath.DefaultThresholds
	return benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(a), th), benchmath.NewSample(slices.Clone(b), th)).P
}

// The control the pairing exists for: a real 5% effect under drift between
// blocks (15% log SD) much larger than the run-to-run noise (1%). The
// unpaired Mann-Whitney test sees the drift and mostly misses the effect;
// the paired test on the same data finds it nearly every time.
func TestPairingFindsEffectDriftHidesFromUnpaired(t *testing.T) {
	const datasets, alpha = 200, 0.05
	rng := rand.New(rand.NewPCG(7, 11))
	paired, unpaired := 0, 0
	for range datasets {
		c := simulate(rng, 8, 0.95, 0.15, 0.01)
		vs, err := Analyse([]Comparison{c}, alpha)
		require.NoError(t, err)
		if vs[0].State == Detected {
			paired++
		}
		if mannWhitneyP(c.DesignValues, c.BaselineValues) <= alpha {
			unpaired++
		}
	}
	t.Logf("detections in %d data sets: paired %d, unpaired %d", datasets, paired, unpaired)
	assert.GreaterOrEqual(t, paired, datasets*95/100, "paired detections")
	assert.LessOrEqual(t, unpaired, datasets*30/100, "unpaired detections")
}

// The reverse control: no effect, the same drift. Over many data sets the
// paired test detects a difference no more often than its level allows
// (exact with 8 blocks: P(p ≤ 0.05) = 10/256 = 0.039), and not never —
// a test that never rejects would pass the bound but be useless.
func TestPairedFalsePositiveRate(t *testing.T) {
	const datasets, alpha = 2000, 0.05
	rng := rand.New(rand.NewPCG(3, 5))
	detected := 0
	for range datasets {
		vs, err := Analyse([]Comparison{simulate(rng, 8, 1, 0.15, 0.01)}, alpha)
		require.NoError(t, err)
		if vs[0].State == Detected {
			detected++
		}
	}
	rate := float64(detected) / datasets
	t.Logf("false-positive rate %.4f", rate)
	assert.LessOrEqual(t, rate, alpha+0.015)
	assert.GreaterOrEqual(t, rate, 0.02)
}

// Across a family, Holm holds the chance of any false detection to α;
// unadjusted, three null comparisons would give about three times that.
func TestFamilyWiseFalsePositiveRate(t *testing.T) {
	const reports, alpha, family = 1000, 0.05, 3
	rng := rand.New(rand.NewPCG(13, 17))
	anyAdjusted, anyRaw := 0, 0
	for range reports {
		cs := make([]Comparison, family)
		for i := range cs {
			cs[i] = simulate(rng, 10, 1, 0.15, 0.01)
		}
		vs, err := Analyse(cs, alpha)
		require.NoError(t, err)
		if slices.ContainsFunc(vs, func(v Verdict) bool { return v.State == Detected }) {
			anyAdjusted++
		}
		if slices.ContainsFunc(vs, func(v Verdict) bool { return v.P <= alpha }) {
			anyRaw++
		}
	}
	t.Logf("family-wise false-positive rate: Holm %.3f, unadjusted %.3f", float64(anyAdjusted)/reports, float64(anyRaw)/reports)
	assert.LessOrEqual(t, float64(anyAdjusted)/reports, alpha+0.02)
	assert.Greater(t, float64(anyRaw)/reports, alpha+0.04, "the control: unadjusted, the family errs more often")
}

// TestAnalyseHolmBeforeTooFew: a comparison that Holm's later steps detect
// is a detection, even where the Bonferroni bound on its own block count
// (MinP·m > α) says no test could reach the level. Thirteen comparisons of
// 12 blocks and one of 9, every ratio above 1: the nine-block one's p is
// 2/2^9 ≈ 0.0039, adjusted at Holm's last step to itself. The control:
// alone in a family of 14 equally small ones it is still too few.
func TestAnalyseHolmBeforeTooFew(t *testing.T) {
	up := func(n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = 1.1 + 0.01*float64(i)
		}
		return out
	}
	ones := func(n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = 1
		}
		return out
	}
	var cs []Comparison
	for i := range 13 {
		cs = append(cs, Comparison{Design: fmt.Sprint("d", i), Baseline: "b", Metric: "m", DesignValues: up(12), BaselineValues: ones(12)})
	}
	cs = append(cs, Comparison{Design: "nine", Baseline: "b", Metric: "m", DesignValues: up(9), BaselineValues: ones(9)})
	vs, err := Analyse(cs, 0.05)
	require.NoError(t, err)
	last := vs[len(vs)-1]
	require.Greater(t, MinP(9)*float64(len(cs)), 0.05, "the bound alone says too few")
	assert.LessOrEqual(t, last.AdjP, 0.05)
	assert.Equal(t, Detected, last.State)

	var control []Comparison
	for i := range 14 {
		control = append(control, Comparison{Design: fmt.Sprint("d", i), Baseline: "b", Metric: "m", DesignValues: up(9), BaselineValues: ones(9)})
	}
	vs, err = Analyse(control, 0.05)
	require.NoError(t, err)
	assert.Equal(t, TooFew, vs[0].State)
}

// TestPctKeepsTheSign: a bound a hair from no effect prints with its sign
// and enough digits ("−0.045%"), not as "0%" beside a detection; only an
// exact zero prints as 0%.
func TestPctKeepsTheSign(t *testing.T) {
	for _, tt := range []struct {
		f    float64
		want string
	}{
		{-0.00045, "−0.045%"}, {0.00045, "+0.045%"}, {0, "0%"}, {-0.032, "−3.2%"}, {0.12, "+12%"}, {-0.001, "−0.1%"},
	} {
		assert.Equal(t, tt.want, Pct(tt.f), "%v", tt.f)
	}
}
