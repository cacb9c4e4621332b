package server

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
)

// TestCallWorkSpinsInDataCallsOnly: every data call spins once before its
// handler; an admin call, the control, does not.
func TestCallWorkSpinsInDataCallsOnly(t *testing.T) {
	data := "/locklab.v1.CounterService/Increment"
	c := newCallWork(time.Microsecond, []string{data}, spinCost)
	spins, handled := 0, 0
	c.spin = func() {
		spins++
		assert.Equal(t, 0, handled-spins+1, "the spin comes before the handler")
	}
	handler := func(context.Context, any) (any, error) { handled++; return nil, nil }
	for range 3 {
		_, err := c.unary(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: data}, handler)
		require.NoError(t, err)
	}
	_, err := c.unary(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/locklab.v1.AdminService/GetStats"}, handler)
	require.NoError(t, err)
	assert.Equal(t, 3, spins)
	assert.Equal(t, 4, handled)
}

// TestCallWorkRefusesANegativeDuration.
func TestCallWorkRefusesANegativeDuration(t *testing.T) {
	_, err := New(Config{Mode: "mutex", CallWork: -time.Microsecond})
	assert.ErrorContains(t, err, "call work")
}

// TestEveryServerRunsTheCallWorkInterceptor: a server without call work
// has the interceptor too, looking every call up and spinning in none, so
// that the known answer's arm differs from its baseline by the spin alone;
// the control, a server with call work, spins in its data calls.
func TestEveryServerRunsTheCallWorkInterceptor(t *testing.T) {
	for _, d := range []time.Duration{0, time.Microsecond} {
		s, err := New(Config{Mode: "mutex", CallWork: d})
		require.NoError(t, err)
		t.Cleanup(func() { s.Stop(context.Background()) })
		require.NotNil(t, s.work, "%v: the interceptor is in the chain", d)
		assert.Equal(t, d > 0, s.work.spin != nil, "%v: it spins only with call work", d)
		assert.NotEmpty(t, s.work.data, "%v: it knows the data calls either way", d)
	}
	c := newCallWork(0, []string{"/locklab.v1.CounterService/Increment"}, spinCost)
	handled := 0
	_, err := c.unary(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/locklab.v1.CounterService/Increment"},
		func(context.Context, any) (any, error) { handled++; return nil, nil })
	require.NoError(t, err)
	assert.Equal(t, 1, handled, "without call work a data call goes straight to its handler")
}

// TestSpinTargetTakesTheExcessAway: a spin whose cost runs 100 ns past the
// time it waits for, and 1% more the longer it waits, is set to wait for
// its length less that excess, so that its cost is its length; a spin that
// costs what it waits for, the control, waits for its whole length, and a
// length shorter than the excess waits for none.
func TestSpinTargetTakesTheExcessAway(t *testing.T) {
	over := func(t time.Duration) time.Duration { return t + t/100 + 100*time.Nanosecond }
	d := 2 * time.Microsecond
	got := spinTarget(d, over)
	assert.InDelta(t, float64(d), float64(over(got)), 2, "the spin costs its length, within a nanosecond or two")
	assert.Less(t, got, d-100*time.Nanosecond)
	assert.Equal(t, d, spinTarget(d, func(t time.Duration) time.Duration { return t }), "the control: no excess, nothing taken away")
	assert.Equal(t, time.Duration(0), spinTarget(50*time.Nanosecond, over), "never below zero")
}

// TestCallWorkWaitsLessItsExcess: a server's spin waits for its length
// less what the measured cost says a spin costs beyond it; with a cost of
// no excess, the control, it waits for the whole length, and without call
// work nothing is measured.
func TestCallWorkWaitsLessItsExcess(t *testing.T) {
	d := 2 * time.Microsecond
	over := func(t time.Duration) time.Duration { return t + 120*time.Nanosecond }
	assert.Equal(t, d-120*time.Nanosecond, newCallWork(d, nil, over).wait)
	assert.Equal(t, d, newCallWork(d, nil, func(t time.Duration) time.Duration { return t }).wait)
	none := newCallWork(0, nil, func(time.Duration) time.Duration { panic("measured without call work") })
	assert.Nil(t, none.spin)
}
