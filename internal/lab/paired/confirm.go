package paired

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// The confirmatory analysis. Each primary comparison (a design against the
// baseline on a primary metric) is summarised by Yuen's trimmed mean of its
// per-block log ratios: the blocks sorted, a tenth of them (at least one)
// set aside at each end, the rest averaged, with a standard error from the
// Winsorized variance and a Student t reference on n − 2g − 1 degrees of
// freedom (Tukey and McLaughlin's standard error, as in Yuen's trimmed t
// test of 1974; Wilcox, Introduction to Robust Estimation and Hypothesis
// Testing, the chapter on one-sample trimmed means). Estimate, interval and
// test are one procedure: the 1 − α interval excludes no effect exactly when
// the test's p ≤ α.
//
// Why it, and not the signed-rank test of Analyse: with 10 or 12 blocks
// and a family of 10 adjusted together, Holm's first step asks for
// p ≤ 0.005, which the exact signed-rank test reaches only when the blocks
// that disagree in sign hold the smallest ranks. One block out of line — a
// neighbour's burst the gate did not catch — pointing the wrong way holds
// the largest rank and vetoes an effect of any size. Trimmed, that block
// can neither make an effect nor veto one. The p values are continuous
// rather than sitting at the test's floor, so they say how strong each
// effect is.
//
// Why a tenth and not the fifth that is the textbook default: at the block
// counts the runner uses, every block trimmed costs the t reference a
// degree of freedom at Holm's strictest step, where t quantiles with few
// degrees of freedom are large. TestPowerAtDefaultPlan prints the power of
// both (and of the t test and the signed-rank test) on the same simulated
// experiments: trimming a fifth of 10 blocks leaves 5 degrees of freedom
// and gives up a large part of the t test's power, trimming one block
// little; and TestSimCoverageUnderTheStoppingRule's two-stage rule from 10
// blocks keeps its coverage with a tenth. One block out of line, the case
// the trimming is for, is set aside by both.

// TrimShare is the share of blocks trimmed from each end: g = ⌊TrimShare·n⌋,
// and at least one from MinBlocksRobust blocks on.
const TrimShare = 0.1

// MinBlocksRobust is the fewest blocks the confirmatory analysis judges: at
// 5, one block is trimmed from each end, so one block out of line is always
// set aside where a verdict is given, and the t reference keeps 2 degrees
// of freedom. Fewer is "too few blocks".
const MinBlocksRobust = 5

// Robust is Yuen's trimmed-mean analysis of one comparison's log ratios.
type Robust struct {
	// N is the number of blocks, Trim how many were set aside at each end
	// (g), DF the t reference's degrees of freedom (N − 2·Trim − 1).
	N, Trim, DF int
	// Center is the trimmed mean of log r_i; SE its standard error from
	// the Winsorized variance.
	Center, SE float64
	// Ratio is exp(Center): the effect on the ratio scale (0.91 is 9%
	// lower).
	Ratio float64
	// Lo and Hi bound the Confidence-level (95%) interval, ratio scale.
	Lo, Hi float64
	// EqLo and EqHi bound the 1 − 2α interval used for equivalence (two
	// one-sided tests at α), ratio scale: 90% at α = 0.05.
	EqLo, EqHi float64
	// P is the two-sided p for no effect (Center = 0).
	P float64
}

// Yuen computes Robust from log ratios. alpha, in (0, 0.5), sets only the
// equivalence interval (1 − 2α); the effect's interval is always at
// Confidence. It needs at least 3 values, all finite, and changes none of
// them.
//
// With x sorted, g = ⌊TrimShare·n⌋ (at least 1 from MinBlocksRobust blocks
// on; 0 below) and h = n − 2g: the centre is the mean of x[g..n−g−1]; the
// Winsorized sample sets the values below x[g] to x[g] and those above
// x[n−g−1] to x[n−g−1], and s_w² is its sample variance
// (n − 1 in the denominator); SE = √((n − 1)·s_w² / (h·(h − 1))), the
// variance of the trimmed mean estimated from the Winsorized sum of squares
// over h(h − 1); the reference is Student's t on h − 1 degrees of freedom.
// With g = 0 (3 or 4 blocks) it is the one-sample t test and interval.
// (Wilcox's trimci writes the standard error s_w / ((1 − 2γ)·√n) for a
// trimmed share γ; where γ·n = g the two differ by the factor
// √((n − 1)·h / (n·(h − 1))), which goes to 1 as n grows: the one here is
// the wider by 1.4% at 10 blocks.)
func Yuen(logs []float64, alpha float64) (Robust, error) {
	if !(alpha > 0 && alpha < 0.5) {
		return Robust{}, fmt.Errorf("paired: alpha %v; want one in (0, 0.5) (the equivalence interval is at 1 − 2α)", alpha)
	}
	n := len(logs)
	if n < 3 {
		return Robust{}, fmt.Errorf("paired: %d blocks; a trimmed mean's interval needs at least 3", n)
	}
	for i, v := range logs {
		if !finite(v) {
			return Robust{}, fmt.Errorf("paired: log ratio %d is %v; want a finite number", i, v)
		}
	}
	return yuen(logs, alpha, trimmed(n)), nil
}

// yuen is Yuen's analysis of checked log ratios with g trimmed from each
// end (0 ≤ g, n − 2g ≥ 2); the simulations also call it with other g.
func yuen(logs []float64, alpha float64, g int) Robust {
	n := len(logs)
	x := slices.Sorted(slices.Values(logs))
	h := n - 2*g
	center := stat.Mean(x[g:n-g], nil)
	w := make([]float64, n)
	for i, v := range x {
		w[i] = min(max(v, x[g]), x[n-g-1])
	}
	wvar := stat.Variance(w, nil) // n − 1 in the denominator
	se := math.Sqrt(float64(n-1) * wvar / float64(h*(h-1)))
	r := Robust{N: n, Trim: g, DF: h - 1, Center: center, SE: se, Ratio: math.Exp(center)}
	q := studentQ(1-(1-Confidence)/2, r.DF)
	qe := studentQ(1-alpha, r.DF)
	r.Lo, r.Hi = math.Exp(center-q*se), math.Exp(center+q*se)
	r.EqLo, r.EqHi = math.Exp(center-qe*se), math.Exp(center+qe*se)
	switch {
	case se > 0:
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(r.DF)}
		r.P = math.Min(1, 2*t.Survival(math.Abs(center)/se))
	case center == 0:
		r.P = 1
	default:
		r.P = 0 // every kept block the same, and not no effect
	}
	return r
}

// trimmed is how many blocks Yuen sets aside at each end of n:
// ⌊TrimShare·n⌋, and at least one from MinBlocksRobust blocks on, so that
// one block out of line is always set aside where a verdict is given. The
// product is nudged up by far less than a block so that a TrimShare·n that
// is an integer in exact arithmetic is not floored below it.
func trimmed(n int) int {
	g := int(math.Floor(TrimShare*float64(n) + 1e-9))
	if n >= MinBlocksRobust {
		g = max(g, 1)
	}
	return g
}

// studentQ is Student's t quantile, remembered: Yuen asks for the same two
// quantiles at each block count, and inverting the incomplete beta function
// costs more than the rest of the analysis.
func studentQ(p float64, df int) float64 {
	k := quantileKey{p, df}
	if q, ok := quantiles.Load(k); ok {
		return q.(float64)
	}
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(p)
	quantiles.Store(k, q)
	return q
}

type quantileKey struct {
	p  float64
	df int
}

var quantiles sync.Map // quantileKey → float64

// HalfWidth is the interval's half-width relative to its estimate, the
// figure -precision aims at: (Hi − Lo)/(2·√(Lo·Hi)), the sinh of half its
// width on the log scale where it was made. The interval is symmetric
// about the estimate there, so this width is the same wherever the
// estimate lies, and a rule that reads it reads widths only: a ratio of 4
// measured as precisely as one of 1 reads as narrow, where (Hi − Lo)/2
// would read four times as wide and ask for sixteen times the blocks. At
// a ratio of 1 the two agree. 0 for an interval not computed.
func (r Robust) HalfWidth() float64 {
	if !(r.Lo > 0 && r.Hi > 0) {
		return 0
	}
	return (r.Hi - r.Lo) / (2 * math.Sqrt(r.Lo*r.Hi))
}

// Outcome is what a primary comparison concluded. The names carry the
// prefix because Detected and TooFew already name the States of Analyse.
type Outcome int

const (
	// OutcomeDetected: a difference, its Holm-adjusted p at most α.
	OutcomeDetected Outcome = iota + 1
	// OutcomeEquivalent: no difference detected, and the 1 − 2α interval
	// lies within [1 − Margin, 1 + Margin]: two one-sided tests at α
	// (TOST) each reject an effect as large as the margin.
	OutcomeEquivalent
	// OutcomeNotShown: neither a difference nor equivalence.
	OutcomeNotShown
	// OutcomeTooFew: fewer than MinBlocksRobust blocks.
	OutcomeTooFew
)

func (o Outcome) String() string {
	switch o {
	case OutcomeDetected:
		return "difference"
	case OutcomeEquivalent:
		return "equivalent"
	case OutcomeNotShown:
		return "not shown"
	case OutcomeTooFew:
		return "too few blocks"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// Primary is one confirmatory comparison judged inside its family.
type Primary struct {
	Design, Baseline, Metric string
	// Robust is the effect. With fewer than MinBlocksRobust blocks but at
	// least 3 it is still computed (an estimate, not a verdict); with
	// fewer than 3 only N is set.
	Robust
	// AdjP is P adjusted by Holm over the family (1 for a comparison with
	// too few blocks, which enters the family untested); Family its size.
	AdjP   float64
	Family int
	// Alpha is the family-wise level; the equivalence interval EqLo..EqHi
	// is at 1 − 2α.
	Alpha float64
	// Margin is the equivalence margin (a fraction: 0.03 is ±3%).
	Margin  float64
	Outcome Outcome
	// ToDecide, for a comparison not shown, is about how many blocks in all
	// would give it a verdict if its estimate and its spread held
	// (Decidable); 0 for one already decided, one with too few blocks, or
	// one that no number of blocks would decide.
	ToDecide int
}

// Confirm judges the primaries as one family at family-wise level alpha:
// Yuen's test for each, Holm's adjustment over all of them, and for each
// not detected, equivalence within ±margin by two one-sided tests at alpha
// (its 1 − 2α interval inside [1 − margin, 1 + margin]); otherwise not
// shown. A comparison with fewer than MinBlocksRobust blocks stays in the
// family, untested (p = 1), so that the family is the one declared before
// the data. alpha must lie in (0, 0.5) — at 0.5 or above the 1 − 2α
// interval is empty — and margin in (0, 1). It returns an error, and
// changes nothing, on a bad level or margin, no comparisons, or a
// malformed comparison (unequal block counts, a value that is not finite
// and positive). A comparison with no block at all is too few blocks.
func Confirm(cs []Comparison, alpha, margin float64) ([]Primary, error) {
	if !(alpha > 0 && alpha < 0.5) {
		return nil, fmt.Errorf("paired: alpha %v; want one in (0, 0.5) (the equivalence interval is at 1 − 2α)", alpha)
	}
	if !(margin > 0 && margin < 1) {
		return nil, fmt.Errorf("paired: margin %v; want one in (0, 1)", margin)
	}
	if len(cs) == 0 {
		return nil, errors.New("paired: no comparisons")
	}
	ps := make([]Primary, len(cs))
	raw := make([]float64, len(cs))
	for i, c := range cs {
		p := Primary{Design: c.Design, Baseline: c.Baseline, Metric: c.Metric, Family: len(cs), Alpha: alpha, Margin: margin}
		var logs []float64
		var err error
		// A comparison that kept no block (every one dropped) is still
		// one of the family declared before the data: too few blocks.
		if len(c.DesignValues) > 0 || len(c.BaselineValues) > 0 {
			if logs, err = logRatios(c); err != nil {
				return nil, err
			}
		}
		p.N = len(logs)
		if len(logs) >= 3 {
			if p.Robust, err = Yuen(logs, alpha); err != nil {
				return nil, fmt.Errorf("%s vs %s on %s: %w", c.Design, c.Baseline, c.Metric, err)
			}
		}
		raw[i] = p.P
		if p.N < MinBlocksRobust {
			p.Outcome, raw[i] = OutcomeTooFew, 1
		}
		ps[i] = p
	}
	adj, err := Holm(raw)
	if err != nil {
		return nil, err
	}
	for i := range ps {
		p := &ps[i]
		p.AdjP = adj[i]
		switch {
		case p.Outcome == OutcomeTooFew:
		case p.AdjP <= alpha:
			p.Outcome = OutcomeDetected
		case p.EqLo >= 1-margin && p.EqHi <= 1+margin:
			p.Outcome = OutcomeEquivalent
		default:
			p.Outcome = OutcomeNotShown
		}
	}
	// A comparison not shown would be the next one Holm's step-down
	// procedure reaches: its p must fall to α over the comparisons not yet
	// detected.
	detected := 0
	for _, p := range ps {
		if p.Outcome == OutcomeDetected {
			detected++
		}
	}
	for i := range ps {
		if ps[i].Outcome == OutcomeNotShown {
			ps[i].ToDecide = ps[i].Decidable(alpha/float64(len(ps)-detected), alpha, margin)
		}
	}
	return ps, nil
}

// Decidable is about how many blocks in all would decide r if its centre
// stayed where it is and its spread did too: the fewest at which its test
// reaches level (a difference: two-sided, at the level Holm's next step
// asks) or its 1 − 2α interval fits within ±margin (equivalence), with
// Yuen's standard error and Student's t reference at that many blocks. It
// is a plan's figure, not a promise: the centre moves as blocks are added,
// and an effect that lies near the margin needs blocks without end. 0 when
// r has no standard error, or no number of blocks up to a million would
// decide it (a centre of exactly no effect can only be shown the same).
func (r Robust) Decidable(level, alpha, margin float64) int {
	if !(r.SE > 0) || r.N < 3 || !(level > 0 && level < 1) || !(alpha > 0 && alpha < 0.5) || !(margin > 0 && margin < 1) {
		return 0
	}
	// Yuen's standard error is √((n − 1)·s_w² / (h·(h − 1))); s_w, the
	// spread, is held and the rest follows n.
	scale := func(n int) float64 {
		h := float64(n - 2*trimmed(n))
		return float64(n-1) / (h * (h - 1))
	}
	sw2 := r.SE * r.SE / scale(r.N)
	lo, hi := math.Log1p(-margin), math.Log1p(margin)
	decided := func(n int) bool {
		se := math.Sqrt(sw2 * scale(n))
		df := n - 2*trimmed(n) - 1
		if math.Abs(r.Center) >= studentQ(1-level/2, df)*se {
			return true
		}
		qe := studentQ(1-alpha, df)
		return r.Center-qe*se >= lo && r.Center+qe*se <= hi
	}
	const most = 1 << 20
	n := r.N + 1
	for !decided(n) {
		if n >= most {
			return 0
		}
		n = min(2*n, most)
	}
	// The first n that decides it lies in (n/2, n]: halve the gap.
	below := max(r.N, n/2)
	for n-below > 1 {
		if mid := (below + n) / 2; decided(mid) {
			n = mid
		} else {
			below = mid
		}
	}
	return n
}

// Estimates gives the same figures for comparisons outside the family —
// calibrations, the A/A control, p99 latency: an effect and its interval,
// no verdict and no adjustment. Each needs at least 3 blocks; alpha, in
// (0, 0.5), sets the 1 − 2α interval as in Yuen.
func Estimates(cs []Comparison, alpha float64) ([]Robust, error) {
	out := make([]Robust, len(cs))
	for i, c := range cs {
		logs, err := logRatios(c)
		if err != nil {
			return nil, err
		}
		if out[i], err = Yuen(logs, alpha); err != nil {
			return nil, fmt.Errorf("%s vs %s on %s: %w", c.Design, c.Baseline, c.Metric, err)
		}
	}
	return out, nil
}

func logRatios(c Comparison) ([]float64, error) {
	r, err := Ratios(c.DesignValues, c.BaselineValues)
	if err != nil {
		return nil, fmt.Errorf("%s vs %s on %s: %w", c.Design, c.Baseline, c.Metric, err)
	}
	logs := make([]float64, len(r))
	for i, v := range r {
		logs[i] = math.Log(v)
	}
	return logs, nil
}

// Short renders a primary for a table cell that already names the designs
// and the metric: the effect and its 95% interval, then the outcome, e.g.
//
//	−8.9% [−10%, −7.4%] p_adj=0.001
//	+0.8% [−1.2%, +2.0%]: the same within ±3.0% (90% [−0.9%, +1.7%])
//	+4.0% [−2.0%, +11%]: not shown (neither a difference nor within ±3.0%)
//	too few blocks (n=3)
//
// An equivalence also gives the 1 − 2α interval that decided it, which can
// lie inside the margin where the 95% interval does not.
func (p Primary) Short() string {
	if p.Outcome == OutcomeTooFew {
		return fmt.Sprintf("too few blocks (n=%d)", p.N)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s [%s, %s]", Pct(p.Ratio-1), Pct(p.Lo-1), Pct(p.Hi-1))
	switch p.Outcome {
	case OutcomeDetected:
		fmt.Fprintf(&b, " p_adj=%s", PValue(p.AdjP))
	case OutcomeEquivalent:
		fmt.Fprintf(&b, ": the same within ±%s (%s [%s, %s])", PctAbs(p.Margin), p.eqLevel(), Pct(p.EqLo-1), Pct(p.EqHi-1))
	case OutcomeNotShown:
		fmt.Fprintf(&b, ": not shown (neither a difference nor within ±%s)", PctAbs(p.Margin))
	}
	return b.String()
}

// Sentence renders a primary as plain English for a headline, e.g.
//
//	inputQ calls/s 8.9% [7.4%, 10%] lower than mutex's (p_adj=0.001)
//	inputQ calls/s within ±3.0% of mutex's (+0.4%, 90% interval [−0.9%, +1.7%])
//	inputQ calls/s not shown to differ from mutex's, nor to lie within ±3.0% of it (+4.0% [−2.0%, +11%])
//	inputQ calls/s against mutex's: too few blocks for a verdict (n=3)
//
// A detected difference's 95% interval lies on one side of no effect, so
// it is given as magnitudes in the effect's direction.
func (p Primary) Sentence() string {
	subject := strings.TrimSpace(p.Design + " " + p.Metric)
	switch p.Outcome {
	case OutcomeDetected:
		lo, hi := math.Abs(p.Lo-1), math.Abs(p.Hi-1)
		dir := "higher"
		if p.Ratio < 1 {
			dir = "lower"
		}
		return fmt.Sprintf("%s %s [%s, %s] %s than %s's (p_adj=%s)", subject, PctAbs(math.Abs(p.Ratio-1)),
			PctAbs(min(lo, hi)), PctAbs(max(lo, hi)), dir, p.Baseline, PValue(p.AdjP))
	case OutcomeEquivalent:
		return fmt.Sprintf("%s within ±%s of %s's (%s, %s interval [%s, %s])", subject, PctAbs(p.Margin), p.Baseline,
			Pct(p.Ratio-1), p.eqLevel(), Pct(p.EqLo-1), Pct(p.EqHi-1))
	case OutcomeNotShown:
		return fmt.Sprintf("%s not shown to differ from %s's, nor to lie within ±%s of it (%s [%s, %s])", subject, p.Baseline,
			PctAbs(p.Margin), Pct(p.Ratio-1), Pct(p.Lo-1), Pct(p.Hi-1))
	}
	return fmt.Sprintf("%s against %s's: too few blocks for a verdict (n=%d)", subject, p.Baseline, p.N)
}

// eqLevel names the equivalence interval's level, 1 − 2α.
func (p Primary) eqLevel() string {
	return strconv.FormatFloat(100*(1-2*p.Alpha), 'g', 3, 64) + "%"
}

// PlanBlocks is the two-stage rule of -precision: after a first stage of
// n0 blocks whose widest primary interval has half-width hw (a fraction),
// the blocks needed in all for a half-width of target, ⌈n0·(hw/target)²⌉
// (the half-width falls as 1/√n), at least n0 and at most maxBlocks (n0
// if maxBlocks is below it: blocks already run are not undone). With no
// target, a half-width already at the target, or a half-width that is not
// a number, it is n0. The runner adds those blocks once and analyses all
// of them, with no further look.
func PlanBlocks(n0 int, hw, target float64, maxBlocks int) int {
	n0 = max(n0, 0)
	if !(target > 0) || !(hw > target) || math.IsNaN(hw) {
		return n0
	}
	// Computed in floating point and bounded before the conversion, so
	// that an infinite half-width asks for maxBlocks; the small allowance
	// keeps an exact product such as 10·2² from rounding up to 41.
	n := math.Ceil(float64(n0)*(hw/target)*(hw/target) - 1e-9)
	return max(n0, int(math.Min(n, float64(maxBlocks))))
}
