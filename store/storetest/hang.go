package storetest

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// ErrHang is wrapped by the error of a check that gave up waiting for a
// call to Do or Close: see HangAfter for when it does.
var ErrHang = errors.New("storetest: hang")

// DefaultHangAfter is the least time a call is waited for before the design
// counts as hung (HangAfter sets it).
const DefaultHangAfter = time.Second

// HangFactor is how many times the slowest call a check has seen complete a
// call may take before the design counts as hung, when that is longer than
// HangAfter's floor.
const HangFactor = 100

// stallSlack is how late the waiter's own tick may be before the lateness
// counts as the whole process having stalled (swapped out, stopped): time
// no call could have used, which the hang bound then discounts.
const stallSlack = 500 * time.Millisecond

// watchTick is how often a waiting check looks at the calls in flight.
const watchTick = 10 * time.Millisecond

// watch times the calls one check makes, so that a call the design never
// answers is declared hung after a bound derived from the calls it did
// answer: max(floor, HangFactor × the slowest call seen so far), rather than
// after a fixed time. Each caller goroutine has its own slot, which only it
// writes (with atomics) and only the waiting goroutine reads: the watch adds
// no happens-before edge between two callers, so the race check's callers
// stay as unsynchronised as the design leaves them.
type watch struct {
	floor time.Duration
	t0    time.Time
	slots []*slot

	// The waiter's own state.
	paused time.Duration // process stalls seen by the waiter, discounted
	seen   []seenOp
}

// slot is one caller's: the call it has in flight and the slowest it made.
type slot struct {
	w       *watch
	label   string             // "client 3", "Close"
	what    func(n int) string // describes the slot's n-th call; nil: label and n only
	untimed bool               // the check holds these calls itself: not a measure of the design
	start   atomic.Int64       // ns since t0, +1, of the call in flight; 0: none
	n       atomic.Int64       // the number of the call in flight
	slowest atomic.Int64       // ns
}

type seenOp struct {
	start  int64
	paused time.Duration // w.paused when the waiter first saw the call
}

func newWatch(floor time.Duration) *watch {
	return &watch{floor: floor, t0: time.Now()}
}

// slot adds a caller. It must be called before the caller starts, from the
// waiting goroutine.
func (w *watch) slot(label string, what func(n int) string) *slot {
	s := &slot{w: w, label: label, what: what}
	w.slots = append(w.slots, s)
	w.seen = append(w.seen, seenOp{})
	return s
}

func (s *slot) begin(n int) {
	s.n.Store(int64(n))
	s.start.Store(int64(time.Since(s.w.t0)) + 1)
}

func (s *slot) end() {
	d := int64(time.Since(s.w.t0)) + 1 - s.start.Load()
	if !s.untimed && d > s.slowest.Load() {
		s.slowest.Store(d)
	}
	s.start.Store(0)
}

// slowest is the slowest call completed so far, over every slot.
func (w *watch) slowest() time.Duration {
	var m int64
	for _, s := range w.slots {
		m = max(m, s.slowest.Load())
	}
	return time.Duration(m)
}

// bound is how long a call may be in flight before it counts as hung.
func (w *watch) bound() (bound, slowest time.Duration) {
	slowest = w.slowest()
	return max(w.floor, HangFactor*slowest), slowest
}

// wait returns nil once done is closed, or a *hangError once a call has
// been in flight longer than the bound (which grows as slower calls
// complete).
func (w *watch) wait(done <-chan struct{}) error {
	t := time.NewTimer(watchTick)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-done:
			return nil
		case <-t.C:
		}
		now := time.Now()
		before := w.paused
		if late := now.Sub(last) - watchTick; late > stallSlack {
			w.paused += late
		}
		last = now
		if err := w.overdue(now, before); err != nil {
			// A last look: done may have come with the same tick.
			select {
			case <-done:
				return nil
			default:
			}
			return err
		}
		t.Reset(watchTick)
	}
}

// overdue returns the oldest call in flight past the bound, if any. A call
// first seen at this tick is credited with this tick's stall too.
func (w *watch) overdue(now time.Time, pausedBefore time.Duration) *hangError {
	bound, slowest := w.bound()
	elapsed := int64(now.Sub(w.t0)) + 1
	var worst *hangError
	for i, s := range w.slots {
		start := s.start.Load()
		if start == 0 {
			continue
		}
		if w.seen[i].start != start {
			w.seen[i] = seenOp{start: start, paused: pausedBefore}
		}
		age := time.Duration(elapsed-start) - (w.paused - w.seen[i].paused)
		if age <= bound || (worst != nil && age <= worst.age) {
			continue
		}
		worst = &hangError{slot: s.label, n: int(s.n.Load()), age: age, bound: bound, floor: w.floor, slowest: slowest}
		if s.what != nil {
			worst.what = s.what(worst.n)
		}
	}
	return worst
}

// hangError says which call a check gave up on, and the bound it used.
type hangError struct {
	slot    string
	n       int
	what    string // the call, if the slot can describe it
	age     time.Duration
	bound   time.Duration // max(floor, HangFactor × slowest)
	floor   time.Duration
	slowest time.Duration
}

func (e *hangError) Error() string {
	call := e.what
	if call == "" {
		call = e.slot
	}
	derived := fmt.Sprintf("HangAfter's %v, as no call took more than 1/%d of it", e.floor, HangFactor)
	if HangFactor*e.slowest > e.floor {
		derived = fmt.Sprintf("%d × the slowest call this check saw complete, %v", HangFactor, e.slowest.Round(time.Microsecond))
	}
	return fmt.Sprintf("%s has not returned after %v; the hang bound is %v (%s)",
		call, e.age.Round(time.Millisecond), e.bound.Round(time.Millisecond), derived)
}

func (e *hangError) Unwrap() error { return ErrHang }

// run runs f, the slot's n-th call, in a goroutine and waits for it within
// the watch's bound. On a hang f is left running: the design never returned.
func (w *watch) run(s *slot, n int, f func()) error {
	done := make(chan struct{})
	s.begin(n)
	go func() {
		defer close(done)
		f()
		s.end()
	}()
	return w.wait(done)
}
