package paired

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// TestYuenTrimCounts: g = ⌊0.1·n⌋ blocks set aside at each end, at least
// one from 5 blocks on, none below; n − 2g − 1 degrees of freedom.
func TestYuenTrimCounts(t *testing.T) {
	for _, tt := range []struct{ n, trim, df int }{
		{3, 0, 2}, {4, 0, 3}, {5, 1, 2}, {9, 1, 6}, {10, 1, 7}, {12, 1, 9},
		{19, 1, 16}, {20, 2, 15}, {29, 2, 24}, {30, 3, 23}, {40, 4, 31},
	} {
		x := make([]float64, tt.n)
		for i := range x {
			x[i] = float64(i)
		}
		y, err := Yuen(x, 0.05)
		require.NoError(t, err)
		assert.Equal(t, tt.n, y.N)
		assert.Equal(t, tt.trim, y.Trim, "n=%d", tt.n)
		assert.Equal(t, tt.df, y.DF, "n=%d", tt.n)
	}
}

// TestYuenWithoutTrimmingIsTheTInterval: with fewer than five blocks
// nothing is trimmed, and Yuen's analysis is the one-sample t test: the
// interval Estimate computes, and the p of t = mean/(sd/√n) on n − 1
// degrees of freedom from gonum's Student t.
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
	mean, sd := stat.MeanStdDev(logs, nil)
	tt := mean / (sd / 2)
	p := 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: 3}.CDF(-math.Abs(tt))
	assert.InDelta(t, p, y.P, 1e-12)
	assert.InDelta(t, sd/2, y.SE, 1e-12)
	// The 90% interval: t(0.95, 3) = 2.353363 from a printed table.
	assert.InDelta(t, math.Exp(mean+2.353363*sd/2), y.EqHi, 1e-6)
}

// TestYuenByHand: ten blocks, x = 1..10 with 10 replaced by 100 (an
// outlier). g = 1, h = 8. Trimmed mean of 2..9 = 5.5. The Winsorized
// sample 2,2,3,4,5,6,7,8,9,9 has mean 5.5 and sum of squares
// 2·3.5² + 2.5² + 1.5² + 0.5² + 0.5² + 1.5² + 2.5² + 2·3.5² = 66.5, so
// s_w² = 66.5/9 and SE = √(9·s_w²/(8·7)) = √(66.5/56) = 1.089725; df = 7,
// t(0.975, 7) = 2.364624 and t(0.95, 7) = 1.894579 from a printed table.
// t = 5.5/1.089725 = 5.047 lies between t(0.999, 7) = 4.785 and
// t(0.9995, 7) = 5.408, so the two-sided p lies between 0.001 and 0.002.
func TestYuenByHand(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 100}
	y, err := Yuen(x, 0.05)
	require.NoError(t, err)
	assert.Equal(t, 1, y.Trim)
	assert.Equal(t, 7, y.DF)
	assert.InDelta(t, 5.5, y.Center, 1e-12)
	assert.InDelta(t, math.Sqrt(66.5/56), y.SE, 1e-12)
	assert.InDelta(t, 1.089725, y.SE, 1e-6)
	assert.InDelta(t, 5.5-2.364624*1.089725, math.Log(y.Lo), 1e-5)
	assert.InDelta(t, 5.5+2.364624*1.089725, math.Log(y.Hi), 1e-5)
	assert.InDelta(t, 5.5-1.894579*1.089725, math.Log(y.EqLo), 1e-5)
	assert.InDelta(t, 5.5+1.894579*1.089725, math.Log(y.EqHi), 1e-5)
	assert.Greater(t, y.P, 0.001)
	assert.Less(t, y.P, 0.002)

	// The control: moving the outlier (as long as it stays beyond the
	// trimmed blocks) changes nothing of Yuen's, and moves the plain mean
	// by 9.
	moved := slices.Clone(x)
	moved[9] = 10
	y2, err := Yuen(moved, 0.05)
	require.NoError(t, err)
	assert.Equal(t, y, y2)
	assert.InDelta(t, 9.0, stat.Mean(x, nil)-stat.Mean(moved, nil), 1e-12)
}

// TestYuenTukeyMcLaughlin recomputes the standard error by the other
// route the literature writes it: the Winsorized mean
// x̄_w = (h·x̄_t + g·(x_(g+1) + x_(n−g)))/n, the Winsorized sum of squared
// deviations SSD_w = g·(x_(g+1) − x̄_w)² + g·(x_(n−g) − x̄_w)² + Σ over the
// kept blocks of (x_i − x̄_w)², and SE = √(SSD_w/(h·(h − 1))) (Tukey and
// McLaughlin, 1963). It also checks the relation to Wilcox's trimci form,
// s_w/((1 − 2γ)·√n), which where γ·n = g is the same up to the factor
// √((n − 1)·h/(n·(h − 1))).
func TestYuenTukeyMcLaughlin(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{5, 7, 10, 12, 13, 20, 31, 40} {
		x := make([]float64, n)
		for i := range x {
			x[i] = 0.03 + 0.02*rng.NormFloat64()
			if i == 0 {
				x[i] += 0.5 // an outlier
			}
		}
		y, err := Yuen(x, 0.05)
		require.NoError(t, err)
		s := slices.Sorted(slices.Values(x))
		g := max(1, n/10)
		h := n - 2*g
		sum := 0.0
		for _, v := range s[g : n-g] {
			sum += v
		}
		xt := sum / float64(h)
		xw := (float64(h)*xt + float64(g)*(s[g]+s[n-g-1])) / float64(n)
		ssd := float64(g)*(s[g]-xw)*(s[g]-xw) + float64(g)*(s[n-g-1]-xw)*(s[n-g-1]-xw)
		for _, v := range s[g : n-g] {
			ssd += (v - xw) * (v - xw)
		}
		assert.InDelta(t, xt, y.Center, 1e-12, "n=%d", n)
		assert.InDelta(t, math.Sqrt(ssd/float64(h*(h-1))), y.SE, 1e-12, "n=%d", n)
		if n%10 == 0 {
			wilcox := math.Sqrt(ssd/float64(n-1)) / ((1 - 2*TrimShare) * math.Sqrt(float64(n)))
			factor := math.Sqrt(float64((n-1)*h) / float64(n*(h-1)))
			assert.InDelta(t, wilcox*factor, y.SE, 1e-12, "n=%d", n)
		}
	}
}

// TestYuenSymmetricAndEquivariant: flipping every sign flips the effect
// and keeps the p; adding a constant shifts the centre and keeps the SE;
// scaling scales the centre and the SE and keeps the p; and the 95%
// interval excludes no effect exactly when p < 0.05, with the 90%
// interval inside it.
func TestYuenSymmetricAndEquivariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		n := 5 + trial%16
		x := make([]float64, n)
		for i := range x {
			x[i] = 0.02 + 0.03*rng.NormFloat64()
		}
		a, err := Yuen(x, 0.05)
		require.NoError(t, err)
		neg, shift, scale := make([]float64, n), make([]float64, n), make([]float64, n)
		for i, v := range x {
			neg[i], shift[i], scale[i] = -v, v+1, 3*v
		}
		b, err := Yuen(neg, 0.05)
		require.NoError(t, err)
		c, err := Yuen(shift, 0.05)
		require.NoError(t, err)
		d, err := Yuen(scale, 0.05)
		require.NoError(t, err)
		assert.InDelta(t, -a.Center, b.Center, 1e-12)
		assert.InDelta(t, a.SE, b.SE, 1e-12)
		assert.InDelta(t, a.P, b.P, 1e-12)
		assert.InDelta(t, a.Center+1, c.Center, 1e-12)
		assert.InDelta(t, a.SE, c.SE, 1e-12)
		assert.InDelta(t, 3*a.Center, d.Center, 1e-12)
		assert.InDelta(t, 3*a.SE, d.SE, 1e-12)
		assert.InDelta(t, a.P, d.P, 1e-9)
		assert.Equal(t, a.Lo > 1 || a.Hi < 1, a.P < 0.05, "n=%d: the interval excludes no effect exactly when the test rejects (p=%v)", n, a.P)
		assert.True(t, a.Lo < a.EqLo && a.EqLo < a.Ratio && a.Ratio < a.EqHi && a.EqHi < a.Hi)
		assert.InDelta(t, math.Sinh((math.Log(a.Hi)-math.Log(a.Lo))/2), a.HalfWidth(), 1e-12)
		assert.InDelta(t, a.HalfWidth(), c.HalfWidth(), 1e-12, "the half-width does not move with the estimate")
		assert.Greater(t, (c.Hi-c.Lo)/2, 2*(a.Hi-a.Lo)/2, "the control: on the ratio scale the shifted interval reads e times as wide")
	}
}

// TestYuenDegenerate: every kept block alike. No spread and no effect is
// p = 1; no spread and an effect is p = 0, its interval a point.
func TestYuenDegenerate(t *testing.T) {
	y, err := Yuen([]float64{0, 0, 0, 0, 0}, 0.05)
	require.NoError(t, err)
	assert.Equal(t, 1.0, y.P)
	assert.Equal(t, 1.0, y.Ratio)
	y, err = Yuen([]float64{-1, 0.1, 0.1, 0.1, 2}, 0.05)
	require.NoError(t, err)
	assert.Equal(t, 0.0, y.P)
	assert.InDelta(t, math.Exp(0.1), y.Lo, 1e-15)
	assert.InDelta(t, math.Exp(0.1), y.Hi, 1e-15)
}

// TestYuenBadInput: too few values, a value that is not finite, a level
// outside (0, 0.5) are errors, and the values are left as they were.
func TestYuenBadInput(t *testing.T) {
	for _, tt := range []struct {
		name  string
		x     []float64
		alpha float64
		want  string
	}{
		{"none", nil, 0.05, "at least 3"},
		{"two", []float64{1, 2}, 0.05, "at least 3"},
		{"inf", []float64{1, 2, math.Inf(1)}, 0.05, "finite"},
		{"nan", []float64{math.NaN(), 2, 3, 4, 5}, 0.05, "finite"},
		{"alpha 0", []float64{1, 2, 3}, 0, "alpha"},
		{"alpha 0.5", []float64{1, 2, 3}, 0.5, "alpha"},
		{"alpha nan", []float64{1, 2, 3}, math.NaN(), "alpha"},
		{"alpha negative", []float64{1, 2, 3}, -0.05, "alpha"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := slices.Clone(tt.x)
			_, err := Yuen(tt.x, tt.alpha)
			assert.ErrorContains(t, err, tt.want)
			assert.Equal(t, fmt.Sprint(before), fmt.Sprint(tt.x), "nothing changed")
		})
	}
	x := []float64{3, 1, 2, 5, 4}
	_, err := Yuen(x, 0.05)
	require.NoError(t, err)
	assert.Equal(t, []float64{3, 1, 2, 5, 4}, x, "Yuen sorts a copy")
}

// comparison builds a comparison of n blocks with log ratios effect +
// sd·N(0, 1), on baselines that drift from block to block.
func comparison(rng *rand.Rand, design string, n int, effect, sd float64) Comparison {
	c := Comparison{Design: design, Baseline: "mutex", Metric: "calls/s"}
	for range n {
		base := 1000 * (1 + 0.1*rng.NormFloat64())
		c.BaselineValues = append(c.BaselineValues, base)
		c.DesignValues = append(c.DesignValues, base*math.Exp(effect+sd*rng.NormFloat64()))
	}
	return c
}

// TestConfirmOutcomes: detected, the same within the margin, not shown,
// too few blocks, each with its table cell and its sentence.
func TestConfirmOutcomes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cs := []Comparison{
		comparison(rng, "a", 12, -0.09, 0.01),
		comparison(rng, "b", 12, 0, 0.003),
		comparison(rng, "c", 12, 0.02, 0.05),
		comparison(rng, "d", 3, -0.5, 0.01),
		comparison(rng, "e", 2, -0.5, 0.01),
	}
	ps, err := Confirm(cs, 0.05, 0.03)
	require.NoError(t, err)
	want := []Outcome{OutcomeDetected, OutcomeEquivalent, OutcomeNotShown, OutcomeTooFew, OutcomeTooFew}
	for i, p := range ps {
		assert.Equal(t, want[i], p.Outcome, "%s: %s", p.Design, p.Short())
		assert.Equal(t, len(cs), p.Family)
		assert.Equal(t, 0.03, p.Margin)
		assert.Equal(t, cs[i].Design, p.Design)
		assert.Equal(t, "mutex", p.Baseline)
		assert.Equal(t, "calls/s", p.Metric)
	}
	assert.Equal(t, 12, ps[0].N)
	assert.Equal(t, 1, ps[0].Trim)
	assert.LessOrEqual(t, ps[0].AdjP, 0.05)
	assert.GreaterOrEqual(t, ps[0].AdjP, ps[0].P)

	assert.Regexp(t, `^−\d.*% \[−.*%, −.*%\] p_adj=`, ps[0].Short())
	assert.Regexp(t, `^a calls/s \d.*% \[\d.*%, \d.*%\] lower than mutex's \(p_adj=.*\)$`, ps[0].Sentence())
	assert.Regexp(t, `: the same within ±3\.0% \(90% \[.*%, .*%\]\)$`, ps[1].Short())
	assert.Regexp(t, `^b calls/s within ±3\.0% of mutex's \(.*%, 90% interval \[.*%, .*%\]\)$`, ps[1].Sentence())
	assert.Contains(t, ps[2].Short(), ": not shown (neither a difference nor within ±3.0%)")
	assert.Contains(t, ps[2].Sentence(), "c calls/s not shown to differ from mutex's, nor to lie within ±3.0% of it (")
	assert.Equal(t, "too few blocks (n=3)", ps[3].Short())
	assert.Equal(t, "d calls/s against mutex's: too few blocks for a verdict (n=3)", ps[3].Sentence())
	assert.Equal(t, "too few blocks (n=2)", ps[4].Short())

	// Too few blocks enters Holm untested: adjusted p 1. From 3 blocks
	// the effect is still estimated (its interval wide); below, only N.
	assert.Equal(t, 1.0, ps[3].AdjP)
	assert.Equal(t, 1.0, ps[4].AdjP)
	assert.Less(t, ps[3].Ratio, 0.7)
	assert.Less(t, ps[3].Lo, ps[3].Ratio)
	assert.Equal(t, Robust{N: 2}, ps[4].Robust)
}

// TestConfirmSentenceWorked: the renderings of fixed figures, digits and
// signs included.
func TestConfirmSentenceWorked(t *testing.T) {
	base := Primary{Design: "inputQ", Baseline: "mutex", Metric: "calls/s", Family: 10, Alpha: 0.05, Margin: 0.03,
		Robust: Robust{N: 12, Ratio: 0.911, Lo: 0.90, Hi: 0.926, EqLo: 0.902, EqHi: 0.924, P: 0.0001}, AdjP: 0.001}
	d := base
	d.Outcome = OutcomeDetected
	assert.Equal(t, "−8.9% [−10%, −7.4%] p_adj=0.001", d.Short())
	assert.Equal(t, "inputQ calls/s 8.9% [7.4%, 10%] lower than mutex's (p_adj=0.001)", d.Sentence())
	up := d
	up.Ratio, up.Lo, up.Hi = 1.089, 1.074, 1.10
	assert.Equal(t, "inputQ calls/s 8.9% [7.4%, 10%] higher than mutex's (p_adj=0.001)", up.Sentence())

	e := base
	e.Outcome, e.Ratio, e.Lo, e.Hi, e.EqLo, e.EqHi, e.AdjP = OutcomeEquivalent, 1.004, 0.988, 1.02, 0.991, 1.017, 1
	assert.Equal(t, "+0.4% [−1.2%, +2.0%]: the same within ±3.0% (90% [−0.9%, +1.7%])", e.Short())
	assert.Equal(t, "inputQ calls/s within ±3.0% of mutex's (+0.4%, 90% interval [−0.9%, +1.7%])", e.Sentence())

	n := base
	n.Outcome, n.Ratio, n.Lo, n.Hi, n.AdjP = OutcomeNotShown, 1.04, 0.98, 1.11, 0.4
	assert.Equal(t, "+4.0% [−2.0%, +11%]: not shown (neither a difference nor within ±3.0%)", n.Short())
	assert.Equal(t, "inputQ calls/s not shown to differ from mutex's, nor to lie within ±3.0% of it (+4.0% [−2.0%, +11%])", n.Sentence())

	// A bound a hair from no effect keeps its sign.
	h := d
	h.Hi = 0.99955
	assert.Equal(t, "−8.9% [−10%, −0.045%] p_adj=0.001", h.Short())
	assert.Equal(t, "inputQ calls/s 8.9% [0.045%, 10%] lower than mutex's (p_adj=0.001)", h.Sentence())

	assert.Equal(t, "difference", OutcomeDetected.String())
	assert.Equal(t, "equivalent", OutcomeEquivalent.String())
	assert.Equal(t, "not shown", OutcomeNotShown.String())
	assert.Equal(t, "too few blocks", OutcomeTooFew.String())
	assert.Equal(t, "Outcome(0)", Outcome(0).String())
}

// TestConfirmIsOneFamily: the same clear-cut comparison is detected alone
// and not once nine nulls share its family — Holm's first step asks for
// p ≤ α/10; and a comparison with too few blocks still counts towards the
// family's size.
func TestConfirmIsOneFamily(t *testing.T) {
	x := []float64{1.02, 1.035, 0.99, 1.04, 1.025, 0.995, 1.03, 1.015, 1.045, 0.98, 1.005, 1.03}
	ones := make([]float64, len(x))
	for i := range ones {
		ones[i] = 1
	}
	eff := Comparison{Design: "eff", Baseline: "b", Metric: "m", DesignValues: x, BaselineValues: ones}
	alone, err := Confirm([]Comparison{eff}, 0.05, 0.03)
	require.NoError(t, err)
	require.Less(t, alone[0].P, 0.05)
	require.Greater(t, alone[0].P*10, 0.05, "the example needs a p that Holm's first step of ten refuses")
	assert.Equal(t, OutcomeDetected, alone[0].Outcome)

	cs := []Comparison{eff}
	for i := range 9 {
		null := Comparison{Design: fmt.Sprint("null", i), Baseline: "b", Metric: "m",
			DesignValues: []float64{1, 1.2, 0.8}, BaselineValues: []float64{1, 1, 1}}
		cs = append(cs, null)
	}
	ps, err := Confirm(cs, 0.05, 0.03)
	require.NoError(t, err)
	assert.Equal(t, 10, ps[0].Family)
	assert.InDelta(t, 10*alone[0].P, ps[0].AdjP, 1e-12)
	assert.Equal(t, OutcomeNotShown, ps[0].Outcome)
	for _, p := range ps[1:] {
		assert.Equal(t, OutcomeTooFew, p.Outcome)
	}
}

// TestConfirmBadInput: a level or margin out of range, no comparisons, a
// malformed comparison — long or short — are errors, and the comparisons
// are left as they were.
func TestConfirmBadInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	good := comparison(rng, "a", 6, 0.01, 0.01)
	for _, tt := range []struct {
		name          string
		cs            []Comparison
		alpha, margin float64
		want          string
	}{
		{"alpha 0", []Comparison{good}, 0, 0.03, "alpha"},
		{"alpha 0.5", []Comparison{good}, 0.5, 0.03, "alpha"},
		{"alpha 1", []Comparison{good}, 1, 0.03, "alpha"},
		{"alpha nan", []Comparison{good}, math.NaN(), 0.03, "alpha"},
		{"margin 0", []Comparison{good}, 0.05, 0, "margin"},
		{"margin 1", []Comparison{good}, 0.05, 1, "margin"},
		{"margin negative", []Comparison{good}, 0.05, -0.03, "margin"},
		{"margin nan", []Comparison{good}, 0.05, math.NaN(), "margin"},
		{"no comparisons", nil, 0.05, 0.03, "no comparisons"},
		{"zero value", []Comparison{good, {Design: "x", Baseline: "m", Metric: "calls/s",
			DesignValues: []float64{1, 2, 3, 4, 5}, BaselineValues: []float64{1, 2, 0, 4, 5}}}, 0.05, 0.03, "finite positive"},
		{"infinite value, too few blocks", []Comparison{good, {Design: "x", Baseline: "m", Metric: "calls/s",
			DesignValues: []float64{1, math.Inf(1), 3}, BaselineValues: []float64{1, 2, 3}}}, 0.05, 0.03, "finite positive"},
		{"nan value", []Comparison{good, {Design: "x", Baseline: "m", Metric: "calls/s",
			DesignValues: []float64{1, 2, 3, 4, math.NaN()}, BaselineValues: []float64{1, 2, 3, 4, 5}}}, 0.05, 0.03, "finite positive"},
		{"unequal blocks", []Comparison{good, {Design: "x", Baseline: "m", Metric: "calls/s",
			DesignValues: []float64{1, 2, 3}, BaselineValues: []float64{1, 2, 3, 4, 5}}}, 0.05, 0.03, "blocks"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := fmt.Sprint(tt.cs)
			ps, err := Confirm(tt.cs, tt.alpha, tt.margin)
			assert.ErrorContains(t, err, tt.want)
			assert.Nil(t, ps)
			assert.Equal(t, before, fmt.Sprint(tt.cs), "nothing changed")
			if tt.alpha > 0 && tt.alpha < 0.5 && tt.margin > 0 && tt.margin < 1 && len(tt.cs) > 0 {
				rs, err := Estimates(tt.cs, tt.alpha)
				assert.Error(t, err)
				assert.Nil(t, rs)
				assert.Equal(t, before, fmt.Sprint(tt.cs), "nothing changed")
			}
		})
	}
}

// TestEstimates: the same figures as a primary's, without a verdict;
// fewer than 3 blocks is an error.
func TestEstimates(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	cs := []Comparison{comparison(rng, "a", 12, 0.05, 0.02), comparison(rng, "b", 3, 0, 0.02)}
	rs, err := Estimates(cs, 0.05)
	require.NoError(t, err)
	ps, err := Confirm(cs[:1], 0.05, 0.03)
	require.NoError(t, err)
	assert.Equal(t, ps[0].Robust, rs[0])
	assert.Equal(t, 3, rs[1].N)
	assert.Equal(t, 0, rs[1].Trim)

	_, err = Estimates([]Comparison{comparison(rng, "c", 2, 0, 0.02)}, 0.05)
	assert.ErrorContains(t, err, "at least 3")
	_, err = Estimates(cs, 0.5)
	assert.ErrorContains(t, err, "alpha")
}

// TestPlanBlocks: the second stage grows the plan by the square of the
// ratio of the widths, within its bounds.
func TestPlanBlocks(t *testing.T) {
	for _, tt := range []struct {
		name       string
		n0         int
		hw, target float64
		max, want  int
	}{
		{"four times the blocks for half the width", 10, 0.04, 0.02, 100, 40},
		{"an exact product is not rounded up", 12, 0.03, 0.015, 100, 48},
		{"rounded up", 10, 0.0225, 0.02, 100, 13},
		{"bounded by -max-blocks", 10, 0.04, 0.02, 30, 30},
		{"already precise enough", 10, 0.01, 0.02, 100, 10},
		{"exactly at the target", 10, 0.02, 0.02, 100, 10},
		{"no target", 10, 0.04, 0, 100, 10},
		{"an infinite width asks for the most", 10, math.Inf(1), 0.02, 40, 40},
		{"a width that is not a number adds nothing", 10, math.NaN(), 0.02, 40, 10},
		{"blocks run are not undone", 12, 0.04, 0.02, 8, 12},
		{"no first stage", 0, 0.04, 0.02, 40, 0},
	} {
		assert.Equal(t, tt.want, PlanBlocks(tt.n0, tt.hw, tt.target, tt.max), tt.name)
	}
}

// TestConfirmKeepsAnEmptyComparisonInTheFamily: a comparison whose every
// block was dropped stays in the family, too few blocks, and still counts
// in Holm's adjustment; the control is the same family without it, whose
// adjusted p is smaller.
func TestConfirmKeepsAnEmptyComparisonInTheFamily(t *testing.T) {
	full := Comparison{Design: "a", Baseline: "b", Metric: "m",
		DesignValues: []float64{1.10, 1.12, 1.09, 1.11, 1.10, 1.13, 1.08}, BaselineValues: []float64{1, 1.01, 0.99, 1, 1.02, 1, 0.98}}
	empty := Comparison{Design: "c", Baseline: "b", Metric: "m"}
	ps, err := Confirm([]Comparison{full, empty}, 0.05, 0.03)
	require.NoError(t, err)
	assert.Equal(t, OutcomeTooFew, ps[1].Outcome)
	assert.Equal(t, 0, ps[1].N)
	alone, err := Confirm([]Comparison{full}, 0.05, 0.03)
	require.NoError(t, err)
	assert.Greater(t, ps[0].AdjP, alone[0].AdjP, "the empty comparison counts in the family")
}

// spread is n log ratios centre + sd·Φ⁻¹((i − ½)/n): the same centre and
// the same spread at every n, without a draw's luck.
func spread(n int, centre, sd float64) Comparison {
	c := Comparison{Design: "x", Baseline: "mutex", Metric: "p99"}
	for i := range n {
		c.BaselineValues = append(c.BaselineValues, 100)
		c.DesignValues = append(c.DesignValues, 100*math.Exp(centre+sd*distuv.UnitNormal.Quantile((float64(i)+0.5)/float64(n))))
	}
	return c
}

// TestToDecideProjectsTheProcedure: a comparison not shown after 30 blocks
// says how many would decide it, and the procedure itself, run on a tenth
// more blocks of the same centre and spread, decides it, with the outcome
// the projection reached first (the tenth: the Winsorized spread of the
// same quantiles creeps up with n); at two thirds of them it does not. Both
// ways: a centre near no effect (equivalence comes first) and one past the
// margin (a difference). The controls: a decided comparison projects
// nothing, and a family of 20 of which the others are detected projects
// the same as a family of one (Holm's next step is at α), while a family
// of 20 all not shown asks for more.
func TestToDecideProjectsTheProcedure(t *testing.T) {
	for _, tc := range []struct {
		centre float64
		want   Outcome
	}{{-0.005, OutcomeEquivalent}, {-0.035, OutcomeDetected}} {
		ps, err := Confirm([]Comparison{spread(30, tc.centre, 0.12)}, 0.05, 0.03)
		require.NoError(t, err)
		require.Equal(t, OutcomeNotShown, ps[0].Outcome, "%v", ps[0].Short())
		n := ps[0].ToDecide
		require.Greater(t, n, 30)
		at, err := Confirm([]Comparison{spread(n+n/10, tc.centre, 0.12)}, 0.05, 0.03)
		require.NoError(t, err)
		assert.Equal(t, tc.want, at[0].Outcome, "centre %v at a tenth past the %d blocks projected: %s", tc.centre, n, at[0].Short())
		short, err := Confirm([]Comparison{spread(2*n/3, tc.centre, 0.12)}, 0.05, 0.03)
		require.NoError(t, err)
		assert.Equal(t, OutcomeNotShown, short[0].Outcome, "centre %v at %d blocks: %s", tc.centre, 2*n/3, short[0].Short())
		t.Logf("centre %+.3f: not shown at 30 blocks, %d projected, %s there", tc.centre, n, at[0].Outcome)
	}

	rng := rand.New(rand.NewPCG(5, 6))
	one, err := Confirm([]Comparison{spread(30, -0.045, 0.12)}, 0.05, 0.03)
	require.NoError(t, err)
	mixed := []Comparison{spread(30, -0.045, 0.12)}
	for range 19 {
		mixed = append(mixed, comparison(rng, "big", 30, -0.3, 0.01))
	}
	ps, err := Confirm(mixed, 0.05, 0.03)
	require.NoError(t, err)
	assert.Equal(t, OutcomeNotShown, ps[0].Outcome)
	assert.Equal(t, one[0].ToDecide, ps[0].ToDecide, "the others detected: Holm's next step is at α")
	for _, p := range ps[1:] {
		assert.Equal(t, OutcomeDetected, p.Outcome)
		assert.Zero(t, p.ToDecide, "a decided comparison projects nothing")
	}
	var none []Comparison
	for range 20 {
		none = append(none, spread(30, -0.045, 0.12))
	}
	all, err := Confirm(none, 0.05, 0.03)
	require.NoError(t, err)
	assert.Greater(t, all[0].ToDecide, one[0].ToDecide, "twenty not shown: Holm's next step is at α/20")
}
