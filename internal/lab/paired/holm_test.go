package paired

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Worked examples. The first is Holm's procedure as usually illustrated
// (four hypotheses at α = 0.05: thresholds 0.0125, 0.0167, 0.025, 0.05 —
// the two smallest are rejected, the third stops the procedure); the
// adjusted values are R's p.adjust(p, "holm") for the same p.
func TestHolmWorkedExamples(t *testing.T) {
	for _, tc := range []struct{ p, want []float64 }{
		{[]float64{0.01, 0.04, 0.03, 0.005}, []float64{0.03, 0.06, 0.06, 0.02}},
		// Monotonicity: 2·0.04 = 0.08 is raised to the 0.09 before it.
		{[]float64{0.01, 0.02, 0.03, 0.04, 0.05}, []float64{0.05, 0.08, 0.09, 0.09, 0.09}},
		// Capped at 1; equal p adjust equally.
		{[]float64{0.5, 0.5, 0.001}, []float64{1, 1, 0.003}},
		{[]float64{0.2}, []float64{0.2}},
		{nil, []float64{}},
	} {
		got, err := Holm(tc.p)
		require.NoError(t, err)
		assert.InDeltaSlice(t, tc.want, got, 1e-12, "p=%v", tc.p)
	}
}

func TestHolmBadInput(t *testing.T) {
	for _, p := range [][]float64{{0.1, -0.1}, {1.5}, {math.NaN()}} {
		_, err := Holm(p)
		assert.Error(t, err, "p=%v", p)
	}
}
