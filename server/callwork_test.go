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
	c := newCallWork(time.Microsecond, []string{data})
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

// TestCallWorkRefusesANegativeDuration, and zero adds no interceptor.
func TestCallWorkRefusesANegativeDuration(t *testing.T) {
	_, err := New(Config{Mode: "mutex", CallWork: -time.Microsecond})
	assert.ErrorContains(t, err, "call work")
	s, err := New(Config{Mode: "mutex"})
	require.NoError(t, err)
	s.Stop(context.Background())
}
