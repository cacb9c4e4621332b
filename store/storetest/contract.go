package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"go.uber.org/goleak"

	"github.com/locklab/locklab/store"
)

// oneCheck is one thing Check checks of a design, on fresh stores.
type oneCheck[C, R any] struct {
	name  string
	check func(k *kit[C, R], s subject[C, R], seed uint64) error
}

// checks is the one list of the checks; Check runs each as a subtest of
// every design, Verify one after another.
func checks[C, R any]() []oneCheck[C, R] {
	return []oneCheck[C, R]{
		{"linearizable", (*kit[C, R]).checkLinearizable},
		{"race", (*kit[C, R]).checkRace},
		{"ended context is refused", checkEndedContext[C, R]},
		{"Do after Close is refused", checkClosed[C, R]},
		{"Close waits for Apply", checkCloseWaits[C, R]},
		{"Close under load", checkCloseUnderLoad[C, R]},
		{"no goroutine left", checkNoLeak[C, R]},
	}
}

// fresh builds a store of s around a recording machine.
func (k *kit[C, R]) fresh(s subject[C, R]) (store.Store[C, R], *recorder[C, R], error) {
	rec := newRecorder(k.machine(), new(atomic.Int64))
	st, err := s.new(rec)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot build the store: %w", err)
	}
	return st, rec, nil
}

func (k *kit[C, R]) oneCmd(seed uint64) C { return k.gen(rand.New(rand.NewPCG(seed, 1<<32))) }

// checkEndedContext: a context that has already ended returns its error and
// applies nothing.
func checkEndedContext[C, R any](k *kit[C, R], s subject[C, R], seed uint64) error {
	st, rec, err := k.fresh(s)
	if err != nil {
		return err
	}
	defer st.Close()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, ctx := range []context.Context{cancelled, expired} {
		_, err := st.Do(ctx, k.oneCmd(seed))
		if !errors.Is(err, ctx.Err()) {
			return fmt.Errorf("Do with a context already ended (%v) returned %v", ctx.Err(), err)
		}
	}
	if applies, _, _, _ := rec.snapshot(); len(applies) > 0 {
		return fmt.Errorf("Do with a context already ended applied %+v", applies[0].cmd)
	}
	return nil
}

// checkClosed: Close returns nil, twice; Do afterwards returns an error
// wrapping store.ErrClosed and applies nothing.
func checkClosed[C, R any](k *kit[C, R], s subject[C, R], seed uint64) error {
	st, rec, err := k.fresh(s)
	if err != nil {
		return err
	}
	if _, err := st.Do(context.Background(), k.oneCmd(seed)); errors.Is(err, store.ErrClosed) {
		return fmt.Errorf("Do on an open store returned %v", err)
	}
	if err := closeWithin(st, hangLimit); err != nil {
		return err
	}
	rec.closed()
	if err := closeWithin(st, hangLimit); err != nil {
		return fmt.Errorf("the second Close: %w", err)
	}
	if _, err := st.Do(context.Background(), k.oneCmd(seed)); !errors.Is(err, store.ErrClosed) {
		return fmt.Errorf("Do after Close returned %v, want store.ErrClosed", err)
	}
	applies, _, late, _ := rec.snapshot()
	if len(late) > 0 {
		return errors.New(late[0])
	}
	if len(applies) != 1 {
		return fmt.Errorf("one command answered, %d applied", len(applies))
	}
	return nil
}

// closeGrace is how long Close is given to return too early: a correct
// design never does, so the bound only limits the test's time.
const closeGrace = 20 * time.Millisecond

// checkCloseWaits: while a command is inside Apply, Close does not return;
// once it has, the caller gets its answer and Close returns. A command
// inside ApplyAtomic is exempt from the first: a design without a lock has
// nothing to wait on (the atomic design documents it), and the command
// completes linearizably on its own.
func checkCloseWaits[C, R any](k *kit[C, R], s subject[C, R], seed uint64) error {
	st, rec, err := k.fresh(s)
	if err != nil {
		return err
	}
	g := newGate()
	rec.mu.Lock()
	rec.gate = g
	rec.mu.Unlock()
	cmd := k.oneCmd(seed)
	answered := make(chan error, 1)
	go func() {
		_, err := st.Do(context.Background(), cmd)
		answered <- err
	}()
	select {
	case <-g.entered:
	case <-time.After(hangLimit):
		close(g.release)
		return fmt.Errorf("Do(%+v) did not reach Apply within %v", cmd, hangLimit)
	}
	closed := make(chan error, 1)
	go func() { closed <- st.Close() }()
	select {
	case err := <-closed:
		close(g.release)
		if g.atomic {
			if err := <-answered; errors.Is(err, store.ErrClosed) {
				return fmt.Errorf("a command inside ApplyAtomic when Close began was answered %v", err)
			}
			return nil
		}
		<-answered
		return fmt.Errorf("Close returned (%v) while Apply was still running", err)
	case <-time.After(closeGrace):
	}
	close(g.release)
	select {
	case err := <-answered:
		if errors.Is(err, store.ErrClosed) {
			return fmt.Errorf("a command inside Apply when Close began was answered %v", err)
		}
	case <-time.After(hangLimit):
		return fmt.Errorf("Do did not return after its Apply")
	}
	select {
	case err := <-closed:
		return err
	case <-time.After(hangLimit):
		return fmt.Errorf("Close did not return after the Apply")
	}
}

// loadCallers is how many goroutines call the store while Close runs:
// enough to be waiting at every stage of a design's path.
const loadCallers = 16

// checkCloseUnderLoad: Close while many callers are mid-Do returns; every
// caller is answered or gets store.ErrClosed, none hangs; nothing is applied
// after Close returned; and what was answered is linearizable.
func checkCloseUnderLoad[C, R any](k *kit[C, R], s subject[C, R], seed uint64) error {
	h, err := k.record(s, seed, loadCallers, 4*loadCallers)
	if err != nil {
		return err
	}
	return k.verify(h)
}

// checkNoLeak: once a store that has served calls is closed, every goroutine
// it started has ended.
func checkNoLeak[C, R any](k *kit[C, R], s subject[C, R], seed uint64) error {
	before := goleak.IgnoreCurrent()
	st, err := s.new(k.machine())
	if err != nil {
		return fmt.Errorf("cannot build the store: %w", err)
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	for range loadCallers {
		st.Do(context.Background(), k.gen(rng))
	}
	if err := closeWithin(st, hangLimit); err != nil {
		return err
	}
	if err := goleak.Find(before); err != nil {
		return fmt.Errorf("goroutines left behind after Close: %w", err)
	}
	return nil
}
