package store

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// inputQSpinEngine is the inputQ-spin design: inputQ's one owner goroutine,
// kept awake. inputQ's owner parks on its empty channel, so the first command
// of every burst pays a wake-up; the delegation designs that beat locks in the
// literature keep their server awake instead — ffwd (Roghanchi, Eriksson and
// Ghosh, SOSP 2017) and RCL (Lozi, David, Thomas, Lawall and Muller, USENIX
// ATC 2012) dedicate a core to a server that polls its clients' requests.
// This is that arm, as far as Go lets it be:
//
//   - The owner locks itself to an OS thread (runtime.LockOSThread) and
//     applies the commands in the order they were published, one at a time,
//     answering (and, with a committing machine, committing) each before it
//     takes the next, as inputQ's does.
//   - Callers publish their command on a bounded lock-free queue (ring), not a
//     channel: no lock is taken on either side while the queue has room.
//     Per-caller slots, ffwd's choice, fit a fixed set of client threads;
//     goroutines come and go by the thousand, and a queue costs the owner
//     one poll for all of them instead of a scan of every slot.
//   - The owner, finding the queue empty, polls it for up to the spin budget
//     (Config.SpinBudget) before it parks on a channel; a caller that
//     publishes while it is parked wakes it. A caller, once its command is
//     published, polls for its answer for up to the same budget, yielding
//     its P between polls, before it blocks on its reply channel.
//   - With one P (GOMAXPROCS 1, read when the store is made and each time the
//     owner wakes from a park) neither spins: while one goroutine polls,
//     nothing else runs Go code, so no command can arrive and no answer can
//     come — a spin there could only end by running out of budget, having
//     taken the CPU from the callers it waits for. Nor does the owner keep
//     its thread: a locked goroutine is parked and woken by handing the P
//     between threads, all cost on one P. There it is inputQ over a
//     lock-free queue: it yields once before it parks, so that the callers
//     ready to run publish first, and parks when its queue is empty.
//
// The admission and close protocol is the owner designs' (owner.go): a
// command is accepted once it is on the queue or in the owner's hands; a
// caller that finds the queue full waits for room, or with
// Config.RejectWhenFull gets ErrOverloaded at once; Close stops accepting,
// lets the owner apply and answer every accepted command, and returns once
// it has exited. The owner exits with its thread still locked (when it
// polls), so the runtime ends that thread too: a closed store leaves no
// thread of its own behind.
//
// The spinning is not serial demand: the owner is busy, as inputQ's, while
// it applies and commits a command; taking it, answering it, the polling
// and the park are not. The CPU the polling
// burns is the design's cost, and shows where a process's CPU is counted
// (the runner's server CPU per call), not in SerialStats.
type inputQSpinEngine struct {
	q      ring
	commit func() error
	budget int64 // Config.SpinBudget, in nanoseconds
	reject bool  // Config.RejectWhenFull
	epoch  time.Time

	gate     admission
	stopping chan struct{} // closed by close: callers waiting for room give up
	stopOnce sync.Once
	closing  atomic.Bool
	done     chan struct{} // closed when the owner has exited

	// spin: more than one P, so polling can find work. Written by the owner.
	spin   atomic.Bool
	locked bool // the owner's: it is locked to its thread (while spin)
	// runLen is the commands the owner took since it last found its queue
	// empty (its batch, per wake-up); the owner's own, on a line of its own.
	_      [64]byte
	runLen int
	_      [56]byte
	// sleeping is set by the owner before it parks on wake (capacity 1);
	// whoever turns it off sends the wake-up.
	sleeping atomic.Bool
	wake     chan struct{}

	// Callers that found the queue full, or callers waiting before them,
	// count themselves in waiting and hand their command to the owner over
	// slow (unbuffered): Go's channel queues them in order, where a
	// lock-free queue would have them retry. The owner takes from slow once
	// the queue is empty, so commands are applied in the order they were
	// accepted, as with inputQ's channel.
	waiting atomic.Int64
	slow    chan op

	hw    atomic.Int64
	meter *serialMeter // the owner's applies and commits (nil: not measured)

	// For the tests: polls of an empty queue, and parks.
	spins, parks atomic.Int64
}

// The values of an op's handoff word.
const (
	handWaiting  int32 = iota // published, not answered
	handAnswered              // answered; the caller has not blocked
	handParked                // the caller blocks on its ready channel
)

// spinCheck is how many polls the owner makes between two looks at the clock
// (and at Close); awaitCheck the same for a caller.
const spinCheck, awaitCheck = 32, 8

func newInputQSpinEngine(mi machineInfo, cfg Config) engine {
	e := &inputQSpinEngine{commit: mi.commit, budget: int64(cfg.SpinBudget), reject: cfg.RejectWhenFull, epoch: time.Now(),
		stopping: make(chan struct{}), done: make(chan struct{}), wake: make(chan struct{}, 1), slow: make(chan op),
		meter: newSerialMeter(1, cfg)}
	e.q.init(cfg.QueueSize)
	e.spin.Store(runtime.GOMAXPROCS(0) > 1)
	go e.run() // stopped by close
	return e
}

func (e *inputQSpinEngine) now() int64 { return int64(time.Since(e.epoch)) }

func (e *inputQSpinEngine) exec(ctx context.Context, x op) error {
	x.handoff().Store(handWaiting) // the op may be a reused one
	if !e.gate.enter() {
		return ErrClosed
	}
	if e.waiting.Load() > 0 || !e.q.push(x) {
		if err := e.waitForRoom(ctx, x); err != nil {
			e.gate.leave()
			return err
		}
	}
	woke := e.rouse()
	e.gate.leave() // accepted: from here the owner answers whatever happens
	return e.await(ctx, x, woke)
}

// waitForRoom hands x to the owner, the queue being full or other callers
// waiting: or returns ErrOverloaded (RejectWhenFull), ctx.Err() or
// ErrClosed, x never applied. The owner does not park while any caller
// waits, and it is woken if it was parked as the caller counted itself.
func (e *inputQSpinEngine) waitForRoom(ctx context.Context, x op) error {
	if e.reject {
		return ErrOverloaded
	}
	e.waiting.Add(1)
	defer e.waiting.Add(-1)
	e.rouse()
	select {
	case e.slow <- x:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-e.stopping:
		return ErrClosed
	}
}

// rouse wakes the owner if it is parked, and reports whether it did. A
// caller calls it after it published; the owner sets sleeping before its
// last look at the queue, so either the owner sees the command or the caller
// sees it asleep.
func (e *inputQSpinEngine) rouse() bool {
	if e.sleeping.Load() && e.sleeping.CompareAndSwap(true, false) {
		select {
		case e.wake <- struct{}{}:
		default: // a wake-up is pending already
		}
		return true
	}
	return false
}

// await returns nil once the accepted x has been answered, or ctx.Err() if
// ctx ends first (x is still applied). It polls x's handoff word before it
// blocks, so that an answer that comes soon is a store to that word and not
// a wake-up (with one P it blocks at once):
//
//   - A caller that found the owner awake polls, yielding its P between
//     looks so that the other callers there can publish, for as long as the
//     owner takes a command at least once per spin budget. Under load it
//     always does; a caller whose command waits behind one longer than the
//     budget stops polling and blocks.
//   - A caller that had to wake the owner polls without yielding, for one
//     budget. The runtime has just queued the owner on the caller's P: a
//     caller that yielded would hand that P to the owner and wait in the
//     global queue, unseen until some P looks there — with the owner
//     spinning on it, the next time the owner parks. Holding its P, it lets
//     an idle P take the owner and stays ready for the answer, so that
//     after a burst's first command neither side needs waking again.
func (e *inputQSpinEngine) await(ctx context.Context, x op, woke bool) error {
	h := x.handoff()
	done := ctx.Done()
	switch {
	case !e.spin.Load():
	case woke:
		start := e.now()
		for i := 1; ; i++ {
			if h.Load() == handAnswered {
				return nil
			}
			if i%spinCheck != 0 {
				continue
			}
			select {
			case <-done: // nil for a context that never ends
				return ctx.Err()
			default:
			}
			if e.now()-start >= e.budget {
				break
			}
		}
	default:
		start, seen := e.now(), e.q.head.Load()
	polling:
		for {
			for range awaitCheck {
				if h.Load() == handAnswered {
					return nil
				}
				runtime.Gosched()
			}
			select {
			case <-done:
				return ctx.Err()
			default:
			}
			switch now, head := e.now(), e.q.head.Load(); {
			case head != seen:
				start, seen = now, head
			case now-start >= e.budget:
				break polling
			}
		}
	}
	if !h.CompareAndSwap(handWaiting, handParked) {
		return nil // answered as the caller stopped polling
	}
	if done == nil {
		<-x.ready()
		return nil
	}
	select {
	case <-x.ready():
		return nil
	case <-done:
		return ctx.Err()
	}
}

// answerPolled tells x's caller its command is done: through the handoff word if
// the caller still polls, on its ready channel if it blocked.
func answerPolled(x op) {
	if !x.handoff().CompareAndSwap(handWaiting, handAnswered) {
		x.ready() <- true
	}
}

// handle applies and commits x (the owner's serial busy time), then
// answers it (not busy time).
func (e *inputQSpinEngine) handle(x op) {
	e.meter.took(x) // x's wait ends as the owner takes it
	t0 := e.meter.start()
	x.apply()
	var err error
	if e.commit != nil {
		err = e.commit()
	}
	e.meter.stop(t0, 0)
	if err != nil {
		x.fail(err)
	}
	answerPolled(x)
}

func (e *inputQSpinEngine) run() {
	defer close(e.done)
	e.pin()
	for {
		x := e.next()
		if x == nil {
			return // closed, and nothing left
		}
		e.handle(x)
	}
}

// next returns the owner's next command, polling and parking while there is
// none; nil once the store is closed and every accepted command is handled.
// A run ends where the queue is found empty: its length is recorded then.
func (e *inputQSpinEngine) next() op {
	if x := e.take(); x != nil {
		e.runLen++
		return x
	}
	e.meter.batch(e.runLen)
	e.runLen = 1 // the command found next
	for {
		if x := e.poll(); x != nil {
			return x
		}
		switch {
		case e.closing.Load():
			// Idle means no caller is left between its closed check and
			// the end of its push, so an empty queue stays empty.
			if e.gate.idle() && e.q.empty() {
				return nil
			}
			runtime.Gosched() // such a caller may need this P to finish
		case e.waiting.Load() > 0:
			runtime.Gosched() // a caller is on its way to hand its command over
		default:
			e.park()
		}
	}
}

// poll looks for a command until the spin budget runs out; with one P it
// looks, yields once, as inputQ's owner does (owner.go's next), and looks
// again.
func (e *inputQSpinEngine) poll() op {
	if !e.spin.Load() {
		if x := e.take(); x != nil {
			return x
		}
		runtime.Gosched()
		return e.take()
	}
	start := e.now()
	for {
		for i := range int64(spinCheck) {
			if x := e.take(); x != nil {
				e.spins.Add(i)
				return x
			}
		}
		e.spins.Add(spinCheck)
		if e.closing.Load() || e.now()-start >= e.budget {
			return nil
		}
	}
}

// park blocks the owner until a caller publishes (or Close). It looks at the
// queue once more after it set sleeping: a caller that published before
// then is seen here, any later one sees sleeping and wakes it.
func (e *inputQSpinEngine) park() {
	e.sleeping.Store(true)
	if !e.q.empty() || e.waiting.Load() > 0 || e.closing.Load() {
		e.sleeping.Store(false)
		return
	}
	e.parks.Add(1)
	<-e.wake
	e.sleeping.Store(false) // a wake-up left by a caller that found it awake clears nothing
	e.spin.Store(runtime.GOMAXPROCS(0) > 1)
	e.pin()
	if e.spin.Load() {
		// The P the owner woke on may hold goroutines queued behind it:
		// the caller that woke it, others that caller's P ran. A P that
		// runs the polling owner never gets to them, and only a P with
		// nothing to do steals them — if one is awake to look. Starting a
		// goroutine is the runtime's cue to wake an idle P (a no-op one
		// costs about as much as a channel operation, once per park).
		go func() {}()
	}
}

// pin locks the owner to its thread while it polls, and lets the thread go
// while it does not (one P). It is not unlocked on exit: the runtime ends a
// thread whose goroutine exits locked to it (the process's main thread it
// parks for good instead), so a closed store leaves no thread of its own
// behind.
func (e *inputQSpinEngine) pin() {
	switch spin := e.spin.Load(); {
	case spin && !e.locked:
		runtime.LockOSThread()
	case !spin && e.locked:
		runtime.UnlockOSThread()
	default:
		return
	}
	e.locked = !e.locked
}

// take returns the next published command, or once the queue is empty the
// first waiting caller's; nil if there is none.
func (e *inputQSpinEngine) take() op {
	if x := e.q.pop(); x != nil {
		e.mark()
		return x
	}
	if e.waiting.Load() == 0 {
		return nil
	}
	select {
	case x := <-e.slow:
		e.mark()
		return x
	default:
		return nil
	}
}

// mark records the queue length the owner found, the command it took
// included.
func (e *inputQSpinEngine) mark() {
	if n := int64(e.q.len()) + 1; n > e.hw.Load() {
		e.hw.Store(n)
	}
}

// close shuts the gate, wakes the owner and waits for it to exit.
func (e *inputQSpinEngine) close() error {
	e.stopOnce.Do(func() {
		e.gate.shut()
		close(e.stopping)
		e.closing.Store(true)
		select {
		case e.wake <- struct{}{}:
		default: // a wake-up is pending already
		}
	})
	<-e.done
	return nil
}

func (e *inputQSpinEngine) serialMeter() *serialMeter { return e.meter }
func (e *inputQSpinEngine) highWater() int64          { return e.hw.Load() }
func (e *inputQSpinEngine) resetHighWater() int64     { return e.hw.Swap(0) }
func (e *inputQSpinEngine) queueLen() int             { return e.q.len() }
func (e *inputQSpinEngine) queueCap() int             { return len(e.q.cells) }

// ring is a bounded queue of ops for many producers and one consumer, without
// a lock: Vyukov's bounded queue, each cell carrying a sequence word that says
// whose turn it is. A producer claims the next position with a
// compare-and-swap on tail, writes its op into the position's cell and
// publishes it by storing the cell's sequence; the consumer takes the cell at
// head once it is published, and frees it for the producer one lap later.
// A producer descheduled between its claim and its publication holds up the
// consumer, which sees the queue empty until then, but no other producer.
//
// The sequence of the cell of position p is 2p while the cell is free for p's
// producer, 2p+1 once p's op is in it, and 2(p+n) once the consumer has taken
// it; doubling keeps "full" and "free for the next lap" apart for a queue of
// one cell.
type ring struct {
	tail  atomic.Uint64 // the next position to claim
	_     [56]byte
	head  atomic.Uint64 // the next position to take; written by the consumer only
	_     [56]byte
	cells []cell
	n     uint64
}

type cell struct {
	seq atomic.Uint64
	x   op
	_   [40]byte // a cell to a cache line: producers write neighbouring cells at once
}

func (r *ring) init(n int) {
	r.n = uint64(n)
	r.cells = make([]cell, n)
	for i := range r.cells {
		r.cells[i].seq.Store(2 * uint64(i))
	}
}

// push publishes x; false if the queue is full.
func (r *ring) push(x op) bool {
	pos := r.tail.Load()
	for {
		c := &r.cells[pos%r.n]
		switch d := int64(c.seq.Load() - 2*pos); {
		case d == 0:
			if r.tail.CompareAndSwap(pos, pos+1) {
				c.x = x
				c.seq.Store(2*pos + 1)
				return true
			}
		case d < 0:
			return false // the cell holds the op of one lap before
		}
		pos = r.tail.Load() // another producer claimed pos
	}
}

// pop takes the next published op, or returns nil; the consumer's only.
func (r *ring) pop() op {
	pos := r.head.Load()
	c := &r.cells[pos%r.n]
	if c.seq.Load() != 2*pos+1 {
		return nil
	}
	x := c.x
	c.x = nil
	r.head.Store(pos + 1)
	c.seq.Store(2 * (pos + r.n))
	return x
}

// empty reports whether the next position is not yet published; the
// consumer's only.
func (r *ring) empty() bool {
	pos := r.head.Load()
	return r.cells[pos%r.n].seq.Load() != 2*pos+1
}

// len is the number of claimed positions not yet taken.
func (r *ring) len() int {
	h := r.head.Load()
	t := r.tail.Load()
	if t < h {
		return 0
	}
	return int(t - h)
}
