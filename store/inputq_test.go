package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests reach inside InputQ to know when a caller is where the test
// needs it: len(q.engine().box.q) counts accepted commands waiting for the owner, and
// inFlight counts callers still trying to put a command into a full queue.

// inFlight is the number of Do calls that passed the closed check and have not
// yet been accepted or given up.
func (q *InputQ[C, R]) inFlight() int64 { return q.engine().gate.state.Load() &^ closedBit }

// engine is the InputQ's owner machinery.
func (q *InputQ[C, R]) engine() *inputQEngine { return q.eng.(*inputQEngine) }

type outcome struct {
	cmd int
	r   int
	err error
}

// goDo starts Do(ctx, cmd) in a goroutine that reports on out.
func goDo(ctx context.Context, q *InputQ[int, int], cmd int, out chan<- outcome) {
	go func() {
		r, err := q.Do(ctx, cmd)
		out <- outcome{cmd, r, err}
	}()
}

// holdOwner makes the owner of q (over g) take cmd and stay inside Apply
// until g.release is closed.
func holdOwner(t *testing.T, q *InputQ[int, int], g *gate, cmd int, ctx context.Context, out chan<- outcome) {
	t.Helper()
	goDo(ctx, q, cmd, out)
	require.Equal(t, cmd, within(t, g.entered, "the owner did not take the command"))
}

// fillQueue sends cmds from separate callers and waits until all are accepted.
func fillQueue(t *testing.T, q *InputQ[int, int], cmds []int, ctx context.Context, out chan<- outcome) {
	t.Helper()
	for _, c := range cmds {
		goDo(ctx, q, c, out)
	}
	waitFor(t, func() bool { return len(q.engine().box.q) == len(cmds) }, "%d commands accepted", len(cmds))
}

// blockSenders starts callers that find the queue full, and waits until all
// are blocked in their send.
func blockSenders(t *testing.T, q *InputQ[int, int], cmds []int, ctx context.Context, out chan<- outcome) {
	t.Helper()
	for _, c := range cmds {
		goDo(ctx, q, c, out)
	}
	waitFor(t, func() bool { return q.inFlight() == int64(len(cmds)) }, "%d callers blocked on a full queue", len(cmds))
}

func span(from, to int) []int {
	var s []int
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

// TestInputQCloseWhileCallersWait: with the owner stuck in Apply and the queue
// full, Close makes the blocked callers give up at once with ErrClosed and
// their commands are never applied; every accepted command is still applied
// and answered; Close returns only after the owner has exited.
func TestInputQCloseWhileCallersWait(t *testing.T) {
	for _, size := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("queue=%d", size), func(t *testing.T) {
			ctx := context.Background()
			g := newGate()
			q := NewInputQ[int, int](g, WithQueueSize(size))
			out := make(chan outcome, 100)

			holdOwner(t, q, g, 0, ctx, out)
			accepted := span(0, size)
			fillQueue(t, q, accepted[1:], ctx, out)
			blocked := span(size+1, size+3)
			blockSenders(t, q, blocked, ctx, out)

			closed := make(chan error, 1)
			go func() { closed <- q.Close() }()
			var gaveUp []int
			for range blocked {
				o := within(t, out, "a blocked caller did not give up")
				assert.ErrorIs(t, o.err, ErrClosed, "cmd %d", o.cmd)
				gaveUp = append(gaveUp, o.cmd)
			}
			assert.ElementsMatch(t, blocked, gaveUp, "only the blocked callers give up")
			_, err := q.Do(ctx, 99)
			assert.ErrorIs(t, err, ErrClosed, "Do while closing")
			notYet(t, closed, "Close returned while the owner was still applying")

			close(g.release)
			require.NoError(t, within(t, closed, "Close did not return"))
			select {
			case <-q.engine().box.done:
			default:
				t.Fatal("Close returned before the owner goroutine exited")
			}
			var answered []int
			for range accepted {
				o := within(t, out, "an accepted caller got no reply")
				assert.NoError(t, o.err, "cmd %d", o.cmd)
				assert.Equal(t, o.cmd*10, o.r, "cmd %d got another command's reply", o.cmd)
				answered = append(answered, o.cmd)
			}
			assert.ElementsMatch(t, accepted, answered)
			assert.Equal(t, 0, g.applied[0])
			assert.ElementsMatch(t, accepted, g.applied, "exactly the accepted commands are applied, once each")
		})
	}
}

// TestInputQCtxEndsBeforeAcceptance: a caller blocked on a full queue whose
// context ends gets ctx.Err(), and its command is never applied, even after
// the owner makes room.
func TestInputQCtxEndsBeforeAcceptance(t *testing.T) {
	tests := []struct {
		name    string
		ctx     func(t *testing.T) (context.Context, func())
		wantErr error
	}{
		{"cancel", func(t *testing.T) (context.Context, func()) {
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			return ctx, cancel
		}, context.Canceled},
		{"deadline", func(t *testing.T) (context.Context, func()) {
			// Long enough for blockSenders to see the caller blocked.
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			t.Cleanup(cancel)
			return ctx, func() {} // the deadline ends it
		}, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bg := context.Background()
			g := newGate()
			q := NewInputQ[int, int](g, WithQueueSize(1))
			defer q.Close()
			out := make(chan outcome, 10)
			holdOwner(t, q, g, 0, bg, out)
			fillQueue(t, q, []int{1}, bg, out)
			ctx, end := tt.ctx(t)
			blockSenders(t, q, []int{2}, ctx, out)

			end()
			o := within(t, out, "the blocked caller did not give up when its context ended")
			assert.Equal(t, outcome{cmd: 2, err: tt.wantErr}, o)
			assert.Zero(t, q.inFlight())

			close(g.release)
			for range 2 {
				o := within(t, out, "an accepted caller got no reply")
				assert.Equal(t, outcome{cmd: o.cmd, r: o.cmd * 10}, o)
			}
			require.NoError(t, q.Close())
			assert.Equal(t, []int{0, 1}, g.applied, "the command whose context ended first must never be applied")
		})
	}
}

// TestInputQCtxEndsAfterAcceptance: once accepted, a command is applied even if
// its caller stops waiting (the documented behaviour), and the abandoned reply
// never reaches another caller.
func TestInputQCtxEndsAfterAcceptance(t *testing.T) {
	tests := []struct {
		name    string
		cancels int // 0: the command the owner holds; 1: the one waiting in the queue
	}{
		{"taken by the owner", 0},
		{"waiting in the queue", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bg := context.Background()
			ctx, cancel := context.WithCancel(bg)
			defer cancel()
			ctxFor := func(cmd int) context.Context {
				if cmd == tt.cancels {
					return ctx
				}
				return bg
			}
			g := newGate()
			q := NewInputQ[int, int](g, WithQueueSize(1))
			defer q.Close()
			out := make(chan outcome, 10)
			holdOwner(t, q, g, 0, ctxFor(0), out)
			fillQueue(t, q, []int{1}, ctxFor(1), out)

			cancel()
			o := within(t, out, "Do did not return when its context ended")
			assert.Equal(t, outcome{cmd: tt.cancels, err: context.Canceled}, o, "Do returns at once, before the owner answers")

			close(g.release)
			o = within(t, out, "the other caller got no reply")
			assert.Equal(t, outcome{cmd: 1 - tt.cancels, r: (1 - tt.cancels) * 10}, o)
			// Many more commands: if the abandoned request were reused, one of
			// them would read the reply meant for the cancelled caller.
			for i := 2; i < 200; i++ {
				r, err := q.Do(bg, i)
				require.NoError(t, err)
				require.Equal(t, i*10, r, "reply to another command")
			}
			require.NoError(t, q.Close())
			assert.Equal(t, span(0, 199), g.applied, "the cancelled command is applied all the same, once")
		})
	}
}

func TestInputQQueueHighWater(t *testing.T) {
	t.Run("idle and sequential", func(t *testing.T) {
		q := NewInputQ[testCmd, int](&recorder{})
		defer q.Close()
		assert.Equal(t, int64(0), q.QueueHighWater(), "no command yet")
		for range 3 {
			_, err := q.Do(context.Background(), testCmd{n: 1})
			require.NoError(t, err)
		}
		assert.Equal(t, int64(1), q.QueueHighWater(), "a lone caller never waits behind another")
		assert.Equal(t, int64(1), q.ResetQueueHighWater(), "the reset returns the window it ends")
		assert.Equal(t, int64(0), q.QueueHighWater(), "a new window starts at 0")
		_, err := q.Do(context.Background(), testCmd{n: 1})
		require.NoError(t, err)
		assert.Equal(t, int64(1), q.QueueHighWater(), "the owner records into the new window")
	})
	for _, size := range []int{1, 4} {
		t.Run(fmt.Sprintf("full queue=%d", size), func(t *testing.T) {
			bg := context.Background()
			g := newGate()
			q := NewInputQ[int, int](g, WithQueueSize(size))
			out := make(chan outcome, size+1)
			holdOwner(t, q, g, 0, bg, out)
			assert.Equal(t, int64(1), q.QueueHighWater())
			fillQueue(t, q, span(1, size), bg, out)
			close(g.release)
			for range size + 1 {
				within(t, out, "no reply")
			}
			require.NoError(t, q.Close())
			assert.Equal(t, int64(size), q.QueueHighWater(), "the owner found the whole queue waiting")
		})
	}
}

func TestWithQueueSize(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want int
	}{
		{"default", nil, DefaultQueueSize},
		{"0 means default", []Option{WithQueueSize(0)}, DefaultQueueSize},
		{"1", []Option{WithQueueSize(1)}, 1},
		{"7", []Option{WithQueueSize(7)}, 7},
		{"last wins", []Option{WithQueueSize(3), WithQueueSize(5)}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := NewInputQ[testCmd, int](&recorder{}, tt.opts...)
			defer q.Close()
			assert.Equal(t, tt.want, q.QueueCap())
		})
	}
	t.Run("negative panics", func(t *testing.T) {
		// goleak in TestMain checks that no owner was started.
		assert.PanicsWithError(t, "store: queue size -1 < 0", func() {
			NewInputQ[testCmd, int](&recorder{}, WithQueueSize(-1))
		})
	})
}

// TestInputQCloseRacesDo: many callers, some with contexts that end, race a
// Close. Every Do that returns a result had its command applied exactly once;
// every Do refused with ErrClosed had it never applied; a Do whose context
// ended had it applied at most once; and once a caller saw ErrClosed, it
// keeps seeing it. Run many rounds: the interesting interleavings are rare.
func TestInputQCloseRacesDo(t *testing.T) {
	rounds := 60
	if testing.Short() {
		rounds = 10
	}
	results := 0
	newInputQ := func(m Machine[int, int], size int) Store[int, int] { return NewInputQ(m, WithQueueSize(size)) }
	for round := range rounds {
		results += closeRacesDoRound(t, round, newInputQ)
		if t.Failed() {
			t.Fatalf("failed in round %d", round)
		}
	}
	t.Logf("%d rounds, %d commands answered", rounds, results)
}

// applyCounter counts how often each command (a unique id) is applied.
type applyCounter struct{ count []int }

func (m *applyCounter) Apply(id int) (int, error) {
	m.count[id]++
	return id + 1, nil
}

// closeRacesDoRound is one round of a Close racing many callers, over a
// store newStore makes with a queue of size.
func closeRacesDoRound(t *testing.T, round int, newStore func(m Machine[int, int], size int) Store[int, int]) (results int) {
	const callers, maxEach = 16, 400
	sizes := []int{1, 2, 8, DefaultQueueSize}
	m := &applyCounter{count: make([]int, callers*maxEach)}
	q := newStore(m, sizes[round%len(sizes)])

	type kind uint8
	const (
		notTried kind = iota
		gotResult
		refused
		ctxEnded
	)
	got := make([]kind, callers*maxEach) // got[id] is written by id's caller only
	var returned atomic.Int64            // Do calls that have returned so far
	var wg sync.WaitGroup
	var start sync.WaitGroup
	start.Add(1)
	for c := range callers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(round), uint64(c)))
			start.Wait()
			for i := range maxEach {
				id := c*maxEach + i
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if rng.IntN(4) == 0 {
					// Ends at a random point: before the send, while queued or
					// while waiting for the reply.
					ctx, cancel = context.WithTimeout(ctx, time.Duration(rng.IntN(20))*time.Microsecond)
				}
				r, err := q.Do(ctx, id)
				cancel()
				returned.Add(1)
				switch {
				case err == nil:
					if r != id+1 {
						t.Errorf("id %d: got the reply %d", id, r)
					}
					got[id] = gotResult
				case err == ErrClosed:
					got[id] = refused
					// Closing is final.
					if _, err := q.Do(context.Background(), -1); err != ErrClosed {
						t.Errorf("Do after ErrClosed: %v", err)
					}
					return
				case err == context.DeadlineExceeded:
					got[id] = ctxEnded
				default:
					t.Errorf("id %d: unexpected error %v", id, err)
					return
				}
			}
		})
	}
	start.Done()
	// Close at a random point of the run, from before the first command to
	// well into it.
	closeAfter := rand.N(int64(callers * maxEach / 2))
	for returned.Load() < closeAfter {
		runtime.Gosched()
	}
	require.NoError(t, q.Close())
	wg.Wait()

	for id, k := range got {
		n := m.count[id]
		switch k {
		case gotResult:
			results++
			if n != 1 {
				t.Errorf("id %d returned a result but was applied %d times", id, n)
			}
		case refused, notTried:
			if n != 0 {
				t.Errorf("id %d (outcome %d) was never accepted but applied %d times", id, k, n)
			}
		case ctxEnded:
			if n > 1 {
				t.Errorf("id %d applied %d times", id, n)
			}
		}
	}
	return results
}

// TestInputQCloseWaitsForCallerMidSend: a caller that passed Do's closed check
// just before Close, and was preempted before its send, must still have its
// command applied and answered; the owner may not exit under it. Real callers
// sit in that window for nanoseconds, so the test plays one by hand, doing
// what Do does at that point.
func TestInputQCloseWaitsForCallerMidSend(t *testing.T) {
	m := &recorder{}
	q := NewInputQ[testCmd, int](m, WithQueueSize(4))
	q.engine().gate.state.Add(1) // passed the closed check

	closed := make(chan error, 1)
	go func() { closed <- q.Close() }()
	waitFor(t, func() bool { return q.engine().gate.state.Load()&closedBit != 0 }, "Close started")
	notYet(t, closed, "Close returned while a caller could still send")
	_, err := q.Do(context.Background(), testCmd{n: 1})
	assert.ErrorIs(t, err, ErrClosed, "a caller arriving after Close is refused")

	c := q.pool.Get().(*call[testCmd, int])
	c.cmd = testCmd{n: 5}
	q.engine().box.q <- c
	q.engine().gate.state.Add(-1) // accepted
	within(t, c.done, "the accepted command was not answered")
	assert.Equal(t, 5, c.r)
	assert.NoError(t, c.err)
	require.NoError(t, within(t, closed, "Close did not return"))
	assert.Equal(t, []testCmd{{n: 5}}, m.log)
}
