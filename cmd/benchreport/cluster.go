package main

import (
	"math"
	"slices"
)

// The rule that splits a row's runs into two clusters. Some owner designs
// settle, for a whole run, into one of two regimes (the owner parked
// between hand-offs, or kept busy): inputQ's Increment at 64 callers per
// CPU measured 836, 817, 201, 202, 203 and 208 ns. The median of such a row
// describes neither regime, so the report shows both.
//
// Sorted by log ns/op, the runs split at their largest gap that leaves at
// least clusterMinRuns runs on each side; that split is kept only if the gap
// is wider than clusterSpreadK times the wider cluster's own spread (its log
// range) and wider than clusterMinGap as a ratio. Logs, so that a gap is a
// ratio and the rule reads the same at 20 ns and at 20 µs; the spread
// factor, so that a wide unimodal row does not split at a chance gap; the
// floor, so that runs a few percent apart never count as two regimes.
const (
	clusterMinRuns = 2
	clusterSpreadK = 2.0
	clusterMinGap  = 1.10
)

// cluster is one group of a row's runs.
type cluster struct {
	N      int     // runs in it
	Median float64 // their median ns/op
}

// clusters returns the two clusters of xs, low first, or nil if the rule
// finds none. Values must be positive.
func clusters(xs []float64) []cluster {
	n := len(xs)
	if n < 2*clusterMinRuns {
		return nil
	}
	s := slices.Clone(xs)
	slices.Sort(s)
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
	return []cluster{{N: cut, Median: medianOf(s[:cut])}, {N: n - cut, Median: medianOf(s[cut:])}}
}

// medianOf is the median of sorted values (the mean of the middle two for
// an even count, as benchmath's).
func medianOf(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
