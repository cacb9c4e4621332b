package store

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// combiningEngine is the combining design (flat combining, Hendler, Incze,
// Shavit and Tzafrir, SPAA 2010): no goroutine of its own. A caller publishes
// its command on a lock-free list, then tries the lock; whoever takes it
// becomes the combiner and applies every published command — its own and the
// waiting callers' — commits once for all of them (group commit), answers
// them, and lets the lock go. One lock hand-off and one sync serve a whole
// batch, as in inputQ-batch, but on the callers' own goroutines.
//
// Waiters spin (yielding their P) by default: their command is usually done
// within a few yields. With a committing machine the combiner spends most of
// its time in a sync, and spinning waiters would starve it of CPU, so they
// park on their reply instead. A parked waiter never tries the lock again, so
// a combiner that lets the lock go looks at the list once more and combines
// again if anything was published meanwhile: every published command is seen
// by some combiner.
type combiningEngine struct {
	mu     sync.Mutex             // held by the combiner: protects the machine and batch
	head   atomic.Pointer[opNode] // published, not yet taken
	gate   admission              // callers inside exec; Close waits for them
	commit func() error
	park   bool
	batch  []op
	meter  *serialMeter // the combiner's role, sampled as a lock's holds
}

// combinePasses bounds how many times one combiner takes the list before it
// lets the lock go, so that a caller whose command is done is not kept
// combining for others indefinitely.
const combinePasses = 4

func newCombiningEngine(mi machineInfo, cfg Config) engine {
	return &combiningEngine{commit: mi.commit, park: mi.commit != nil, meter: newSerialMeter(1, cfg)}
}

func (e *combiningEngine) serialMeter() *serialMeter { return e.meter }

func (e *combiningEngine) exec(_ context.Context, x op) error {
	if !e.gate.enter() {
		return ErrClosed
	}
	defer e.gate.leave()
	n := x.node()
	for {
		n.next = e.head.Load()
		if e.head.CompareAndSwap(n.next, n) {
			break
		}
	}
	if e.park {
		e.tryCombine()
		// Published means accepted: some combiner will apply x, and one
		// combining pass is all it waits for, so it waits for its answer
		// rather than for ctx.
		<-x.ready()
		return nil
	}
	for {
		e.tryCombine()
		if x.takeDone() {
			return nil
		}
		runtime.Gosched()
	}
}

// tryCombine combines if the lock is free, and again while commands are left
// published after it let the lock go.
func (e *combiningEngine) tryCombine() {
	for e.head.Load() != nil && e.mu.TryLock() {
		for range combinePasses {
			if !e.combineOnce() {
				break
			}
		}
		e.mu.Unlock()
	}
}

// combineOnce takes every published command, applies them in the order they
// were published, commits once, and answers them. It reports whether there
// was any. The applies and the commit are the combiner's serial busy time;
// taking the list and answering are not.
func (e *combiningEngine) combineOnce() bool {
	n := e.head.Swap(nil)
	if n == nil {
		return false
	}
	e.batch = e.batch[:0]
	for ; n != nil; n = n.next {
		e.batch = append(e.batch, n.op)
	}
	slices.Reverse(e.batch)  // the list is last-in first
	e.meter.tookAll(e.batch) // their waits end as the combiner takes the list
	t0 := e.meter.start()
	applyAll(e.batch, e.commit)
	e.meter.stop(t0, 0)
	if t0 >= 0 {
		e.meter.batch(len(e.batch))
	}
	for i, x := range e.batch {
		// The caller may reuse x at once.
		if e.park {
			x.ready() <- true
		} else {
			x.markDone()
		}
		e.batch[i] = nil
	}
	return true
}

// close refuses new commands and waits until every caller inside has its
// answer (each published command is applied by some caller still inside).
func (e *combiningEngine) close() error {
	e.gate.shut()
	for !e.gate.idle() {
		runtime.Gosched()
	}
	return nil
}
