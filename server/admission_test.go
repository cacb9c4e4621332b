package server

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/store"
)

// holding is a machine whose Apply announces each command and waits for
// release: a test decides how many calls are inside the store. applied is
// read after Close.
type holding struct {
	entered chan int
	release chan struct{}
	applied []int
}

func (h *holding) Apply(cmd int) (int, error) {
	h.entered <- cmd
	<-h.release
	h.applied = append(h.applied, cmd)
	return cmd, nil
}

// TestInflightBound: with max calls inside the store, one more is refused
// at once with ErrOverloaded and never reaches the machine; the accepted
// calls all complete; once one leaves, a call is admitted again. The
// control: the same store without a bound lets the extra call in.
func TestInflightBound(t *testing.T) {
	const max = 2
	for _, bounded := range []bool{true, false} {
		t.Run(map[bool]string{true: "bounded", false: "control: unbounded"}[bounded], func(t *testing.T) {
			h := &holding{entered: make(chan int, 16), release: make(chan struct{})}
			inner, err := store.New("mutex", store.Machine[int, int](h), store.Config{})
			require.NoError(t, err)
			var in *inflight
			if bounded {
				in = newInflight(max)
			}
			s := bound(inner, in)
			var wg sync.WaitGroup
			errs := make(chan error, max+1)
			for cmd := range max {
				wg.Go(func() {
					_, err := s.Do(context.Background(), cmd)
					errs <- err
				})
			}
			// One is applying, the other waits for the lock: both inside.
			<-h.entered
			require.Eventually(t, func() bool { return !bounded || in.n.Load() == max }, 10*time.Second, time.Millisecond)

			extra := make(chan error, 1)
			wg.Go(func() {
				_, err := s.Do(context.Background(), 99)
				extra <- err
			})
			if bounded {
				select {
				case err := <-extra:
					require.ErrorIs(t, err, store.ErrOverloaded)
					assert.Contains(t, err.Error(), "-max-inflight 2")
					assert.Equal(t, codes.ResourceExhausted, status.Code(toStatus(err)))
				case <-time.After(10 * time.Second):
					t.Fatal("the call over the bound was not refused at once")
				}
			}
			close(h.release)
			wg.Wait()
			close(errs)
			for err := range errs {
				assert.NoError(t, err, "an accepted call failed")
			}
			if !bounded {
				require.NoError(t, <-extra, "without a bound the extra call is served")
			}
			if bounded {
				_, err := s.Do(context.Background(), 7)
				require.NoError(t, err, "the bound frees as calls leave")
				assert.Zero(t, in.n.Load())
			}
			require.NoError(t, s.Close())
			want := []int{0, 1}
			if bounded {
				want = append(want, 7)
			} else {
				want = append(want, 99)
			}
			assert.ElementsMatch(t, want, h.applied, "the refused call never reached the machine")
		})
	}
}

// TestMaxInflightEndToEnd: over gRPC, calls beyond -max-inflight are
// answered RESOURCE_EXHAUSTED, and the counter holds exactly the accepted
// increments, for a lock design and an owner design alike.
func TestMaxInflightEndToEnd(t *testing.T) {
	const callers = 4
	for _, mode := range []string{"mutex", "inputQ"} {
		t.Run(mode, func(t *testing.T) {
			// Each accepted increment stays in the store for 200 ms: the
			// callers started together find the one bound taken.
			ts := startServer(t, Config{Mode: mode, MaxInflight: 1, Work: 200 * time.Millisecond})
			ts.reset(t, pb.Scenario_SCENARIO_A, 0, 0)
			var wg sync.WaitGroup
			codesSeen := make(chan error, callers)
			for range callers {
				wg.Go(func() {
					_, err := ts.counter.Increment(t.Context(), &pb.IncrementRequest{Delta: 1})
					codesSeen <- err
				})
			}
			wg.Wait()
			close(codesSeen)
			var ok, refused int64
			for err := range codesSeen {
				switch status.Code(err) {
				case codes.OK:
					ok++
				case codes.ResourceExhausted:
					refused++
					assert.Contains(t, status.Convert(err).Message(), "-max-inflight 1")
				default:
					t.Errorf("unexpected answer %v", err)
				}
			}
			assert.Positive(t, ok)
			assert.Positive(t, refused, "four callers at once over a bound of one")
			s := ts.stats(t)
			assert.Equal(t, ok, s.GetCounterValue(), "every accepted increment applied, no refused one")
			assert.Equal(t, uint64(refused), s.GetRpcCounts()["/locklab.v1.CounterService/Increment"].GetCodes()[codes.ResourceExhausted.String()])
		})
	}
}

func TestMaxInflightRefused(t *testing.T) {
	_, err := New(Config{Mode: "mutex", MaxInflight: -1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "max inflight -1")
}
