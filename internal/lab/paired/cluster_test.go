package paired

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClusters(t *testing.T) {
	tests := []struct {
		name string
		runs []float64
		want []Cluster
	}{
		{"the bimodal owner row", []float64{836, 817, 201, 202, 203, 208},
			[]Cluster{{N: 4, Median: 202.5}, {N: 2, Median: 826.5}}},
		{"order of the runs does not matter", []float64{201, 836, 202, 817, 208, 203},
			[]Cluster{{N: 4, Median: 202.5}, {N: 2, Median: 826.5}}},
		{"three and seven", []float64{100, 101, 99, 100, 102, 98, 100, 300, 310, 305},
			[]Cluster{{N: 7, Median: 100}, {N: 3, Median: 305}}},
		// Controls: rows the rule must leave whole.
		{"control: unimodal", []float64{200, 204, 198, 210, 202, 207, 199, 201, 203, 205}, nil},
		{"control: one outlier is not a cluster", []float64{200, 201, 202, 203, 204, 800}, nil},
		{"control: the gap is no wider than the spread", []float64{100, 120, 140, 200, 230, 260}, nil},
		{"control: a wide gap between runs a few percent apart", []float64{100, 100, 100, 105, 105, 105}, nil},
		{"control: too few runs", []float64{100, 101, 400}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Clusters(tt.runs))
		})
	}
}

// TestClustersRareOnUnimodalNoise: rows of ten runs drawn from one
// log-normal regime (5% and 20% spread) split in under 1% of cases, while
// the same rows with two regimes 4× apart split every time.
func TestClustersRareOnUnimodalNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const rows, runs = 2000, 10
	draw := func(sigma float64, slow int) []float64 {
		xs := make([]float64, runs)
		for i := range xs {
			xs[i] = 200 * math.Exp(sigma*rng.NormFloat64())
			if i < slow {
				xs[i] *= 4
			}
		}
		return xs
	}
	for _, sigma := range []float64{0.05, 0.2} {
		split, found := 0, 0
		for range rows {
			if Clusters(draw(sigma, 0)) != nil {
				split++
			}
			if c := Clusters(draw(sigma/4, 3)); len(c) == 2 && c[1].N == 3 {
				found++
			}
		}
		assert.Less(t, float64(split)/rows, 0.01, "sigma %v: unimodal rows split", sigma)
		assert.Equal(t, rows, found, "sigma %v: bimodal rows found", sigma)
	}
}
