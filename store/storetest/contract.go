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

// closeAtEnd closes a store a check is done with, and adds to the check's
// error if Close hangs or fails.
func closeAtEnd[C, R any](st store.Store[C, R], w *watch, err *error) {
	if cerr := closeWatched(st, w); cerr != nil {
		*err = errors.Join(*err, fmt.Errorf("closing the store at the end: %w", cerr))
	}
}

// checkEndedContext: a context that has already ended returns its error and
// applies nothing.
func checkEndedContext[C, R any](k *kit[C, R], s subject[C, R], seed uint64) (err error) {
	st, rec, err := k.fresh(s)
	if err != nil {
		return err
	}
	w := newWatch(k.o.hang)
	defer closeAtEnd(st, w, &err)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, ctx := range []context.Context{cancelled, expired} {
		_, err, hang := doWatched(ctx, st, w, k.oneCmd(seed))
		if hang != nil {
			return hang
		}
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
	w := newWatch(k.o.hang)
	_, err, hang := doWatched(context.Background(), st, w, k.oneCmd(seed))
	if hang != nil {
		return hang
	}
	if errors.Is(err, store.ErrClosed) {
		return fmt.Errorf("Do on an open store returned %v", err)
	}
	if err := closeWatched(st, w); err != nil {
		return err
	}
	rec.closed()
	if err := closeWatched(st, w); err != nil {
		return fmt.Errorf("the second Close: %w", err)
	}
	if _, err, hang := doWatched(context.Background(), st, w, k.oneCmd(seed)); hang != nil {
		return fmt.Errorf("Do after Close: %w", hang)
	} else if !errors.Is(err, store.ErrClosed) {
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
	w := newWatch(k.o.hang)
	g := newGate()
	rec.mu.Lock()
	rec.gate = g
	rec.mu.Unlock()
	cmd := k.oneCmd(seed)
	doSlot := w.slot(fmt.Sprintf("Do(%+v)", cmd), nil)
	doSlot.untimed = true // held in Apply by the gate
	answered := make(chan struct{})
	var answer error
	doSlot.begin(0)
	go func() {
		defer close(answered)
		_, answer = st.Do(context.Background(), cmd)
		doSlot.end()
	}()
	if err := w.wait(either(g.entered, answered)); err != nil {
		close(g.release)
		return fmt.Errorf("waiting for Do to reach Apply: %w", err)
	}
	select {
	case <-g.entered:
	default:
		close(g.release)
		return fmt.Errorf("Do(%+v) returned (%v) without reaching Apply", cmd, answer)
	}
	closeSlot := w.slot("Close", nil)
	closed := make(chan struct{})
	var closeErr error
	closeSlot.begin(0)
	go func() {
		defer close(closed)
		closeErr = st.Close()
		closeSlot.end()
	}()
	select {
	case <-closed:
		close(g.release)
		if g.atomic {
			if err := w.wait(answered); err != nil {
				return err
			}
			if errors.Is(answer, store.ErrClosed) {
				return fmt.Errorf("a command inside ApplyAtomic when Close began was answered %v", answer)
			}
			return nil
		}
		if err := w.wait(answered); err != nil {
			return fmt.Errorf("Close returned (%v) while Apply was still running; then %w", closeErr, err)
		}
		return fmt.Errorf("Close returned (%v) while Apply was still running", closeErr)
	case <-time.After(closeGrace):
	}
	close(g.release)
	if err := w.wait(answered); err != nil {
		return fmt.Errorf("after its Apply: %w", err)
	}
	if errors.Is(answer, store.ErrClosed) {
		return fmt.Errorf("a command inside Apply when Close began was answered %v", answer)
	}
	if err := w.wait(closed); err != nil {
		return fmt.Errorf("after the Apply it waited for: %w", err)
	}
	if closeErr != nil {
		return fmt.Errorf("Close: %w", closeErr)
	}
	return nil
}

// loadCallers is how many goroutines call the store while Close runs:
// enough to be waiting at every stage of a design's path.
const loadCallers = 16

// checkCloseUnderLoad: Close while many callers are mid-Do returns; every
// caller is answered or gets store.ErrClosed, none hangs; nothing is applied
// after Close returned, and a call begun after it is refused; and what was
// answered is linearizable.
func checkCloseUnderLoad[C, R any](k *kit[C, R], s subject[C, R], seed uint64) error {
	h, err := k.record(s, seed, loadCallers, 4*loadCallers)
	if h == nil {
		return err
	}
	return errors.Join(err, k.verify(h))
}

// checkNoLeak: once a store that has served calls is closed, every goroutine
// it started has ended.
func checkNoLeak[C, R any](k *kit[C, R], s subject[C, R], seed uint64) error {
	before := goleak.IgnoreCurrent()
	st, err := s.new(k.machine())
	if err != nil {
		return fmt.Errorf("cannot build the store: %w", err)
	}
	w := newWatch(k.o.hang)
	rng := rand.New(rand.NewPCG(seed, 0))
	for range loadCallers {
		if _, _, hang := doWatched(context.Background(), st, w, k.gen(rng)); hang != nil {
			return hang
		}
	}
	if err := closeWatched(st, w); err != nil {
		return err
	}
	if err := goleak.Find(before); err != nil {
		return fmt.Errorf("goroutines left behind after Close: %w", err)
	}
	return nil
}
