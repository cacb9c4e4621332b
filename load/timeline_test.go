package load_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/locklab/locklab/load"
	pb "github.com/locklab/locklab/proto/locklab/v1"
)

// TestTimelineShowsAStallAndItsEnd: a server that stalls once shows, in
// the timeline, intervals whose p99 holds the stall and later ones back to
// normal, and the intervals add up to the run. The control is the same run
// without -timeline: no intervals.
func TestTimelineShowsAStallAndItsEnd(t *testing.T) {
	const stall = 300 * time.Millisecond
	fake := stallingCounter{armAt: time.Now().Add(300 * time.Millisecond), stall: stall, stalled: new(atomic.Bool)}
	addr := startFake(t, func(g *grpc.Server) { pb.RegisterCounterServiceServer(g, fake) }, nil)
	cfg := quick(addr, "counter")
	cfg.Model, cfg.Callers, cfg.Rate = "open", 1, 200
	// Long enough past the stall that the calls queued behind it have
	// drained by the last interval, on a slow machine too (1.2 s left the
	// last at 248 ms on a slow, shared VM).
	cfg.Warmup, cfg.Duration, cfg.Timeline = 100*time.Millisecond, 2*time.Second, 100*time.Millisecond
	s, err := load.Run(t.Context(), cfg)
	require.NoError(t, err)
	require.True(t, fake.stalled.Load(), "the stall happened")
	require.Len(t, s.Timeline, 20)
	var calls int64
	slow := -1
	for i, p := range s.Timeline {
		calls += p.Calls
		assert.InDelta(t, 0.1*float64(i), p.StartS, 1e-9)
		if p.P99Ms > 150 && slow < 0 {
			slow = i
		}
	}
	assert.Equal(t, s.Calls, calls, "the intervals add up to the run")
	require.GreaterOrEqual(t, slow, 0, "an interval holds the stall")
	last := s.Timeline[len(s.Timeline)-1]
	assert.Less(t, last.P99Ms, 150.0, "the last interval is past it")
	require.NotNil(t, s.LatencyOKMs)
	// Half the stall at least: the stall may begin in the warm-up, whose
	// calls are not counted, when the machine is slow to start the run.
	assert.Greater(t, s.LatencyOKMs.Max, float64(stall.Milliseconds())/2, "every call was OK: the OK latency holds the stall too")

	cfg.Timeline = 0
	s, err = load.Run(t.Context(), cfg)
	require.NoError(t, err)
	assert.Empty(t, s.Timeline)
}

func TestTimelineRejectsTooManyIntervals(t *testing.T) {
	cfg := quick("127.0.0.1:1", "counter")
	cfg.Timeline = time.Microsecond
	assert.ErrorContains(t, cfg.Validate(), "timeline")
	cfg = quick("127.0.0.1:1", "counter")
	cfg.Timeline = -time.Second
	assert.ErrorContains(t, cfg.Validate(), "timeline")
}
