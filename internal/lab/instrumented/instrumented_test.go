package instrumented

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runs are one run per block, in the order given, each with its figure
// (carried as the level, which the figure below reads).
func runs(byBlock map[int]float64, order ...int) []*record.Run {
	var out []*record.Run
	for _, b := range order {
		out = append(out, &record.Run{Spec: plan.Spec{Rep: b, Level: int(byBlock[b])}})
	}
	return out
}

func figure(r *record.Run) (float64, error) { return float64(r.Level), nil }

// TestPairedDifferencePairsByBlock: two designs' runs pair by block,
// whatever their order, and a block only one of them has is left out; the
// control, runs with no block in common, gives no difference.
func TestPairedDifferencePairsByBlock(t *testing.T) {
	d := runs(map[int]float64{1: 10, 2: 20, 3: 30}, 1, 2, 3)
	a := runs(map[int]float64{2: 15, 3: 28, 4: 99}, 4, 3, 2)
	e, ok, err := PairedDifference(d, a, figure)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 2, e.N, "blocks 2 and 3")
	assert.InDelta(t, (5.0+2.0)/2, e.Mean, 1e-9)

	_, ok, err = PairedDifference(d, runs(map[int]float64{7: 1}, 7), figure)
	require.NoError(t, err)
	assert.False(t, ok, "the control: no block in common")
}

// TestSignedDifferences: a difference prints with its sign (a true minus),
// none on what prints as zero, and says when one block gave no interval.
func TestSignedDifferences(t *testing.T) {
	tests := []struct {
		e    paired.Difference
		want string
	}{
		{paired.Difference{N: 5, Mean: 2, Lo: 1, Hi: 3}, "+2.0% [+1.0%, +3.0%]"},
		{paired.Difference{N: 5, Mean: -2.5, Lo: -4, Hi: -1}, "−2.5% [−4.0%, −1.0%]"},
		{paired.Difference{N: 5, Mean: 0.01, Lo: -0.02, Hi: 0.03}, "0.0%"},
		{paired.Difference{N: 1, Mean: 2, Lo: math.Inf(-1), Hi: math.Inf(1)}, "+2.0% [no interval: one block]"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, FmtDifference(tt.e, report.UnitPercent))
	}
	assert.Equal(t, "0.0%", Signed(-0.01, report.UnitPercent), "no sign on a zero")
}
