package load

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Zipf draws ranks 0..n-1 with P(rank i) proportional to 1/(i+1)^θ, for
// 0 <= θ < 1: θ = 0 is uniform, θ = 0.99 is YCSB's "hot" default (its most
// popular item gets about 9% of 1000 items' draws). math/rand/v2's Zipf needs
// s > 1, the wrong regime for key skew, so this is the generator of Gray et
// al., "Quickly generating billion-record synthetic databases" (SIGMOD 1994),
// as YCSB's ZipfianGenerator implements it: O(n) set-up (ζ(n,θ)), O(1) per
// draw. k6/lib/workloads.js has the same generator, so both drivers skew
// alike.
type Zipf struct {
	n                       int
	theta                   float64
	alpha, zetan, eta, half float64
}

// NewZipf returns a generator over n >= 1 ranks with skew θ in [0, 1).
func NewZipf(n int, theta float64) (*Zipf, error) {
	if n < 1 {
		return nil, fmt.Errorf("load: zipf over %d items: want at least 1", n)
	}
	if !(theta >= 0 && theta < 1) {
		return nil, fmt.Errorf("load: zipf skew %v: want 0 <= θ < 1", theta)
	}
	z := &Zipf{n: n, theta: theta}
	if theta == 0 || n == 1 {
		return z, nil
	}
	z.zetan = zeta(n, theta)
	zeta2 := zeta(2, theta)
	z.alpha = 1 / (1 - theta)
	z.eta = (1 - math.Pow(2/float64(n), 1-theta)) / (1 - zeta2/z.zetan)
	z.half = 1 + math.Pow(0.5, theta)
	return z, nil
}

func zeta(n int, theta float64) float64 {
	s := 0.0
	for i := 1; i <= n; i++ {
		s += 1 / math.Pow(float64(i), theta)
	}
	return s
}

// N is the number of ranks.
func (z *Zipf) N() int { return z.n }

// Next draws a rank in 0..N()-1; rank 0 is the most popular.
func (z *Zipf) Next(r *rand.Rand) int {
	if z.theta == 0 || z.n == 1 {
		return r.IntN(z.n)
	}
	return z.rank(r.Float64())
}

// rank maps a uniform u in [0,1) to a rank.
func (z *Zipf) rank(u float64) int {
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < z.half {
		return 1
	}
	i := int(float64(z.n) * math.Pow(z.eta*u-z.eta+1, z.alpha))
	return min(i, z.n-1)
}
