package report

import (
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
