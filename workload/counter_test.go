package workload_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/workload"
)

// counterAt returns a counter holding v, reached through the public ops only.
func counterAt(t *testing.T, v int64) *workload.Counter {
	t.Helper()
	c := workload.NewCounter()
	got, err := c.Apply(workload.CounterCmd{Op: workload.CounterIncrement, Delta: v})
	require.NoError(t, err)
	require.Equal(t, v, got)
	return c
}

func counterValue(t *testing.T, c *workload.Counter) int64 {
	t.Helper()
	v, err := c.Apply(workload.CounterCmd{Op: workload.CounterGet})
	require.NoError(t, err)
	return v
}

func TestCounterIncrement(t *testing.T) {
	tests := []struct {
		name    string
		start   int64
		delta   int64
		want    int64
		wantErr error // a kind sentinel; nil for success
		wantIs  error // the specific error, when wantErr is set
	}{
		{name: "from zero", start: 0, delta: 5, want: 5},
		{name: "delta zero is allowed", start: 7, delta: 0, want: 7},
		{name: "up to MaxInt64 exactly", start: math.MaxInt64 - 1, delta: 1, want: math.MaxInt64},
		{name: "zero delta at MaxInt64", start: math.MaxInt64, delta: 0, want: math.MaxInt64},
		{name: "negative delta", start: 3, delta: -1, wantErr: workload.ErrInvalid, wantIs: workload.ErrNegativeDelta},
		{name: "MinInt64 delta", start: 3, delta: math.MinInt64, wantErr: workload.ErrInvalid, wantIs: workload.ErrNegativeDelta},
		{name: "overflow by one", start: math.MaxInt64, delta: 1, wantErr: workload.ErrOverflow, wantIs: workload.ErrCounterOverflow},
		{name: "overflow by a lot", start: 10, delta: math.MaxInt64, wantErr: workload.ErrOverflow, wantIs: workload.ErrCounterOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := counterAt(t, tt.start)
			got, err := c.Apply(workload.CounterCmd{Op: workload.CounterIncrement, Delta: tt.delta})
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				assert.ErrorIs(t, err, tt.wantIs)
				assert.Equal(t, tt.start, counterValue(t, c), "a refused increment must leave the counter unchanged")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got, "Increment returns the new value")
			assert.Equal(t, tt.want, counterValue(t, c))
		})
	}
}

func TestCounterOps(t *testing.T) {
	c := workload.NewCounter()
	assert.Equal(t, int64(0), counterValue(t, c), "a new counter is 0")

	for _, d := range []int64{1, 2, 3} {
		_, err := c.Apply(workload.CounterCmd{Op: workload.CounterIncrement, Delta: d})
		require.NoError(t, err)
	}
	assert.Equal(t, int64(6), counterValue(t, c))

	got, err := c.Apply(workload.CounterCmd{Op: workload.CounterReset})
	require.NoError(t, err)
	assert.Equal(t, int64(0), got)
	assert.Equal(t, int64(0), counterValue(t, c))

	for _, op := range []workload.CounterOp{0, 99} {
		c := counterAt(t, 4)
		_, err := c.Apply(workload.CounterCmd{Op: op, Delta: 1})
		assert.ErrorIs(t, err, workload.ErrInvalid, "op %d", op)
		assert.ErrorIs(t, err, workload.ErrUnknownOp, "op %d", op)
		assert.Equal(t, int64(4), counterValue(t, c), "an unknown op changes nothing")
	}
}
