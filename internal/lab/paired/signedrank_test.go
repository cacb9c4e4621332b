package paired

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func diffs(x, y []float64) []float64 {
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - y[i]
	}
	return d
}

// Hollander & Wolfe, Nonparametric Statistical Methods (1973), p. 29: the
// Hamilton depression scale before and after a tranquilliser, nine patients,
// no ties. R's wilcox.test(x, y, paired = TRUE, alternative = "greater")
// gives V = 40, p = 0.01953 (= 10/512); two-sided is twice that.
func TestSignedRankHollanderWolfe(t *testing.T) {
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	r, err := SignedRankTest(diffs(x, y))
	require.NoError(t, err)
	assert.Equal(t, 9, r.N)
	assert.Equal(t, 40.0, r.V)
	assert.True(t, r.Exact)
	assert.InDelta(t, 20.0/512, r.P, 1e-12)
}

// Bortz, Lienert & Boehnke's paired example with zeros and heavy ties, as
// discussed on r-help (2006-08, "exact Wilcoxon signed rank test with
// ties"): five zero differences dropped, ten left whose magnitudes tie in
// groups of 6, 2 and 2. exactRankTests::wilcox.exact (the exact permutation
// distribution of the average ranks) gives V = 13, p = 0.1367; R's
// wilcox.test with the normal approximation, tie and continuity correction
// gives p = 0.1436.
func TestSignedRankTiesExactAndNormal(t *testing.T) {
	x1 := []float64{9, 14, 8, 11, 14, 10, 8, 14, 12, 14, 13, 9, 15, 12, 9}
	x2 := []float64{13, 15, 9, 12, 16, 10, 8, 13, 12, 16, 9, 10, 16, 12, 9}
	d := diffs(x1, x2)
	r, err := SignedRankTest(d)
	require.NoError(t, err)
	assert.Equal(t, 10, r.N)
	assert.Equal(t, 5, r.Zeros)
	assert.Equal(t, 13.0, r.V)
	assert.True(t, r.Exact)
	assert.InDelta(t, 0.1367, r.P, 5e-5)

	var mags []float64
	for _, v := range d {
		if v != 0 {
			mags = append(mags, math.Abs(v))
		}
	}
	assert.InDelta(t, 0.1436, normalP(averageRanks(mags), r.V), 5e-5)
}

// Critical values of the signed-rank statistic T (the smaller rank sum): the
// largest T whose two-sided p is at most α, as in the standard tables of
// Wilcoxon, Katti & Wilcox, "Critical values and probability levels for the
// Wilcoxon rank sum test and the Wilcoxon signed rank test", Selected Tables
// in Mathematical Statistics vol. 1 (Harter & Owen, eds.), reproduced in the
// appendix tables of most statistics textbooks. −1: no T reaches α.
func TestSignedRankCriticalValueTable(t *testing.T) {
	table := map[float64][]int{ // index n−5, n = 5..30
		0.05: {-1, 0, 2, 3, 5, 8, 10, 13, 17, 21, 25, 29, 34, 40, 46, 52, 58, 65, 73, 81, 89, 98, 107, 116, 126, 137},
		0.01: {-1, -1, -1, 0, 1, 3, 5, 7, 9, 12, 15, 19, 23, 27, 32, 37, 42, 48, 54, 61, 68, 75, 83, 91, 100, 109},
	}
	for alpha, crit := range table {
		for i, want := range crit {
			n := i + 5
			ranks := make([]float64, n)
			for k := range ranks {
				ranks[k] = float64(k + 1)
			}
			got := -1
			for v := 0; v <= n*(n+1)/4; v++ {
				if exactP(ranks, float64(v)) <= alpha {
					got = v
				}
			}
			assert.Equal(t, want, got, "n=%d alpha=%v", n, alpha)
		}
	}
}

// The dynamic programme against brute force: every sign vector enumerated,
// on random data with ties and zeros.
func TestSignedRankExactMatchesEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(12)
		d := make([]float64, n)
		for i := range d {
			d[i] = float64(rng.IntN(9) - 4) // small integers: many ties, some zeros
		}
		r, err := SignedRankTest(d)
		require.NoError(t, err)
		if r.N == 0 {
			assert.Equal(t, 1.0, r.P)
			continue
		}
		var mags []float64
		for _, v := range d {
			if v != 0 {
				mags = append(mags, math.Abs(v))
			}
		}
		ranks := averageRanks(mags)
		var lower, upper int
		for signs := 0; signs < 1<<len(ranks); signs++ {
			v := 0.0
			for k, rk := range ranks {
				if signs&(1<<k) != 0 {
					v += rk
				}
			}
			if v <= r.V+1e-9 {
				lower++
			}
			if v >= r.V-1e-9 {
				upper++
			}
		}
		want := math.Min(1, 2*float64(min(lower, upper))/float64(int(1)<<len(ranks)))
		assert.InDelta(t, want, r.P, 1e-12, "d=%v", d)
	}
}

// Past ExactMaxN the normal approximation takes over; it should agree with
// the exact distribution there closely enough that the switch is invisible.
func TestSignedRankNormalNearExactAtSwitch(t *testing.T) {
	for _, n := range []int{ExactMaxN, ExactMaxN + 10} {
		ranks := make([]float64, n)
		total := 0.0
		for k := range ranks {
			ranks[k] = float64(k + 1)
			total += ranks[k]
		}
		for v := 0.0; v <= total; v += 7 {
			exact := exactP(ranks, v)
			tol := 0.01 // within a percentage point, as ExactMaxN's comment says
			if exact < 0.05 {
				tol = 0.002 // and closer where a verdict could turn on it
			}
			assert.InDelta(t, exact, normalP(ranks, v), tol, "n=%d v=%v", n, v)
		}
	}
	d := make([]float64, ExactMaxN+1)
	for i := range d {
		d[i] = float64(i+1) * math.Pow(-1, float64(i))
	}
	r, err := SignedRankTest(d)
	require.NoError(t, err)
	assert.False(t, r.Exact)
}

func TestMinP(t *testing.T) {
	for _, n := range []int{1, 2, 5, 8, ExactMaxN, ExactMaxN + 1, 50} {
		d := make([]float64, n)
		for i := range d {
			d[i] = float64(i + 1)
		}
		r, err := SignedRankTest(d)
		require.NoError(t, err)
		assert.Equal(t, r.P, MinP(n), "n=%d", n)
		if n <= ExactMaxN {
			assert.Equal(t, math.Min(1, 2/math.Ldexp(1, n)), MinP(n), "n=%d", n)
		}
	}
	// Ties do not change it: only one sign vector reaches the largest V.
	r, err := SignedRankTest([]float64{1, 1, 1, 2, 2, 3})
	require.NoError(t, err)
	assert.Equal(t, MinP(6), r.P)
	assert.Equal(t, 1.0, MinP(0))
}

// 2/2^n against α/family: 2/64 ≤ 0.05 but 2/32 is not; 2/256 ≤ 0.01;
// with seven comparisons 7·2/256 = 0.055 > 0.05 but 7·2/512 = 0.027.
func TestMinBlocks(t *testing.T) {
	for _, tc := range []struct {
		alpha          float64
		family, blocks int
	}{{0.05, 1, 6}, {0.01, 1, 8}, {0.05, 7, 9}, {0.05, 34, 11}} {
		n, err := MinBlocks(tc.alpha, tc.family)
		require.NoError(t, err)
		assert.Equal(t, tc.blocks, n, "alpha=%v family=%d", tc.alpha, tc.family)
	}
	for _, tc := range []struct {
		alpha  float64
		family int
	}{{0, 1}, {1, 1}, {math.NaN(), 1}, {0.05, 0}} {
		_, err := MinBlocks(tc.alpha, tc.family)
		assert.Error(t, err)
	}
}

func TestSignedRankBadInput(t *testing.T) {
	for _, d := range [][]float64{{1, math.NaN()}, {math.Inf(1), 2}} {
		_, err := SignedRankTest(d)
		assert.Error(t, err)
	}
	r, err := SignedRankTest([]float64{0, 0})
	require.NoError(t, err)
	assert.Equal(t, SignedRank{Zeros: 2, P: 1}, r)
}
