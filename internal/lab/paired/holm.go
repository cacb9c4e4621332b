package paired

import (
	"fmt"
	"math"
	"slices"
)

// Holm returns Holm–Bonferroni adjusted p-values for one family of tests, in
// the order given: with the raw p sorted ascending as p(1) ≤ … ≤ p(m), the
// adjusted p(k) is max over j ≤ k of min(1, (m−j+1)·p(j)). A test is declared
// at family-wise level α exactly when its adjusted p ≤ α, which is Holm's
// step-down procedure; it assumes nothing about dependence between the tests.
func Holm(p []float64) ([]float64, error) {
	for i, v := range p {
		if math.IsNaN(v) || v < 0 || v > 1 {
			return nil, fmt.Errorf("paired: p-value %d is %v; want one in [0, 1]", i, v)
		}
	}
	m := len(p)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	// Stable, so equal p keep their given order and the result is
	// deterministic; the adjusted values of equal p come out equal anyway.
	slices.SortStableFunc(idx, func(a, b int) int { return cmpFloat(p[a], p[b]) })
	adj := make([]float64, m)
	running := 0.0
	for k, i := range idx {
		running = math.Max(running, math.Min(1, float64(m-k)*p[i]))
		adj[i] = running
	}
	return adj, nil
}
