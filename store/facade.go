package store

import (
	"context"
	"sync"
	"sync/atomic"
)

// Every design in the registry is an engine with the command types erased,
// behind one generic façade that owns the typed parts: the machine, its
// capability methods and the pooled per-call slots. So each design is one
// plain file, every design is reached through the same calling convention (a
// fair comparison), and New needs no case per design.
//
// Engines come in two styles. A locker guards the machine while the caller
// applies the command itself (mutex, rwmutex, sharded, atomic): no slot, no
// hand-off. An executor takes the command as an op and applies it on some
// goroutine, maybe another caller's or an owner's (the inputQs, combining).

// machineInfo is what an engine may know about the machine it guards.
type machineInfo struct {
	caps Capability
	// commit is the machine's Commit, nil unless CapCommit. Executors call
	// it; for lockers the façade calls it inside the critical section.
	commit func() error
}

// access is what a design needs to know about one command: computed by the
// façade from the machine's capabilities, zero where the machine has none.
type access struct {
	read bool // only reads (CapReads)
	a, b int  // shards touched (CapShards): a < 0 every shard, else a <= b
}

type engine interface {
	close() error
}

type locker interface {
	engine
	// acquire returns once the command may be applied by the caller, or
	// returns ErrClosed (or ctx.Err()) without guarding anything.
	acquire(ctx context.Context, a access) error
	release(a access)
}

type executor interface {
	engine
	// exec returns nil once x has been applied and its result stored in x.
	// Otherwise x was not applied (ErrClosed, ctx.Err() before acceptance)
	// or will be applied without anyone waiting (ctx.Err() after it); in
	// both cases the engine may still hold x, so the caller drops it.
	exec(ctx context.Context, x op) error
}

// op is one command on its way through an executor, with the slot for its
// result.
type op interface {
	apply()           // Apply it; the result stays in the op
	fail(err error)   // replace the result: its Commit failed
	access() access   // as computed by the façade
	ready() chan bool // capacity 1: the executor signals here once the op is applied
	node() *opNode    // the op's own link for combining's publication list
	// markDone and takeDone signal completion through a flag instead of
	// ready, for a waiter that polls (combining's spinners): a channel
	// operation takes the channel's lock, a flag is one atomic.
	markDone()
	takeDone() bool // true once markDone was called, and resets the flag
	// handoff is the word on which inputQ-spin's owner and a caller that
	// polls for its answer, then blocks, agree who signals whom.
	handoff() *atomic.Int32
	// waitStart is the meter's clock reading as the op set out for the
	// serial resource, -1 if its wait is not timed.
	waitStart() int64
}

// opNode links published ops (combining). It lives inside the op, so
// publishing allocates nothing.
type opNode struct {
	next *opNode
	op   op
}

// call is the façade's op: a pooled slot for one command and its result.
type call[C, R any] struct {
	f    *facade[C, R]
	cmd  C
	r    R
	err  error
	acc  access
	w0   int64 // waitStart
	done chan bool
	fin  atomic.Bool
	hand atomic.Int32
	n    opNode
}

func (c *call[C, R]) apply()                 { c.r, c.err = c.f.apply(c.cmd) }
func (c *call[C, R]) fail(err error)         { var zero R; c.r, c.err = zero, err }
func (c *call[C, R]) access() access         { return c.acc }
func (c *call[C, R]) ready() chan bool       { return c.done }
func (c *call[C, R]) node() *opNode          { return &c.n }
func (c *call[C, R]) markDone()              { c.fin.Store(true) }
func (c *call[C, R]) takeDone() bool         { return c.fin.Load() && c.fin.Swap(false) }
func (c *call[C, R]) handoff() *atomic.Int32 { return &c.hand }
func (c *call[C, R]) waitStart() int64       { return c.w0 }

// facade is the Store of every registry design.
type facade[C, R any] struct {
	design Design
	apply  func(C) (R, error) // m.Apply, or ApplyAtomic for a design that needs CapAtomic
	reads  func(C) bool       // nil unless the design uses CapReads
	shards func(C) (int, int) // nil unless the design uses CapShards
	commit func() error       // nil unless the machine commits
	lk     locker             // one of lk and ex is set
	ex     executor
	eng    engine
	pool   sync.Pool // of *call[C, R]
	// hold samples a locker's holds and waits (nil: not measured, or
	// nothing to measure); waits is an executor's meter, whose clock its
	// commands' waits start on; measured is Config.MeasureSerial.
	hold     *serialMeter
	waits    *serialMeter
	measured bool
}

var _ Store[int, int] = (*facade[int, int])(nil)

func newFacade[C, R any](d Design, m Machine[C, R], caps Capability, cfg Config) *facade[C, R] {
	f := &facade[C, R]{design: d, apply: m.Apply}
	if d.Needs&CapAtomic != 0 {
		f.apply = m.(Atomic[C, R]).ApplyAtomic
	}
	if d.Needs&CapReads != 0 {
		f.reads = m.(ReadOnly[C]).ReadOnly
	}
	if d.Needs&CapShards != 0 {
		sh := m.(Sharded[C])
		sh.SetShards(cfg.Shards)
		f.shards = sh.ShardsOf
	}
	mi := machineInfo{caps: caps}
	switch {
	case d.Needs&CapTx != 0:
		// Each ApplyTx commits its own transaction: nothing to commit
		// after it.
		f.apply = m.(Transactional[C, R]).ApplyTx
	case d.Needs&CapOwned != 0:
		// Each ApplyOwned writes its change through and commits it.
		f.apply = m.(Owned[C, R]).ApplyOwned
	case caps&CapCommit != 0:
		f.commit = m.(Committer).Commit
		mi.commit = f.commit
	}
	f.eng = d.new(mi, cfg)
	f.measured = cfg.MeasureSerial
	switch e := f.eng.(type) {
	case locker:
		f.lk = e
		if h, ok := e.(holder); ok {
			f.hold = newSerialMeter(h.resources(), cfg)
		}
	case executor:
		f.ex = e
		if se, ok := e.(serialEngine); ok {
			f.waits = se.serialMeter()
		}
		f.pool.New = func() any {
			c := &call[C, R]{f: f, done: make(chan bool, 1)}
			c.n.op = c
			return c
		}
	default:
		panic("store: design " + d.Name + " is neither a locker nor an executor")
	}
	return f
}

func (f *facade[C, R]) access(cmd C) access {
	var a access
	if f.reads != nil {
		a.read = f.reads(cmd)
	}
	if f.shards != nil {
		a.a, a.b = f.shards(cmd)
	}
	return a
}

// Do applies cmd through the design. A context that has already ended
// returns ctx.Err() and applies nothing.
func (f *facade[C, R]) Do(ctx context.Context, cmd C) (R, error) {
	var zero R
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	if f.lk != nil {
		acc := f.access(cmd)
		// Decided before the lock is taken, so that a hold pays for the
		// measurement only when it is timed. Readers share the lock: theirs
		// are no serial holds; they do wait for it.
		timed, waits := f.hold.pick(acc.read)
		var w0 int64
		if waits {
			w0 = f.hold.now()
		}
		if err := f.lk.acquire(ctx, acc); err != nil {
			return zero, err
		}
		var t0 int64
		if timed || waits {
			t0 = f.hold.now() // the hold's start, the wait's end
		}
		r, err := f.apply(cmd)
		if f.commit != nil {
			if cerr := f.commit(); cerr != nil {
				r, err = zero, cerr
			}
		}
		if !timed && !waits {
			f.lk.release(acc)
			return r, err
		}
		var d int64
		if timed {
			d = f.hold.since(t0)
		}
		f.lk.release(acc)
		// Outside the lock: the hold is over.
		if timed {
			f.hold.held(acc, d)
		}
		if waits {
			f.hold.waited(w0, t0)
		}
		return r, err
	}
	c := f.pool.Get().(*call[C, R])
	c.cmd, c.acc, c.w0 = cmd, f.access(cmd), f.waits.waitStart()
	if err := f.ex.exec(ctx, c); err != nil {
		return zero, err // c may still be in the engine's hands: not reused
	}
	r, err := c.r, c.err
	var zc C
	c.cmd, c.r, c.err = zc, zero, nil // drop references the command and result hold
	f.pool.Put(c)
	return r, err
}

// Close stops the store as its design documents; safe to call more than once.
func (f *facade[C, R]) Close() error { return f.eng.close() }

// Design reports the registry row the store was made from.
func (f *facade[C, R]) Design() Design { return f.design }

// holder is implemented by lockers with serial resources: how many (one
// lock, or one per shard, indexed as access's shards).
type holder interface {
	resources() int
}

// serialEngine is implemented by executors that measure their serial
// resources (nil: not asked to).
type serialEngine interface {
	serialMeter() *serialMeter
}

// SerialStats implements SerialReporter.
func (f *facade[C, R]) SerialStats() (SerialStats, bool) {
	if !f.measured {
		return SerialStats{}, false
	}
	m := f.hold
	if e, ok := f.eng.(serialEngine); ok {
		m = e.serialMeter()
	}
	if m == nil {
		return SerialStats{}, true // no serial resource (atomic)
	}
	return m.stats(), true
}

// queueEngine is implemented by engines with owner queues.
type queueEngine interface {
	highWater() int64
	resetHighWater() int64
	queueLen() int
	queueCap() int
}

// QueueHighWater implements QueueReporter; 0 for a design without a queue.
func (f *facade[C, R]) QueueHighWater() int64 {
	if q, ok := f.eng.(queueEngine); ok {
		return q.highWater()
	}
	return 0
}

// ResetQueueHighWater implements QueueReporter.
func (f *facade[C, R]) ResetQueueHighWater() int64 {
	if q, ok := f.eng.(queueEngine); ok {
		return q.resetHighWater()
	}
	return 0
}

// QueueLen implements QueueReporter.
func (f *facade[C, R]) QueueLen() int {
	if q, ok := f.eng.(queueEngine); ok {
		return q.queueLen()
	}
	return 0
}

// QueueCap reports the capacity of an owner's queue (the sum over shards); 0
// for a design without a queue.
func (f *facade[C, R]) QueueCap() int {
	if q, ok := f.eng.(queueEngine); ok {
		return q.queueCap()
	}
	return 0
}
