package storeverdict

import (
	"math"
	"slices"
)

// The rule that splits a design's rounds into two clusters, the one
// cmd/benchreport applies to the lab's own store benchmarks. Some designs
// settle, for a whole run, into one of two regimes (an owner goroutine
// parked between hand-offs, or kept busy): the lab measured inputQ at 64
// callers per CPU at 836, 817, 201, 202, 203 and 208 ns/op. The median of
// such a design describes neither regime, and its ratio to the baseline
// swings with which regime each round fell into.
//
// Sorted by log value, the rounds split at their largest gap that leaves
// at least clusterMinRuns rounds on each side; the split is kept only if
// the gap is wider than clusterSpreadK times the wider cluster's own log
// range and wider than clusterMinGap as a ratio.
const (
	clusterMinRuns = 2
	clusterSpreadK = 2.0
	clusterMinGap  = 1.10
)

// cluster is one group of a design's rounds.
type cluster struct {
	N      int     // rounds in it
	Median float64 // their median value
}

// clusters returns the two clusters of xs, low first, or nil if the rule
// finds none. Values must be positive.
func clusters(xs []float64) []cluster {
	n := len(xs)
	if n < 2*clusterMinRuns {
		return nil
	}
	s := slices.Sorted(slices.Values(xs))
	if s[0] <= 0 {
		return nil
	}
	logs := make([]float64, n)
	for i, x := range s {
		logs[i] = math.Log(x)
	}
	cut, gap := 0, -1.0
	for i := clusterMinRuns; i <= n-clusterMinRuns; i++ {
		if g := logs[i] - logs[i-1]; g > gap {
			cut, gap = i, g
		}
	}
	spread := max(logs[cut-1]-logs[0], logs[n-1]-logs[cut])
	if gap <= clusterSpreadK*spread || gap <= math.Log(clusterMinGap) {
		return nil
	}
	return []cluster{{N: cut, Median: median(s[:cut])}, {N: n - cut, Median: median(s[cut:])}}
}

// median of sorted values (the mean of the middle two for an even count).
func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
