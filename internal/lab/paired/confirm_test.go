package paired

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestYuenWithoutTrimmingIsTheTInterval: with fewer than five blocks
// nothing is trimmed, and Yuen's interval is the one-sample t
// interval on the log ratios that Estimate computes.
func TestYuenWithoutTrimmingIsTheTInterval(t *testing.T) {
	ratios := []float64{0.91, 0.95, 0.88, 0.93}
	logs := make([]float64, len(ratios))
	for i, r := range ratios {
		logs[i] = math.Log(r)
	}
	y, err := Yuen(logs, 0.05)
	require.NoError(t, err)
	e, err := Estimate(ratios)
	require.NoError(t, err)
	assert.Equal(t, 0, y.Trim)
	assert.Equal(t, 3, y.DF)
	assert.InDelta(t, e.GeoMean, y.Ratio, 1e-12)
	assert.InDelta(t, e.Lo, y.Lo, 1e-12)
	assert.InDelta(t, e.Hi, y.Hi, 1e-12)
}

// TestYuenByHand: ten blocks, one trimmed from each end, against the
// formula worked by hand: sorted x = 1..10 with 10 replaced by 100 (an
// outlier the trimming sets aside). Trimmed mean of 2..9 = 5.5;
// Winsorized sample 2,2,3,4,5,6,7,8,9,9 with variance 7.3889…; SE =
// √(9·7.3889/(8·7)) = 1.08972; df = 7.
func TestYuenByHand(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 100}
	y, err := Yuen(x, 0.05)
	require.NoError(t, err)
	assert.Equal(t, 1, y.Trim)
	assert.Equal(t, 7, y.DF)
	assert.InDelta(t, 5.5, y.Center, 1e-12)
	assert.InDelta(t, math.Sqrt(9*(66.5/9)/56), y.SE, 1e-9)
	assert.InDelta(t, 1.08972, y.SE, 1e-5)
	// t(0.975, 7) = 2.364624
	assert.InDelta(t, math.Exp(5.5-2.364624*y.SE), y.Lo, 1e-3*y.Lo)
	// The control: the outlier moves the plain mean by 9.1, the trimmed
	// mean not at all.
	x[9] = 10
	y2, err := Yuen(x, 0.05)
	require.NoError(t, err)
	assert.InDelta(t, y.Center, y2.Center, 1e-12)
}

// TestYuenSymmetricAndEquivariant: flipping every sign flips the effect
// and keeps the p; adding a constant shifts the centre and keeps the SE.
func TestYuenSymmetricAndEquivariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 12)
	for i := range x {
		x[i] = 0.05 + 0.02*rng.NormFloat64()
	}
	a, err := Yuen(x, 0.05)
	require.NoError(t, err)
	neg := make([]float64, len(x))
	shift := make([]float64, len(x))
	for i, v := range x {
		neg[i], shift[i] = -v, v+1
	}
	b, err := Yuen(neg, 0.05)
	require.NoError(t, err)
	c, err := Yuen(shift, 0.05)
	require.NoError(t, err)
	assert.InDelta(t, -a.Center, b.Center, 1e-12)
	assert.InDelta(t, a.P, b.P, 1e-12)
	assert.InDelta(t, a.Center+1, c.Center, 1e-12)
	assert.InDelta(t, a.SE, c.SE, 1e-12)
	assert.Less(t, a.P, 0.05, "a clear effect")
	assert.True(t, a.Lo > 1 == (a.P < 0.05), "the interval excludes no effect exactly when the test rejects")
}

// TestConfirmOutcomes: detected, the same within the margin, not shown,
// too few blocks; and bad input refused with nothing changed.
func TestConfirmOutcomes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	blocks := func(n int, effect, sd float64) (d, b []float64) {
		for range n {
			base := 1000 * (1 + 0.1*rng.NormFloat64())
			b = append(b, base)
			d = append(d, base*math.Exp(effect+sd*rng.NormFloat64()))
		}
		return d, b
	}
	d1, b1 := blocks(12, -0.09, 0.01)
	d2, b2 := blocks(12, 0, 0.003)
	d3, b3 := blocks(12, 0.02, 0.05)
	d4, b4 := blocks(3, -0.5, 0.01)
	cs := []Comparison{
		{Design: "a", Baseline: "m", Metric: "calls/s", DesignValues: d1, BaselineValues: b1},
		{Design: "b", Baseline: "m", Metric: "calls/s", DesignValues: d2, BaselineValues: b2},
		{Design: "c", Baseline: "m", Metric: "calls/s", DesignValues: d3, BaselineValues: b3},
		{Design: "d", Baseline: "m", Metric: "calls/s", DesignValues: d4, BaselineValues: b4},
	}
	ps, err := Confirm(cs, 0.05, 0.03)
	require.NoError(t, err)
	want := []Outcome{OutcomeDetected, OutcomeEquivalent, OutcomeNotShown, OutcomeTooFew}
	for i, p := range ps {
		assert.Equal(t, want[i], p.Outcome, "%s: %s", p.Design, p.Short())
		assert.Equal(t, 4, p.Family)
	}
	assert.Regexp(t, `^−\d.*% \[−.*%, −.*%\] p_adj=`, ps[0].Short())
	assert.Contains(t, ps[1].Short(), "the same within ±3.0%")
	assert.Contains(t, ps[2].Short(), "not shown")
	assert.Equal(t, "too few blocks (n=3)", ps[3].Short())
	assert.Equal(t, 1.0, ps[3].AdjP, "too few blocks counts as untested")

	for _, bad := range []struct {
		alpha, margin float64
	}{{0, 0.03}, {0.5, 0.03}, {0.05, 0}, {0.05, 1}, {math.NaN(), 0.03}} {
		_, err := Confirm(cs, bad.alpha, bad.margin)
		assert.Error(t, err, "alpha %v margin %v", bad.alpha, bad.margin)
	}
	_, err = Yuen([]float64{1, 2}, 0.05)
	assert.ErrorContains(t, err, "at least 3")
	_, err = Yuen([]float64{1, 2, math.Inf(1)}, 0.05)
	assert.ErrorContains(t, err, "finite")
	bad := []Comparison{{Design: "x", Baseline: "m", Metric: "calls/s", DesignValues: []float64{1, 2, 3, 4, 5}, BaselineValues: []float64{1, 2, 0, 4, 5}}}
	_, err = Confirm(bad, 0.05, 0.03)
	assert.ErrorContains(t, err, "finite positive")
	assert.Equal(t, []float64{1, 2, 0, 4, 5}, bad[0].BaselineValues, "nothing changed")
}

// TestPlanBlocks: the second stage grows the plan by the square of the
// ratio of the widths, within its bounds.
func TestPlanBlocks(t *testing.T) {
	assert.Equal(t, 40, PlanBlocks(10, 0.04, 0.02, 100))
	assert.Equal(t, 30, PlanBlocks(10, 0.04, 0.02, 30), "bounded by -max-blocks")
	assert.Equal(t, 10, PlanBlocks(10, 0.01, 0.02, 100), "already precise enough")
	assert.Equal(t, 10, PlanBlocks(10, 0.04, 0, 100), "no target")
	assert.Equal(t, 13, PlanBlocks(10, 0.0225, 0.02, 100))
}
