package report

import (
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// confidence is the level of every interval the report prints.
const confidence = 0.95

// Stat is one figure over a group's repetitions: the median with its 95%
// confidence interval (benchmath, assuming nothing about the distribution),
// the range, and the runs it came from.
type Stat struct {
	Median float64 `json:"median"`
	// Lo and Hi bound the median's confidence interval; CI is false when
	// there are too few runs for one (fewer than 6 at 95%).
	Lo     float64   `json:"ci_lo,omitempty"`
	Hi     float64   `json:"ci_hi,omitempty"`
	CI     bool      `json:"ci"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	N      int       `json:"n"`
	Runs   []string  `json:"runs"` // the run ids it was computed from
	Values []float64 `json:"values"`
}

func statOfValues(vals []float64, ids []string) Stat {
	if len(vals) == 0 {
		return Stat{}
	}
	s := Stat{Values: slices.Clone(vals), Runs: ids, N: len(vals)}
	sorted := slices.Sorted(slices.Values(vals))
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	sum := benchmath.AssumeNothing.Summary(benchmath.NewSample(sorted, &benchmath.DefaultThresholds), confidence)
	s.Median = sum.Center
	if !math.IsInf(sum.Lo, 0) && !math.IsInf(sum.Hi, 0) {
		s.Lo, s.Hi, s.CI = sum.Lo, sum.Hi, true
	}
	return s
}

// compare is the Mann-Whitney U test of two samples (benchmath assuming
// nothing): its p-value and sample sizes.
func compare(a, b Stat) benchmath.Comparison {
	return benchmath.AssumeNothing.Compare(
		benchmath.NewSample(a.Values, &benchmath.DefaultThresholds),
		benchmath.NewSample(b.Values, &benchmath.DefaultThresholds))
}

// Verdict is the comparison of the best design with the runner-up on one
// figure at one level.
type Verdict struct {
	Best, Other  string  // design names
	Metric       string  // what was compared: "calls/s" or "server CPU per call"
	HigherBetter bool    // calls/s: higher wins; CPU per call: lower wins
	BestMedian   float64 // medians of the two
	OtherMedian  float64
	P            float64
	N1, N2       int
	Alpha        float64
	Basis        string // why Metric: the runs' classes (verdictMetric)
}

// newVerdict orders two designs' stats by the figure and tests them.
func newVerdict(a, b string, sa, sb Stat, metric string, higherBetter bool) Verdict {
	if (sa.Median < sb.Median) == higherBetter {
		a, b, sa, sb = b, a, sb, sa
	}
	c := compare(sa, sb)
	return Verdict{Best: a, Other: b, Metric: metric, HigherBetter: higherBetter, BestMedian: sa.Median, OtherMedian: sb.Median,
		P: c.P, N1: c.N1, N2: c.N2, Alpha: c.Alpha}
}

// Significant reports whether the test rejects "no difference".
func (v Verdict) Significant() bool { return v.P < v.Alpha }

// String is the verdict in one sentence: "inputQ 18% slower than mutex,
// p=0.008, n=5", or "no difference detected at n=5".
func (v Verdict) String() string {
	n := fmt.Sprintf("n=%d", v.N1)
	if v.N1 != v.N2 {
		n = fmt.Sprintf("n=%d+%d", v.N1, v.N2)
	}
	if !v.Significant() {
		return "no difference detected at " + n
	}
	var how string
	if v.HigherBetter {
		how = fmt.Sprintf("%s slower than %s", pct((v.BestMedian-v.OtherMedian)/v.BestMedian), v.Best)
	} else {
		how = fmt.Sprintf("%s more %s than %s", pct((v.OtherMedian-v.BestMedian)/v.BestMedian), v.Metric, v.Best)
	}
	return fmt.Sprintf("%s %s, p=%.3f, %s", v.Other, how, v.P, n)
}

// pct prints a share as a whole percentage, or with one decimal below 10%.
func pct(x float64) string {
	if math.Abs(x) < 0.1 {
		return fmt.Sprintf("%.1f%%", x*100)
	}
	return fmt.Sprintf("%.0f%%", x*100)
}
