package store

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// The owner-style designs (inputQ, inputQ-batch, sharded-inputQ) share this
// admission and close protocol, the one InputQ started with (inputQ-spin
// keeps it in its own code, over its lock-free queue):
//
//   - A command is accepted when it enters an owner's queue. If ctx ends
//     before that, Do returns ctx.Err() and the command is never applied.
//     Once accepted it is applied even if the caller stops waiting.
//   - Close stops accepting, lets the owners apply every accepted command and
//     answer its caller, and returns once every owner goroutine has exited.
//     After Close, Do returns ErrClosed.

// closedBit marks a gate closed; the bits below it count the callers between
// their closed check and the end of their send.
const closedBit = int64(1) << 62

// admission admits callers until it is shut, and tells the owners when no admitted
// caller can still put a command into a queue.
//
// Its two atomic adds per Do were worth keeping: dropping them (unsafe)
// changed nothing measurable in BenchmarkStore, and the safe alternative,
// callers watching for a request stranded by an owner's exit, puts a select
// on the reply path that made Do slower.
type admission struct {
	state atomic.Int64
}

func (g *admission) enter() bool {
	if g.state.Add(1)&closedBit != 0 {
		g.state.Add(-1)
		return false
	}
	return true
}

func (g *admission) leave()     { g.state.Add(-1) }
func (g *admission) shut()      { g.state.Or(closedBit) }
func (g *admission) idle() bool { return g.state.Load() == closedBit }

// mailbox is one owner's queue. A nil op is Close's wake-up call.
type mailbox struct {
	q chan op
	// highWater is the largest queue length the owner has seen, itself
	// included, since the start or the last reset. The owner compares
	// against the shared value (a plain load on the machines we measure,
	// its cache line rarely written) so that a reset takes effect.
	highWater atomic.Int64
	// resume wakes the owner while it waits for a later shard's owner to
	// apply a command it forwarded (sharded-inputQ).
	resume chan struct{}
	done   chan struct{} // closed when the owner has exited
	// runs is where an owner that takes one command at a time records
	// its runs, the commands it took between two times it found its
	// queue empty (nil: it does not); run is the current run's length,
	// the owner's own, on a cache line callers do not read.
	runs *serialMeter
	_    [64]byte
	run  int
	_    [56]byte
}

// owners is the protocol over one or more mailboxes. Owners are closed in
// mailbox order, so an owner may forward commands to later mailboxes only.
type owners struct {
	gate     admission
	boxes    []*mailbox
	stopping chan struct{} // closed by close: callers blocked on a full queue give up
	stopOnce sync.Once
	meter    *serialMeter // one resource per owner, and extra ones after them: their applies and commits
	reject   bool         // Config.RejectWhenFull
}

// newOwners makes n mailboxes; with cfg.MeasureSerial, a meter of n owners
// and extra more resources (inputQ-batch's syncer).
func newOwners(n, extra int, cfg Config) *owners {
	o := &owners{boxes: make([]*mailbox, n), stopping: make(chan struct{}), meter: newSerialMeter(n+extra, cfg), reject: cfg.RejectWhenFull}
	for i := range o.boxes {
		o.boxes[i] = &mailbox{q: make(chan op, cfg.QueueSize), resume: make(chan struct{}, 1), done: make(chan struct{})}
	}
	return o
}

func (o *owners) serialMeter() *serialMeter { return o.meter }

// countRuns has every owner record its runs (per wake-up) as its batches:
// for the designs whose owners take one command at a time.
func (o *owners) countRuns() {
	for _, b := range o.boxes {
		b.runs = o.meter
	}
}

// admit puts x into box's queue, unless ctx ends or the store closes first.
func (o *owners) admit(ctx context.Context, box *mailbox, x op) error {
	if !o.gate.enter() {
		return ErrClosed
	}
	// Try a plain send first: a select with a default is a non-blocking send
	// on one channel, while the three-way select below locks every channel
	// it names. The closed check above and ctx.Err() (checked by the façade)
	// stand in for the other two cases while the queue has room.
	select {
	case box.q <- x:
	default:
		if o.reject {
			o.gate.leave()
			return ErrOverloaded
		}
		select {
		case box.q <- x:
		case <-ctx.Done():
			o.gate.leave()
			return ctx.Err()
		case <-o.stopping:
			o.gate.leave()
			return ErrClosed
		}
	}
	o.gate.leave() // accepted: from here an owner answers whatever happens
	return nil
}

// await returns nil once the accepted x has been applied, or ctx.Err() if
// ctx ends first (x is still applied).
func await(ctx context.Context, x op) error {
	done := ctx.Done()
	if done == nil {
		// The context can never end (context.Background): a plain receive
		// is cheaper than a select.
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

// next returns box's next op, yielding once before it blocks on an empty
// queue; nil is Close's wake-up call.
//
// Blocking parks the owner, and every park costs a wake-up (a trip through the
// scheduler, often a futex call) when the next command arrives. The callers
// that will send the next commands are usually runnable, waiting for a P:
// yielding lets them queue their commands first, so the owner goes on without
// parking and each wake-up serves many commands. In BenchmarkStore with 8 and
// 64 callers per P this took the owner from one park per command to one per
// thousands of commands and cut the cost of Do by 20-40%; with a single caller
// it changed nothing measurable.
//
// A run ends where the queue is found empty: its length is recorded (with
// runs) before the owner yields.
func (b *mailbox) next() op {
	select {
	case x := <-b.q:
		b.mark()
		b.run++
		return x
	default:
	}
	if b.runs != nil {
		b.runs.batch(b.run)
	}
	runtime.Gosched()
	x := <-b.q
	b.mark()
	b.run = 1
	return x
}

// closed records the run the owner was in when Close's wake-up came, the
// wake-up not counted.
func (b *mailbox) closed() {
	if b.runs != nil {
		b.runs.batch(b.run - 1)
	}
	b.run = 0
}

// mark records the queue length the owner found, the op it took included.
func (b *mailbox) mark() {
	if n := int64(len(b.q)) + 1; n > b.highWater.Load() {
		b.highWater.Store(n)
	}
}

// drain is an owner's last phase, after Close's wake-up: Do now refuses new
// commands, but a caller that passed its check before Close may still be
// sending, so keep handling until none is left in flight and the queue is
// empty.
func (o *owners) drain(b *mailbox, handle func(op)) {
	for {
		select {
		case x := <-b.q:
			handle(x)
			continue
		default:
		}
		if o.gate.idle() && len(b.q) == 0 {
			return
		}
		runtime.Gosched()
	}
}

// close shuts the gate, then wakes and waits for each owner in mailbox order.
func (o *owners) close() error {
	o.stopOnce.Do(func() {
		o.gate.shut()
		close(o.stopping)
		for _, b := range o.boxes {
			// If the queue is full this waits for the owner to make room,
			// which close waits for anyway.
			b.q <- nil
			<-b.done
		}
	})
	for _, b := range o.boxes {
		<-b.done
	}
	return nil
}

func (o *owners) highWater() int64 {
	var hw int64
	for _, b := range o.boxes {
		hw = max(hw, b.highWater.Load())
	}
	return hw
}

func (o *owners) resetHighWater() int64 {
	var hw int64
	for _, b := range o.boxes {
		hw = max(hw, b.highWater.Swap(0))
	}
	return hw
}

func (o *owners) queueLen() int {
	n := 0
	for _, b := range o.boxes {
		n += len(b.q)
	}
	return n
}

func (o *owners) queueCap() int {
	n := 0
	for _, b := range o.boxes {
		n += cap(b.q)
	}
	return n
}

// applyAll applies a batch in order and commits once (group commit, if the
// machine commits); a failed Commit becomes the answer of every command it
// covered. The caller answers them.
func applyAll(batch []op, commit func() error) {
	for _, x := range batch {
		x.apply()
	}
	if commit != nil {
		if err := commit(); err != nil {
			for _, x := range batch {
				x.fail(err)
			}
		}
	}
}

// finish commits what was applied (if the machine commits), timing the
// commit as serial content of the resources x touched, then answers.
func finish(m *serialMeter, commit func() error, x op) {
	if commit != nil {
		t0 := m.start()
		err := commit()
		m.stopOn(t0, x.access())
		if err != nil {
			x.fail(err)
		}
	}
	x.ready() <- true
}
