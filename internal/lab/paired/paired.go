// Package paired analyses a blocked experiment: every repetition is a block,
// and inside a block every design ran once, in an order drawn afresh for the
// block (Order). Comparing design T with a baseline B on one metric uses the
// per-block ratios r_i = T_i / B_i, so that whatever moved a whole block — the
// machine's drift between repetitions — cancels out of r_i.
//
// From the ratios it reports:
//
//   - the effect: the geometric mean of r_i with a Confidence-level t interval
//     computed on log r_i (gonum's stat and distuv.StudentsT), and the median
//     ratio (Effect);
//   - a paired test: the two-sided Wilcoxon signed-rank test on log r_i,
//     exact up to ExactMaxN blocks (SignedRankTest);
//   - Holm–Bonferroni adjusted p over every comparison of one report (Holm);
//   - a Verdict in one of three states: a difference detected; no difference
//     detected, with how large an effect the runs could have detected; or too
//     few repetitions for the test to reach the level at all.
//
// The interval and the test answer different questions and can disagree near
// the edge: the interval assumes log r_i roughly normal, the test only that it
// is symmetric about its centre. A verdict's state follows the test (adjusted
// for the whole report); the interval is the size of the effect.
//
// The analysis assumes the blocks are independent repetitions, that inside a
// block the designs saw the same conditions apart from their run order (which
// Order randomises so that it cannot favour one design), and that a design's
// effect is multiplicative — a fixed ratio to the baseline, which is what
// makes log r_i free of the block's level.
package paired

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Confidence is the level of every effect interval.
const Confidence = 0.95

// Power is the probability of detection at which Verdict.Detectable is
// computed.
const Power = 0.80

// Ratios returns the per-block ratios treatment[i]/baseline[i]. The slices
// are indexed by block and must be equally long; every value must be finite
// and positive (a metric of zero has no ratio).
func Ratios(treatment, baseline []float64) ([]float64, error) {
	if len(treatment) != len(baseline) {
		return nil, fmt.Errorf("paired: %d treatment blocks but %d baseline blocks; want one of each per block", len(treatment), len(baseline))
	}
	if len(treatment) == 0 {
		return nil, errNoValues
	}
	r := make([]float64, len(treatment))
	for i := range treatment {
		t, b := treatment[i], baseline[i]
		if !positive(t) || !positive(b) {
			return nil, fmt.Errorf("paired: block %d has treatment %v and baseline %v; want finite positive values", i, t, b)
		}
		r[i] = t / b
	}
	return r, nil
}

func positive(x float64) bool { return x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) }

// Effect is the size of a design's effect over the blocks, on the ratio scale
// (1 is no effect, 0.88 is 12% lower).
type Effect struct {
	// N is the number of blocks.
	N int
	// GeoMean is the geometric mean ratio; Lo and Hi bound its
	// Confidence-level interval: exp of the t interval on mean log r_i.
	// With one block the interval is unbounded: Lo 0, Hi +Inf.
	GeoMean, Lo, Hi float64
	// Median is the median ratio (the mean of the middle two for even N).
	Median float64
	// LogSD is the sample standard deviation of log r_i: the noise left
	// between blocks after pairing. Zero with one block.
	LogSD float64
}

// Estimate computes the effect of per-block ratios (see Ratios). The
// interval assumes log r_i are independent and roughly normal; the geometric
// mean and median assume nothing beyond positive ratios.
func Estimate(ratios []float64) (Effect, error) {
	if len(ratios) == 0 {
		return Effect{}, errNoValues
	}
	logs := make([]float64, len(ratios))
	for i, r := range ratios {
		if !positive(r) {
			return Effect{}, fmt.Errorf("paired: ratio %d is %v; want a finite positive value", i, r)
		}
		logs[i] = math.Log(r)
	}
	n := len(ratios)
	e := Effect{N: n, Median: median(ratios)}
	if n == 1 {
		e.GeoMean, e.Lo, e.Hi = ratios[0], 0, math.Inf(1)
		return e, nil
	}
	mean, sd := stat.MeanStdDev(logs, nil)
	half := tQuantile(1-(1-Confidence)/2, n-1) * sd / math.Sqrt(float64(n))
	e.GeoMean, e.Lo, e.Hi, e.LogSD = math.Exp(mean), math.Exp(mean-half), math.Exp(mean+half), sd
	return e, nil
}

// Contains says whether the interval holds the ratio r.
func (e Effect) Contains(r float64) bool { return e.Lo <= r && r <= e.Hi }

func tQuantile(p float64, nu int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(nu)}.Quantile(p)
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Comparison is one design against one baseline on one metric.
type Comparison struct {
	Design, Baseline, Metric string
	// DesignValues and BaselineValues are the metric's value in each
	// block, indexed alike: DesignValues[i] and BaselineValues[i] ran in
	// block i. A block where either run failed is left out of both.
	DesignValues, BaselineValues []float64
}

// State is what a verdict could conclude.
type State int

const (
	// Detected: the adjusted p is at most α.
	Detected State = iota + 1
	// NoDifference: the test could have reached α but did not, and the
	// effect's interval contains no effect.
	NoDifference
	// TooFew: with this many blocks even the smallest p the test can give,
	// adjusted as the family's smallest would be, exceeds α.
	TooFew
	// NotConfirmed: the effect's 95% interval excludes no effect, but the
	// test did not reach α once adjusted for the whole family. Calling it
	// "no difference" would contradict the interval printed beside it;
	// calling it a difference would ignore the other comparisons.
	NotConfirmed
)

func (s State) String() string {
	switch s {
	case Detected:
		return "difference detected"
	case NoDifference:
		return "no difference detected"
	case TooFew:
		return "too few repetitions for a test"
	case NotConfirmed:
		return "not confirmed after adjustment"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Verdict is the analysis of one Comparison within its report's family.
type Verdict struct {
	Design, Baseline, Metric string
	State                    State
	Effect                   Effect
	Test                     SignedRank
	// P is Test.P, the raw p; AdjP is Holm-adjusted over the family.
	P, AdjP float64
	// Alpha is the family-wise level; Family the number of comparisons
	// adjusted together.
	Alpha  float64
	Family int
	// MinP is the smallest raw p the test can give with Effect.N blocks.
	MinP float64
	// Within is the largest distance of the interval's ends from no effect,
	// as a fraction: when the interval contains 1, the effect lies within
	// ±Within.
	Within float64
	// Detectable is the smallest effect, as a fraction, that these runs
	// would detect with probability Power at the level Holm's first step
	// demands (α/Family), given the observed block-to-block noise:
	// e^δ − 1 with δ = (t(1−α/(2·Family), N−1) + t(Power, N−1))·LogSD/√N,
	// the one-sample t test's power formula on log r_i standing in for the
	// signed-rank test's (whose efficiency relative to it is 0.955 for
	// normal data). It uses the strictest level of the family, so it is
	// the effect the runs could detect whatever the other comparisons did.
	// +Inf with fewer than two blocks.
	Detectable float64
}

// Analyse judges every comparison of one report as one family at
// family-wise level alpha: the signed-rank test on log ratios, Holm's
// adjustment over all of them, and each one's effect. The verdicts come in
// the order of the comparisons. It changes nothing and returns an error if
// any comparison is malformed.
func Analyse(cs []Comparison, alpha float64) ([]Verdict, error) {
	if !(alpha > 0 && alpha < 1) {
		return nil, fmt.Errorf("paired: alpha %v; want one in (0, 1)", alpha)
	}
	if len(cs) == 0 {
		return nil, errors.New("paired: no comparisons")
	}
	m := len(cs)
	vs := make([]Verdict, m)
	raw := make([]float64, m)
	for i, c := range cs {
		r, err := Ratios(c.DesignValues, c.BaselineValues)
		if err != nil {
			return nil, fmt.Errorf("%s vs %s on %s: %w", c.Design, c.Baseline, c.Metric, err)
		}
		e, err := Estimate(r)
		if err != nil {
			return nil, fmt.Errorf("%s vs %s on %s: %w", c.Design, c.Baseline, c.Metric, err)
		}
		logs := make([]float64, len(r))
		for j, x := range r {
			logs[j] = math.Log(x)
		}
		t, err := SignedRankTest(logs)
		if err != nil {
			return nil, fmt.Errorf("%s vs %s on %s: %w", c.Design, c.Baseline, c.Metric, err)
		}
		vs[i] = Verdict{
			Design: c.Design, Baseline: c.Baseline, Metric: c.Metric,
			Effect: e, Test: t, P: t.P, Alpha: alpha, Family: m,
			MinP:       MinP(e.N),
			Within:     math.Max(e.Hi-1, 1-e.Lo),
			Detectable: detectable(e, alpha/float64(m)),
		}
		raw[i] = t.P
	}
	adj, err := Holm(raw)
	if err != nil {
		return nil, err
	}
	for i := range vs {
		v := &vs[i]
		v.AdjP = adj[i]
		switch {
		// A test that reached the level after Holm is a detection,
		// whatever the Bonferroni bound below says: Holm's later steps
		// ask less than α/m.
		case v.AdjP <= alpha:
			v.State = Detected
		// Judged on the block count, not on the non-zero differences
		// that happened to remain: whether the experiment could reach
		// the level is a property of its design.
		case v.MinP*float64(m) > alpha:
			v.State = TooFew
		case !v.Effect.Contains(1):
			v.State = NotConfirmed
		default:
			v.State = NoDifference
		}
	}
	return vs, nil
}

func detectable(e Effect, level float64) float64 {
	if e.N < 2 {
		return math.Inf(1)
	}
	nu := e.N - 1
	delta := (tQuantile(1-level/2, nu) + tQuantile(Power, nu)) * e.LogSD / math.Sqrt(float64(e.N))
	return math.Expm1(delta)
}

// String renders the verdict in one line, e.g.
//
//	inputQ vs mutex −12% calls/s [−15%, −9%], p=0.004 (adj 0.03), n=8 blocks
//
// followed, when no difference was detected, by what the runs can bound, or
// by why no test was possible.
func (v Verdict) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s vs %s %s %s ", v.Design, v.Baseline, Pct(v.Effect.GeoMean-1), v.Metric)
	if math.IsInf(v.Effect.Hi, 1) {
		b.WriteString("[no interval]")
	} else {
		fmt.Fprintf(&b, "[%s, %s]", Pct(v.Effect.Lo-1), Pct(v.Effect.Hi-1))
	}
	switch v.State {
	case Detected:
		fmt.Fprintf(&b, ", p=%s (adj %s), %s", PValue(v.P), PValue(v.AdjP), blocks(v.Effect.N))
	case NoDifference:
		fmt.Fprintf(&b, ", p=%s (adj %s), %s: no difference detected, the effect lies within ±%s; these runs could detect ±%s",
			PValue(v.P), PValue(v.AdjP), blocks(v.Effect.N), PctAbs(v.Within), PctAbs(v.Detectable))
	case NotConfirmed:
		fmt.Fprintf(&b, ", p=%s (adj %s), %s: %s over %d comparisons (the unadjusted interval excludes no effect)",
			PValue(v.P), PValue(v.AdjP), blocks(v.Effect.N), NotConfirmed, v.Family)
	case TooFew:
		fmt.Fprintf(&b, ", %s: too few repetitions for a test (smallest p %s, needs ≤ %s)",
			blocks(v.Effect.N), PValue(v.MinP), PValue(v.Alpha/float64(v.Family)))
	}
	return b.String()
}

// Pct formats a fraction as a signed percentage with a true minus sign: two
// significant figures' worth, which is all a few blocks can support. Only
// an exact zero prints as 0%: a bound a hair from no effect keeps its sign
// and enough digits to show which side it is on (−0.045%).
func Pct(f float64) string {
	switch {
	case f == 0:
		return "0%"
	case f < 0:
		return "−" + PctAbs(-f)
	}
	return "+" + PctAbs(f)
}

// PctAbs formats a fraction's size as a percentage: whole from 10%, one
// decimal from 0.1%, and enough digits below that to show it is not 0.
func PctAbs(f float64) string {
	f = math.Abs(f)
	p := 100 * f
	switch {
	case math.IsInf(p, 0):
		return "∞%"
	case p >= 9.95:
		return strconv.FormatFloat(p, 'f', 0, 64) + "%"
	case p >= 0.095 || p == 0:
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(p, 'g', 2, 64) + "%"
}

func blocks(n int) string {
	if n == 1 {
		return "n=1 block"
	}
	return "n=" + strconv.Itoa(n) + " blocks"
}

// PValue formats a p value, "<0.001" below a thousandth.
func PValue(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

// Short renders the verdict for a table cell that already names the
// designs and the metric, e.g.
//
//	−12% [−15%, −9%] p=0.004 p_adj=0.03
//	+2.0% [−3.0%, +7.0%] p_adj=0.41: no difference detected, within ±7.0%
//	−12% [−30%, +9%]: too few repetitions for a test (n=2 blocks)
func (v Verdict) Short() string {
	var b strings.Builder
	b.WriteString(Pct(v.Effect.GeoMean - 1))
	if math.IsInf(v.Effect.Hi, 1) {
		b.WriteString(" [no interval]")
	} else {
		fmt.Fprintf(&b, " [%s, %s]", Pct(v.Effect.Lo-1), Pct(v.Effect.Hi-1))
	}
	switch v.State {
	case Detected:
		fmt.Fprintf(&b, " p=%s p_adj=%s", PValue(v.P), PValue(v.AdjP))
	case NoDifference:
		fmt.Fprintf(&b, " p=%s p_adj=%s: no difference detected, within ±%s", PValue(v.P), PValue(v.AdjP), PctAbs(v.Within))
	case NotConfirmed:
		fmt.Fprintf(&b, " p=%s p_adj=%s: %s", PValue(v.P), PValue(v.AdjP), NotConfirmed)
	case TooFew:
		fmt.Fprintf(&b, ": %s (%s)", TooFew, blocks(v.Effect.N))
	}
	return b.String()
}
