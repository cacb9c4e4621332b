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

// The confirmatory analysis. Each primary comparison (a design against the
// baseline on a primary metric) is summarised by Yuen's trimmed mean of its
// per-block log ratios: the blocks sorted, the most extreme tenth on each
// side (at least one block) set aside, the rest averaged, with a standard error from the
// Winsorized variance and a Student t reference on n − 2g − 1 degrees of
// freedom (Yuen 1974; Wilcox, Introduction to Robust Estimation and
// Hypothesis Testing, section 4.4). Estimate, interval and test are one procedure:
// the 1 − α interval excludes no effect exactly when the test's p ≤ α. One
// block out of line — a neighbour's burst the gate did not catch — is
// trimmed, so it can neither make an effect nor veto one, which the
// signed-rank test on the same blocks could not promise (a single block of
// the wrong sign and the largest size puts its p above Holm's first step).
// The p values are continuous, so they say how strong each effect is.

// TrimShare is the share of blocks trimmed from each end (trimmed).
const TrimShare = 0.1

// MinBlocksRobust is the fewest blocks the confirmatory analysis judges: at
// 5 one block is trimmed from each end and the t reference has 2 degrees of
// freedom; fewer is "too few blocks".
const MinBlocksRobust = 5

// Robust is Yuen's trimmed-mean analysis of one comparison's log ratios.
type Robust struct {
	// N is the number of blocks, Trim how many were set aside at each end,
	// DF the t reference's degrees of freedom (N − 2·Trim − 1).
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
	// one-sided tests at α), ratio scale.
	EqLo, EqHi float64
	// P is the two-sided p for no effect (Center = 0).
	P float64
}

// Yuen computes Robust from log ratios at level alpha (which sets the
// equivalence interval; the effect's interval is always at Confidence).
// It needs at least 3 finite values.
func Yuen(logs []float64, alpha float64) (Robust, error) {
	if !(alpha > 0 && alpha < 0.5) {
		return Robust{}, fmt.Errorf("paired: alpha %v; want one in (0, 0.5)", alpha)
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
	x := slices.Sorted(slices.Values(logs))
	g := trimmed(n)
	h := n - 2*g
	center := stat.Mean(x[g:n-g], nil)
	w := make([]float64, n)
	for i, v := range x {
		w[i] = min(max(v, x[g]), x[n-g-1])
	}
	wvar := stat.Variance(w, nil) // n − 1 in the denominator
	se := math.Sqrt(float64(n-1) * wvar / float64(h*(h-1)))
	r := Robust{N: n, Trim: g, DF: h - 1, Center: center, SE: se, Ratio: math.Exp(center)}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(r.DF)}
	q := t.Quantile(1 - (1-Confidence)/2)
	qe := t.Quantile(1 - alpha)
	r.Lo, r.Hi = math.Exp(center-q*se), math.Exp(center+q*se)
	r.EqLo, r.EqHi = math.Exp(center-qe*se), math.Exp(center+qe*se)
	switch {
	case se > 0:
		r.P = math.Min(1, 2*t.Survival(math.Abs(center)/se))
	case center == 0:
		r.P = 1
	default:
		r.P = 0 // every kept block the same, and not no effect
	}
	return r, nil
}

// trimmed is how many blocks Yuen sets aside at each end of n: ⌊TrimShare·n⌋,
// and at least one from MinBlocksRobust blocks on, so that one block out
// of line is always set aside where a verdict is given.
func trimmed(n int) int {
	g := int(math.Floor(TrimShare * float64(n)))
	if n >= MinBlocksRobust {
		g = max(g, 1)
	}
	return g
}

// HalfWidth is the interval's half-width as a fraction of no effect.
func (r Robust) HalfWidth() float64 { return (r.Hi - r.Lo) / 2 }

// Outcome is what a primary comparison concluded.
type Outcome int

const (
	// OutcomeDetected: a difference, its Holm-adjusted p at most α.
	OutcomeDetected Outcome = iota + 1
	// OutcomeEquivalent: no difference shown, and the 1 − 2α interval lies
	// within ±Margin (two one-sided tests at α).
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
	Robust
	// AdjP is P adjusted by Holm over the family (1 for a comparison with
	// too few blocks, which counts as untested); Family its size.
	AdjP   float64
	Family int
	// Margin is the equivalence margin (a fraction).
	Margin  float64
	Outcome Outcome
}

// Confirm judges the primaries as one family at family-wise level alpha:
// Yuen's test for each, Holm's adjustment over all of them, and for each
// not detected, equivalence within ±margin by two one-sided tests at alpha
// (its 1 − 2α interval inside [1 − margin, 1 + margin]). A comparison with
// fewer than MinBlocksRobust blocks stays in the family, untested (p = 1),
// so that the family is the one declared before the data. It returns an
// error, and changes nothing, on a malformed comparison or level.
func Confirm(cs []Comparison, alpha, margin float64) ([]Primary, error) {
	if !(alpha > 0 && alpha < 0.5) {
		return nil, fmt.Errorf("paired: alpha %v; want one in (0, 0.5)", alpha)
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
		p := Primary{Design: c.Design, Baseline: c.Baseline, Metric: c.Metric, Family: len(cs), Margin: margin}
		raw[i] = 1
		if len(c.DesignValues) < MinBlocksRobust || len(c.BaselineValues) < MinBlocksRobust {
			if len(c.DesignValues) != len(c.BaselineValues) {
				return nil, fmt.Errorf("%s vs %s on %s: %d treatment blocks but %d baseline blocks", c.Design, c.Baseline, c.Metric, len(c.DesignValues), len(c.BaselineValues))
			}
			p.N, p.Outcome = len(c.DesignValues), OutcomeTooFew
			ps[i] = p
			continue
		}
		logs, err := logRatios(c)
		if err != nil {
			return nil, err
		}
		if p.Robust, err = Yuen(logs, alpha); err != nil {
			return nil, fmt.Errorf("%s vs %s on %s: %w", c.Design, c.Baseline, c.Metric, err)
		}
		raw[i] = p.P
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
	return ps, nil
}

// Estimates gives the same figures for comparisons outside the family —
// calibrations, the A/A control, secondary metrics: an effect and its
// interval, no verdict. Each needs at least 3 blocks.
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

// Short renders a primary for a table cell, e.g.
//
//	−8.9% [−10%, −7.4%] p_adj=0.001
//	+0.8% [−1.2%, +2.0%]: the same within ±3%
//	+4.0% [−2.0%, +11%]: not shown (neither a difference nor within ±3%)
//	too few blocks (n=3)
func (p Primary) Short() string {
	if p.Outcome == OutcomeTooFew {
		return fmt.Sprintf("too few blocks (n=%d)", p.N)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s [%s, %s]", pct(p.Ratio-1), pct(p.Lo-1), pct(p.Hi-1))
	switch p.Outcome {
	case OutcomeDetected:
		fmt.Fprintf(&b, " p_adj=%s", pval(p.AdjP))
	case OutcomeEquivalent:
		fmt.Fprintf(&b, ": the same within ±%s", pctAbs(p.Margin))
	case OutcomeNotShown:
		fmt.Fprintf(&b, ": not shown (neither a difference nor within ±%s)", pctAbs(p.Margin))
	}
	return b.String()
}

// PlanBlocks is the two-stage rule of -precision: after a first stage of
// n0 blocks whose widest primary interval has half-width hw (a fraction),
// the blocks needed in all for a half-width of target, ⌈n0·(hw/target)²⌉
// (the half-width falls as 1/√n), at least n0 and at most maxBlocks. The
// runner adds those blocks once and analyses all of them, with no further
// look.
func PlanBlocks(n0 int, hw, target float64, maxBlocks int) int {
	if !(target > 0) || !(hw > target) || n0 <= 0 {
		return max(n0, 0)
	}
	n := int(math.Ceil(float64(n0) * (hw / target) * (hw / target)))
	return max(n0, min(n, maxBlocks))
}
