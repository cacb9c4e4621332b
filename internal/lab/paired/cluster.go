package paired

import (
	"math"
	"slices"
)

// The rule that splits a row's runs (or a design's rounds) into two
// clusters, which the lab's store benchmarks (cmd/benchreport) and a user's
// own (cmd/storeverdict) both apply. Some owner designs
// settle, for a whole run, into one of two regimes (the owner parked
// between hand-offs, or kept busy): inputQ's Increment at 64 callers per
// CPU measured 836, 817, 201, 202, 203 and 208 ns. The median of such a row
// describes neither regime, so the report shows both.
//
// Sorted by log ns/op, the runs split at their largest gap that leaves at
// least ClusterMinRuns runs on each side; that split is kept only if the gap
// is wider than ClusterSpreadK times the wider cluster's own spread (its log
// range) and wider than ClusterMinGap as a ratio. Logs, so that a gap is a
// ratio and the rule reads the same at 20 ns and at 20 µs; the spread
// factor, so that a wide unimodal row does not split at a chance gap; the
// floor, so that runs a few percent apart never count as two regimes.
const (
	ClusterMinRuns = 2
	ClusterSpreadK = 2.0
	ClusterMinGap  = 1.10
)

// Cluster is one group of a row's runs.
type Cluster struct {
	N      int     // runs in it
	Median float64 // their median ns/op
}

// Clusters returns the two clusters of xs, low first, or nil if the rule
// finds none (or a value is not positive).
func Clusters(xs []float64) []Cluster {
	n := len(xs)
	if n < 2*ClusterMinRuns {
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
	for i := ClusterMinRuns; i <= n-ClusterMinRuns; i++ {
		if g := logs[i] - logs[i-1]; g > gap {
			cut, gap = i, g
		}
	}
	spread := max(logs[cut-1]-logs[0], logs[n-1]-logs[cut])
	if gap <= ClusterSpreadK*spread || gap <= math.Log(ClusterMinGap) {
		return nil
	}
	return []Cluster{{N: cut, Median: median(s[:cut])}, {N: n - cut, Median: median(s[cut:])}}
}
