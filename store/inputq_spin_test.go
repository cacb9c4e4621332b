package store

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inputQ-spin's own tests: the registry-wide ones (contract,
// linearizability, overload, commit, serial demand, storetest) reach it
// through the registry; these check what only it does — polling, parking,
// its one-P rule, its lock-free queue — and its close and cancellation
// paths, which are its own code rather than owner.go's.

// newSpin makes an inputQ-spin store over m and returns its engine too.
func newSpin[C, R any](t *testing.T, m Machine[C, R], cfg Config) (Store[C, R], *inputQSpinEngine) {
	t.Helper()
	s, err := New("inputQ-spin", m, cfg)
	require.NoError(t, err)
	return s, s.(*facade[C, R]).eng.(*inputQSpinEngine)
}

// withProcs sets GOMAXPROCS for the rest of the test.
func withProcs(t *testing.T, n int) {
	old := runtime.GOMAXPROCS(n)
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

// atLeastTwoProcs gives the test a second P, so that the owner polls.
func atLeastTwoProcs(t *testing.T) { withProcs(t, max(2, runtime.GOMAXPROCS(0))) }

// idleWindow is how long the parking tests leave a store idle. Nothing waits
// on it: a parked owner neither polls nor wakes however long it lasts.
const idleWindow = 50 * time.Millisecond

// parkedAfterDo does one command once the owner has parked, and returns
// once the owner has parked again after it: from then on it is blocked, with
// no wake-up pending, until a caller publishes.
func parkedAfterDo(t *testing.T, s Store[testCmd, int], e *inputQSpinEngine) {
	t.Helper()
	waitFor(t, func() bool { return e.parks.Load() >= 1 }, "the idle owner never parked")
	p := e.parks.Load()
	_, err := s.Do(context.Background(), testCmd{n: 1})
	require.NoError(t, err)
	waitFor(t, func() bool { return e.parks.Load() > p }, "the owner did not park after the command")
}

// TestSpinOwnerParks: an owner whose queue stays empty polls it for its
// budget and then parks — while the store is idle its poll counter stands
// still and it does not wake. The control: with SpinForever it never parks
// and polls all the while.
func TestSpinOwnerParks(t *testing.T) {
	atLeastTwoProcs(t)
	t.Run("budget", func(t *testing.T) {
		s, e := newSpin(t, Machine[testCmd, int](&recorder{}), Config{SpinBudget: 200 * time.Microsecond})
		defer s.Close()
		parkedAfterDo(t, s, e)
		spins, parks := e.spins.Load(), e.parks.Load()
		assert.Positive(t, spins, "the owner polled before it parked")
		time.Sleep(idleWindow)
		assert.Equal(t, spins, e.spins.Load(), "the parked owner polled")
		assert.Equal(t, parks, e.parks.Load(), "the parked owner woke")
		require.NoError(t, s.Close())
	})
	t.Run("forever (control)", func(t *testing.T) {
		s, e := newSpin(t, Machine[testCmd, int](&recorder{}), Config{SpinBudget: SpinForever})
		defer s.Close()
		_, err := s.Do(context.Background(), testCmd{n: 1})
		require.NoError(t, err)
		spins := e.spins.Load()
		time.Sleep(idleWindow)
		waitFor(t, func() bool { return e.spins.Load() > spins }, "the owner stopped polling")
		assert.Zero(t, e.parks.Load(), "the owner parked")
		require.NoError(t, s.Close(), "Close stops an owner that never parks")
	})
}

// TestSpinPollingIsNotBusy: an owner polling its empty queue is idle in the
// serial stats — its busy time stands still however long it polls. The
// control: an owner held inside Apply for as long is busy all the while
// (counted once Apply ends). Every command is timed here.
func TestSpinPollingIsNotBusy(t *testing.T) {
	atLeastTwoProcs(t)
	cfg := Config{MeasureSerial: true, SerialSampleEvery: 1, SpinBudget: SpinForever}
	busy := func(s any) time.Duration {
		st, ok := s.(SerialReporter).SerialStats()
		require.True(t, ok)
		return st.Total()
	}
	t.Run("polling", func(t *testing.T) {
		s, e := newSpin(t, Machine[testCmd, int](&recorder{}), cfg)
		defer s.Close()
		_, err := s.Do(context.Background(), testCmd{n: 1})
		require.NoError(t, err)
		spins := e.spins.Load()
		waitFor(t, func() bool { return e.spins.Load() > spins }, "the owner does not poll")
		b := busy(s)
		time.Sleep(idleWindow)
		assert.Greater(t, e.spins.Load(), spins, "the owner stopped polling")
		assert.Equal(t, b, busy(s), "polling counted as busy")
		require.NoError(t, s.Close())
	})
	t.Run("inside Apply (control)", func(t *testing.T) {
		g := newGate()
		s, _ := newSpin(t, Machine[int, int](g), cfg)
		out := make(chan outcome, 1)
		spinDo(context.Background(), s, 1, out)
		within(t, g.entered, "the owner did not take the command")
		b := busy(s)
		time.Sleep(idleWindow)
		close(g.release)
		within(t, out, "no answer")
		assert.GreaterOrEqual(t, busy(s)-b, idleWindow, "the owner inside Apply is busy")
		require.NoError(t, s.Close())
	})
}

// TestSpinOneP: with one P nothing else runs while a goroutine polls, so
// neither the owner nor its callers poll, whatever the budget, and the owner
// does not keep a thread — and many callers make progress. Once a second P
// appears, the owner takes a thread and polls again after its next wake-up.
// Without the one-P rule the owner's poll counter would move here.
func TestSpinOneP(t *testing.T) {
	withProcs(t, 1)
	r := &recorder{}
	s, e := newSpin(t, Machine[testCmd, int](r), Config{SpinBudget: SpinForever})
	defer s.Close()
	const callers, each = 8, 50
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for range each {
				_, err := s.Do(context.Background(), testCmd{n: 1})
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	assert.Zero(t, e.spins.Load(), "the owner polled with one P")
	assert.False(t, e.locked, "the owner kept its thread with one P")

	runtime.GOMAXPROCS(2)
	waitFor(t, func() bool { return e.sleeping.Load() }, "the owner did not park")
	_, err := s.Do(context.Background(), testCmd{n: 1}) // wakes it
	require.NoError(t, err)
	waitFor(t, func() bool { return e.spins.Load() > 0 }, "the owner does not poll with two Ps")
	require.NoError(t, s.Close())
	assert.True(t, e.locked, "the polling owner has a thread of its own")
	assert.Equal(t, callers*each+1, r.total)
}

// spinBudgets are the two ways a caller waits for its answer: blocking on
// it almost at once, or polling until it comes.
var spinBudgets = []time.Duration{time.Nanosecond, SpinForever}

// spinDo starts Do(ctx, cmd) in a goroutine that reports on out.
func spinDo(ctx context.Context, s Store[int, int], cmd int, out chan<- outcome) {
	go func() {
		r, err := s.Do(ctx, cmd)
		out <- outcome{cmd, r, err}
	}()
}

// spinHeld makes an inputQ-spin store over a gate with a queue of one, its
// owner inside Apply of command 0 and command 1 in its queue; ctxs gives
// each command's context.
func spinHeld(t *testing.T, budget time.Duration, ctxs func(cmd int) context.Context, out chan outcome) (*gate, Store[int, int], *inputQSpinEngine) {
	t.Helper()
	g := newGate()
	s, e := newSpin(t, Machine[int, int](g), Config{QueueSize: 1, SpinBudget: budget})
	spinDo(ctxs(0), s, 0, out)
	require.Equal(t, 0, within(t, g.entered, "the owner did not take the command"))
	spinDo(ctxs(1), s, 1, out)
	waitFor(t, func() bool { return e.q.len() == 1 }, "command 1 queued")
	return g, s, e
}

func background(int) context.Context { return context.Background() }

// TestSpinCloseWhileCallersWait: with the owner held in Apply and its queue
// full, Close makes the callers waiting for room give up with ErrClosed,
// their commands never applied; the accepted ones are applied and answered;
// Close returns only once the owner has exited.
func TestSpinCloseWhileCallersWait(t *testing.T) {
	for _, budget := range spinBudgets {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			atLeastTwoProcs(t)
			out := make(chan outcome, 10)
			g, s, e := spinHeld(t, budget, background, out)
			blocked := []int{2, 3, 4}
			for _, cmd := range blocked {
				spinDo(context.Background(), s, cmd, out)
			}
			waitFor(t, func() bool { return e.waiting.Load() == int64(len(blocked)) }, "callers waiting for room")

			closed := make(chan error, 1)
			go func() { closed <- s.Close() }()
			var gaveUp []int
			for range blocked {
				o := within(t, out, "a waiting caller did not give up")
				assert.ErrorIs(t, o.err, ErrClosed, "cmd %d", o.cmd)
				gaveUp = append(gaveUp, o.cmd)
			}
			assert.ElementsMatch(t, blocked, gaveUp)
			_, err := s.Do(context.Background(), 99)
			assert.ErrorIs(t, err, ErrClosed, "Do while closing")
			notYet(t, closed, "Close returned while the owner was still applying")

			close(g.release)
			require.NoError(t, within(t, closed, "Close did not return"))
			select {
			case <-e.done:
			default:
				t.Fatal("Close returned before the owner exited")
			}
			for range 2 {
				o := within(t, out, "an accepted caller got no reply")
				assert.Equal(t, outcome{cmd: o.cmd, r: o.cmd * 10}, o)
			}
			assert.Equal(t, []int{0, 1}, g.applied, "exactly the accepted commands, once each")
		})
	}
}

// TestSpinCtxEndsBeforeAcceptance: a caller waiting for room whose context
// ends gets ctx.Err(), and its command is never applied, even once the owner
// makes room.
func TestSpinCtxEndsBeforeAcceptance(t *testing.T) {
	for _, budget := range spinBudgets {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			atLeastTwoProcs(t)
			out := make(chan outcome, 10)
			g, s, e := spinHeld(t, budget, background, out)
			defer s.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			spinDo(ctx, s, 2, out)
			waitFor(t, func() bool { return e.waiting.Load() == 1 }, "the caller waits for room")

			cancel()
			assert.Equal(t, outcome{cmd: 2, err: context.Canceled}, within(t, out, "the waiting caller did not give up"))
			assert.Zero(t, e.waiting.Load())
			close(g.release)
			for range 2 {
				o := within(t, out, "an accepted caller got no reply")
				assert.Equal(t, outcome{cmd: o.cmd, r: o.cmd * 10}, o)
			}
			require.NoError(t, s.Close())
			assert.Equal(t, []int{0, 1}, g.applied, "the command whose context ended first is never applied")
		})
	}
}

// TestSpinCtxEndsAfterAcceptance: once accepted, a command is applied even
// if its caller stops waiting, whether the caller was polling or blocked;
// Do returns at once, and the abandoned answer never reaches another caller.
func TestSpinCtxEndsAfterAcceptance(t *testing.T) {
	for _, budget := range spinBudgets {
		for cancels, where := range []string{"taken by the owner", "waiting in the queue"} {
			t.Run(fmt.Sprintf("%v/%s", budget, where), func(t *testing.T) {
				atLeastTwoProcs(t)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				ctxs := func(cmd int) context.Context {
					if cmd == cancels {
						return ctx
					}
					return context.Background()
				}
				out := make(chan outcome, 10)
				g, s, _ := spinHeld(t, budget, ctxs, out)
				defer s.Close()

				cancel()
				assert.Equal(t, outcome{cmd: cancels, err: context.Canceled}, within(t, out, "Do did not return when its context ended"))
				close(g.release)
				other := 1 - cancels
				assert.Equal(t, outcome{cmd: other, r: other * 10}, within(t, out, "the other caller got no reply"))
				// If the abandoned op were reused, one of these would read
				// the answer meant for the cancelled caller.
				for i := 2; i < 200; i++ {
					r, err := s.Do(context.Background(), i)
					require.NoError(t, err)
					require.Equal(t, i*10, r, "reply to another command")
				}
				require.NoError(t, s.Close())
				assert.Equal(t, span(0, 199), g.applied, "the cancelled command is applied all the same, once")
			})
		}
	}
}

// TestSpinCloseRacesDo: many callers, some with contexts that end, race a
// Close (closeRacesDoRound's checks), with callers that block soon and with
// the default budget.
func TestSpinCloseRacesDo(t *testing.T) {
	rounds := 30
	if testing.Short() {
		rounds = 6
	}
	for _, budget := range []time.Duration{time.Nanosecond, DefaultSpinBudget} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			newStore := func(m Machine[int, int], size int) Store[int, int] {
				s, err := New("inputQ-spin", m, Config{QueueSize: size, SpinBudget: budget})
				require.NoError(t, err)
				return s
			}
			for round := range rounds {
				closeRacesDoRound(t, round, newStore)
				if t.Failed() {
					t.Fatalf("failed in round %d", round)
				}
			}
		})
	}
}

func TestSpinQueueHighWater(t *testing.T) {
	s, _ := newSpin(t, Machine[testCmd, int](&recorder{}), Config{})
	defer s.Close()
	q := s.(QueueReporter)
	assert.Zero(t, q.QueueHighWater(), "no command yet")
	for range 3 {
		_, err := s.Do(context.Background(), testCmd{n: 1})
		require.NoError(t, err)
	}
	assert.Equal(t, int64(1), q.QueueHighWater(), "a lone caller never waits behind another")
	assert.Equal(t, int64(1), q.ResetQueueHighWater())
	assert.Zero(t, q.QueueHighWater())
	assert.Equal(t, DefaultQueueSize, s.(*facade[testCmd, int]).QueueCap())
}

func TestSpinBudgetRefused(t *testing.T) {
	_, err := New("inputQ-spin", Machine[int, int](&overlapDetector{}), Config{SpinBudget: -time.Microsecond})
	assert.ErrorContains(t, err, "spin budget -1µs < 0")
}

// tagged is a ring entry for the tests: producer p's i-th op.
type tagged struct {
	op
	p, i int
}

// TestRingOrder: a ring of n holds n ops, refuses one more, and gives them
// back in order, lap after lap (n = 1 included, where full and free for the
// next lap are one sequence apart).
func TestRingOrder(t *testing.T) {
	for _, n := range []int{1, 2, 3, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var r ring
			r.init(n)
			assert.True(t, r.empty())
			next := 0
			for lap := range 5 {
				for i := range n {
					require.True(t, r.push(&tagged{i: lap*n + i}), "lap %d: push %d of %d", lap, i, n)
				}
				assert.False(t, r.push(&tagged{}), "a full ring took one more")
				assert.Equal(t, n, r.len())
				for range n {
					x := r.pop()
					require.NotNil(t, x)
					assert.Equal(t, next, x.(*tagged).i)
					next++
				}
				assert.Nil(t, r.pop())
				assert.True(t, r.empty())
				assert.Zero(t, r.len())
			}
		})
	}
}

// checkDelivery reports what is wrong with got, the ops one consumer took
// from producers that each pushed 0..each-1: each op once, and each
// producer's in its order.
func checkDelivery(got []*tagged, producers, each int) error {
	next := make([]int, producers)
	for _, x := range got {
		if x.i != next[x.p] {
			return fmt.Errorf("producer %d: got op %d, want %d", x.p, x.i, next[x.p])
		}
		next[x.p]++
	}
	for p, n := range next {
		if n != each {
			return fmt.Errorf("producer %d: %d ops delivered, want %d", p, n, each)
		}
	}
	return nil
}

// TestRingConcurrent: producers push at once into a small ring while one
// consumer pops; every op arrives once, each producer's in order. The
// control: the check refuses a duplicate, a reordering and a loss.
func TestRingConcurrent(t *testing.T) {
	const producers, each = 4, 3000
	var r ring
	r.init(4)
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				for !r.push(&tagged{p: p, i: i}) {
					runtime.Gosched() // full
				}
			}
		})
	}
	got := make([]*tagged, 0, producers*each)
	for len(got) < producers*each {
		if x := r.pop(); x != nil {
			got = append(got, x.(*tagged))
			continue
		}
		runtime.Gosched()
	}
	wg.Wait()
	assert.Nil(t, r.pop())
	assert.NoError(t, checkDelivery(got, producers, each))

	ok := []*tagged{{p: 0, i: 0}, {p: 1, i: 0}, {p: 0, i: 1}, {p: 1, i: 1}}
	require.NoError(t, checkDelivery(ok, 2, 2))
	assert.Error(t, checkDelivery([]*tagged{ok[0], ok[1], ok[1], ok[2], ok[3]}, 2, 2), "a duplicate")
	assert.Error(t, checkDelivery([]*tagged{ok[2], ok[0], ok[1], ok[3]}, 2, 2), "a reordering")
	assert.Error(t, checkDelivery(ok[:3], 2, 2), "a loss")
}
