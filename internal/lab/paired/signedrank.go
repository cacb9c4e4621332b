package paired

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// ExactMaxN is the largest number of non-zero differences for which
// SignedRankTest enumerates the exact permutation distribution; beyond it the
// normal approximation (with tie and continuity correction) is used. At 30
// the two agree to within a percentage point of p (closer in the tails), and
// the counts of sign vectors (at most 2^30) stay exact in a float64.
const ExactMaxN = 30

// SignedRank is the result of a two-sided Wilcoxon signed-rank test of the
// hypothesis that the differences are symmetric about zero.
type SignedRank struct {
	// N is the number of non-zero differences the test ranked; Zeros is
	// how many were exactly zero and dropped (Wilcoxon's treatment of zeros).
	N, Zeros int
	// V is the sum of the ranks of the positive differences (R's V).
	V float64
	// P is the two-sided p-value: twice the smaller tail, at most 1.
	P float64
	// Exact says P comes from the exact permutation distribution rather
	// than the normal approximation.
	Exact bool
}

// SignedRankTest runs a two-sided Wilcoxon signed-rank test on x.
//
// It assumes the x are independent and, under the null hypothesis, each is
// symmetric about zero (so every sign is equally likely whatever the
// magnitude). Zeros are dropped; tied magnitudes get the average of the ranks
// they span. For up to ExactMaxN non-zero values P is exact: the distribution
// of V over all 2^N sign vectors, with the tied (average) ranks as they are —
// not the tie-free table — so ties cost no accuracy. Beyond that, V is
// referred to a normal distribution with the tie-corrected variance and a
// continuity correction of 1/2 towards the mean (as R's wilcox.test with
// correct=TRUE). With no non-zero values P is 1.
func SignedRankTest(x []float64) (SignedRank, error) {
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return SignedRank{}, fmt.Errorf("paired: difference %d is %v; want a finite number", i, v)
		}
	}
	r := SignedRank{}
	var mags []float64
	var pos []bool
	for _, v := range x {
		if v == 0 {
			r.Zeros++
			continue
		}
		mags = append(mags, math.Abs(v))
		pos = append(pos, v > 0)
	}
	r.N = len(mags)
	if r.N == 0 {
		r.P = 1
		return r, nil
	}
	ranks := averageRanks(mags)
	for i, rk := range ranks {
		if pos[i] {
			r.V += rk
		}
	}
	if r.N <= ExactMaxN {
		r.P, r.Exact = exactP(ranks, r.V), true
	} else {
		r.P = normalP(ranks, r.V)
	}
	return r, nil
}

// MinP is the smallest two-sided p SignedRankTest can return for n non-zero
// differences: every sign alike. Exact, that is 2/2^n whatever the ties,
// since only one sign vector reaches the largest V; beyond ExactMaxN it is
// the normal approximation's p at that V with no ties.
func MinP(n int) float64 {
	if n <= 0 {
		return 1
	}
	ranks := make([]float64, n)
	total := 0.0
	for i := range ranks {
		ranks[i] = float64(i + 1)
		total += ranks[i]
	}
	if n <= ExactMaxN {
		return exactP(ranks, total)
	}
	return normalP(ranks, total)
}

// MinBlocks is the fewest blocks with which a family of family comparisons
// can declare anything at family-wise level alpha: the smallest n with
// family·MinP(n) ≤ alpha (see TooFew). It returns an error for an alpha
// outside (0, 1) or a family below one.
func MinBlocks(alpha float64, family int) (int, error) {
	if !(alpha > 0 && alpha < 1) || family < 1 {
		return 0, fmt.Errorf("paired: alpha %v, family %d; want alpha in (0, 1) and at least one comparison", alpha, family)
	}
	n := 1
	// MinP falls without bound as n grows, so this ends; past ExactMaxN it
	// falls faster than any alpha a report would use.
	for float64(family)*MinP(n) > alpha {
		n++
	}
	return n, nil
}

// averageRanks ranks the magnitudes 1..n, giving tied values the mean of the
// ranks they span.
func averageRanks(mags []float64) []float64 {
	idx := make([]int, len(mags))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmpFloat(mags[a], mags[b]) })
	ranks := make([]float64, len(mags))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && mags[idx[j+1]] == mags[idx[i]] {
			j++
		}
		avg := float64(i+j+2) / 2 // ranks i+1..j+1
		for k := i; k <= j; k++ {
			ranks[idx[k]] = avg
		}
		i = j + 1
	}
	return ranks
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// exactP is the two-sided p of V under the exact distribution of the
// signed-rank sum for these ranks. Average ranks are multiples of 1/2, so
// doubled they are integers and the distribution is a count over integer
// sums: counts[s] is the number of sign vectors whose doubled positive-rank
// sum is s, built one rank at a time (each either adds or does not).
func exactP(ranks []float64, v float64) float64 {
	twice := make([]int, len(ranks))
	total := 0
	for i, r := range ranks {
		twice[i] = int(math.Round(2 * r))
		total += twice[i]
	}
	counts := make([]float64, total+1)
	counts[0] = 1
	reach := 0
	for _, t := range twice {
		for s := reach; s >= 0; s-- {
			if counts[s] != 0 {
				counts[s+t] += counts[s]
			}
		}
		reach += t
	}
	obs := int(math.Round(2 * v))
	var lower, upper float64
	for s, c := range counts {
		if s <= obs {
			lower += c
		}
		if s >= obs {
			upper += c
		}
	}
	all := math.Ldexp(1, len(ranks))
	return math.Min(1, 2*math.Min(lower, upper)/all)
}

// normalP is the two-sided p of V under the normal approximation: mean
// n(n+1)/4, variance n(n+1)(2n+1)/24 − Σ(t³−t)/48 over groups of t tied
// ranks, and V moved 1/2 towards the mean.
func normalP(ranks []float64, v float64) float64 {
	n := float64(len(ranks))
	mean := n * (n + 1) / 4
	variance := n * (n + 1) * (2*n + 1) / 24
	sorted := slices.Clone(ranks)
	slices.Sort(sorted)
	for i := 0; i < len(sorted); {
		j := i
		for j+1 < len(sorted) && sorted[j+1] == sorted[i] {
			j++
		}
		t := float64(j - i + 1)
		variance -= (t*t*t - t) / 48
		i = j + 1
	}
	if variance <= 0 {
		return 1
	}
	d := v - mean
	switch {
	case d > 0:
		d = math.Max(0, d-0.5)
	case d < 0:
		d = math.Min(0, d+0.5)
	}
	z := d / math.Sqrt(variance)
	return math.Min(1, 2*distuv.UnitNormal.CDF(-math.Abs(z)))
}

var errNoValues = errors.New("paired: no blocks")
