package paired

import (
	"math/bits"
	"math/rand/v2"
	"slices"
)

// Order returns the designs in the order block runs them: a uniformly random
// permutation drawn from a PCG stream keyed by (seed, block), so a recorded
// seed reproduces every block's order, and each block's order is independent
// of the others'. The input is not modified.
//
// The shuffle is written out here (Fisher–Yates over PCG's 64-bit outputs,
// with Lemire's unbiased bounded draw) rather than taken from math/rand/v2's
// Shuffle, whose algorithm the Go project may change; PCG's output sequence
// is specified, so recorded seeds stay valid across Go releases.
func Order(seed, block int, designs []string) []string {
	out := slices.Clone(designs)
	src := rand.NewPCG(uint64(seed), uint64(block))
	for i := len(out) - 1; i > 0; i-- {
		j := bounded(src, uint64(i+1))
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// bounded draws uniformly from [0, n) (Lemire, "Fast random integer
// generation in an interval", 2019).
func bounded(src *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		threshold := -n % n
		for lo < threshold {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}
