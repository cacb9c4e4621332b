package paired

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Differences 1, 2, 3 µs: mean 2, SD 1, n = 3; t(0.975, 2) = 4.303 from a
// printed t table, so the half-width is 4.303·1/√3 = 2.4843.
func TestEstimateDifferenceWorkedExample(t *testing.T) {
	d, err := Differences([]float64{11, 0, 23}, []float64{10, -2, 20})
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3}, d)
	e, err := EstimateDifference(d)
	require.NoError(t, err)
	assert.Equal(t, 3, e.N)
	assert.InDelta(t, 2, e.Mean, 1e-12)
	assert.InDelta(t, 2, e.Median, 1e-12)
	assert.InDelta(t, 1, e.SD, 1e-12)
	assert.InDelta(t, 2-2.4843, e.Lo, 1e-3)
	assert.InDelta(t, 2+2.4843, e.Hi, 1e-3)
	assert.True(t, e.Contains(0))

	// The control: the same spread around a larger mean leaves 0 outside.
	e, err = EstimateDifference([]float64{9, 10, 11})
	require.NoError(t, err)
	assert.False(t, e.Contains(0))

	e, err = EstimateDifference([]float64{-0.5})
	require.NoError(t, err)
	assert.Equal(t, Difference{N: 1, Mean: -0.5, Median: -0.5, Lo: math.Inf(-1), Hi: math.Inf(1)}, e)
}

// Zeros are what a ratio cannot take and a difference must: a category a
// design never enters.
func TestDifferencesTakeZeros(t *testing.T) {
	d, err := Differences([]float64{0, 0.4}, []float64{0.3, 0})
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{-0.3, 0.4}, d, 1e-12)
	_, err = Ratios([]float64{0, 0.4}, []float64{0.3, 0})
	assert.Error(t, err, "the control: the same values have no ratios")
}

// The mean difference of a sum is the sum of its parts' mean differences:
// what lets the report split a design's extra CPU among categories.
func TestDifferencesAdd(t *testing.T) {
	a := []float64{1, 2, 4}
	b := []float64{0.5, 0.1, 3}
	sum := []float64{a[0] + b[0], a[1] + b[1], a[2] + b[2]}
	zero := []float64{0, 0, 0}
	mean := func(x []float64) float64 {
		d, err := Differences(x, zero)
		require.NoError(t, err)
		e, err := EstimateDifference(d)
		require.NoError(t, err)
		return e.Mean
	}
	assert.InDelta(t, mean(a)+mean(b), mean(sum), 1e-12)
}

func TestDifferencesBadInput(t *testing.T) {
	for _, tc := range []struct{ tr, b []float64 }{
		{[]float64{1, 2}, []float64{1}},
		{nil, nil},
		{[]float64{math.NaN()}, []float64{1}},
		{[]float64{1}, []float64{math.Inf(-1)}},
	} {
		_, err := Differences(tc.tr, tc.b)
		assert.Error(t, err, "%v − %v", tc.tr, tc.b)
	}
	_, err := EstimateDifference(nil)
	assert.Error(t, err)
	_, err = EstimateDifference([]float64{1, math.Inf(1)})
	assert.Error(t, err)
}

// TestEstimateDifferenceAt: a higher level gives a wider interval about
// the same mean; Confidence is EstimateDifference's; a level outside
// (0, 1) is refused.
func TestEstimateDifferenceAt(t *testing.T) {
	d := []float64{9, 10, 11, 12, 8}
	at95, err := EstimateDifference(d)
	require.NoError(t, err)
	same, err := EstimateDifferenceAt(d, Confidence)
	require.NoError(t, err)
	assert.Equal(t, at95, same)
	at99, err := EstimateDifferenceAt(d, 0.99)
	require.NoError(t, err)
	assert.Equal(t, at95.Mean, at99.Mean)
	assert.Less(t, at99.Lo, at95.Lo)
	assert.Greater(t, at99.Hi, at95.Hi)
	for _, level := range []float64{0, 1, -0.5, math.NaN()} {
		_, err := EstimateDifferenceAt(d, level)
		assert.Error(t, err, "level %v", level)
	}
}
