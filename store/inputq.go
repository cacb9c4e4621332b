package store

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// DefaultQueueSize is the capacity of an InputQ's queue when no WithQueueSize
// option is given. It is large enough that the 1000 concurrent callers of the
// load tests enqueue without blocking, and small enough that a stalled owner
// pushes back on callers instead of buffering without bound.
const DefaultQueueSize = 1024

// Option configures an InputQ.
type Option func(*inputQConfig)

type inputQConfig struct {
	// queueSize is the queue's capacity; 0 means DefaultQueueSize.
	queueSize int
}

func (c inputQConfig) validate() error {
	if c.queueSize < 0 {
		return fmt.Errorf("store: queue size %d < 0", c.queueSize)
	}
	return nil
}

// WithQueueSize sets the capacity of the InputQ's queue: how many accepted
// commands may wait for the owner before Do blocks. 0 means DefaultQueueSize;
// a negative size makes NewInputQ panic.
func WithQueueSize(n int) Option {
	return func(c *inputQConfig) { c.queueSize = n }
}

// closedBit marks the InputQ closed inside state; the bits below it count the
// Do calls that are between their closed check and the end of their send.
const closedBit = int64(1) << 62

// request is one command on its way to the owner, with the slot its reply
// comes back in. Requests are pooled so that a command costs no allocation
// (without the pool: 3 allocations and 160 B per command, and Do about 15%
// slower in BenchmarkStore).
type request[C, R any] struct {
	cmd   C
	reply chan reply[R] // capacity 1: the owner never waits for a caller
}

type reply[R any] struct {
	r   R
	err error
}

// InputQ gives a machine to one owner goroutine, which applies the commands
// sent to it over a bounded channel, one at a time, in arrival order.
//
// A command passed to Do is either applied exactly once and its result
// returned, or never applied. It is accepted when it enters the queue. If ctx
// ends before that, Do returns ctx.Err() and the command is never applied. If
// ctx ends after that, Do returns ctx.Err() at once but the command is still
// applied: acceptance cannot be taken back, as with a request already written to
// a socket.
//
// Close stops accepting, lets the owner apply every accepted command and answer
// its caller, and returns once the owner goroutine has exited.
type InputQ[C, R any] struct {
	m Machine[C, R] // touched only by the owner goroutine
	// reqs is the queue. A nil request is Close's wake-up call to the owner.
	reqs     chan *request[C, R]
	stopping chan struct{} // closed by Close: stop accepting
	done     chan struct{} // closed by the owner when it has exited
	stopOnce sync.Once

	// state holds closedBit and the number of Do calls that may still put a
	// request into reqs; the owner exits only once it is closedBit alone and
	// reqs is empty, so no accepted command is left behind.
	//
	// Its two atomic adds per Do are not worth avoiding: dropping them (unsafe)
	// changed nothing measurable in BenchmarkStore, and the safe alternative,
	// callers watching done for a request stranded by the owner's exit, puts
	// a select on the reply path that made Do slower.
	state atomic.Int64

	// highWater is the largest queue length the owner has seen, itself
	// included, since the start or the last ResetQueueHighWater. The owner
	// writes it; ResetQueueHighWater zeroes it from any goroutine. The owner
	// compares against the shared value (a plain load on the machines we
	// measure, its cache line rarely written) so that a reset takes effect.
	highWater atomic.Int64

	pool sync.Pool // of *request[C, R]
}

var _ Store[int, int] = (*InputQ[int, int])(nil)

// NewInputQ starts the owner goroutine of a new InputQ around m. The caller must
// not use m directly afterwards, and must call Close to stop the goroutine.
func NewInputQ[C, R any](m Machine[C, R], opts ...Option) *InputQ[C, R] {
	var cfg inputQConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		panic(err)
	}
	if cfg.queueSize == 0 {
		cfg.queueSize = DefaultQueueSize
	}
	q := &InputQ[C, R]{
		m:        m,
		reqs:     make(chan *request[C, R], cfg.queueSize),
		stopping: make(chan struct{}),
		done:     make(chan struct{}),
	}
	q.pool.New = func() any {
		return &request[C, R]{reply: make(chan reply[R], 1)}
	}
	go q.run()
	return q
}

// Do sends cmd to the owner and waits for its result.
func (q *InputQ[C, R]) Do(ctx context.Context, cmd C) (R, error) {
	var zero R
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	if q.state.Add(1)&closedBit != 0 {
		q.state.Add(-1)
		return zero, ErrClosed
	}
	req := q.pool.Get().(*request[C, R])
	req.cmd = cmd
	// Try a plain send first: a select with a default is a non-blocking send
	// on one channel, while the three-way select of sendWait locks every
	// channel it names. The closed check above and ctx.Err() stand in for the
	// other two cases while the queue has room.
	select {
	case q.reqs <- req:
	default:
		if err := q.sendWait(ctx, req); err != nil {
			q.state.Add(-1)
			q.release(req)
			return zero, err
		}
	}
	q.state.Add(-1) // accepted: from here the owner answers whatever happens
	return q.wait(ctx, req)
}

// sendWait sends req into a full queue, unless ctx ends or Close is called
// first.
func (q *InputQ[C, R]) sendWait(ctx context.Context, req *request[C, R]) error {
	select {
	case q.reqs <- req:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-q.stopping:
		return ErrClosed
	}
}

// wait returns the reply to the accepted req, or ctx.Err() if ctx ends first.
func (q *InputQ[C, R]) wait(ctx context.Context, req *request[C, R]) (R, error) {
	done := ctx.Done()
	if done == nil {
		// The context can never end (context.Background): a plain receive
		// is cheaper than a select.
		rep := <-req.reply
		q.release(req)
		return rep.r, rep.err
	}
	select {
	case rep := <-req.reply:
		q.release(req)
		return rep.r, rep.err
	case <-done:
		// The owner will still apply the command and write the reply, so req
		// is left to the garbage collector rather than reused.
		var zero R
		return zero, ctx.Err()
	}
}

func (q *InputQ[C, R]) release(req *request[C, R]) {
	var zero C
	req.cmd = zero // drop references the command may hold
	q.pool.Put(req)
}

// Close stops accepting commands, waits until every accepted one has been
// applied and answered, and returns once the owner goroutine has exited. It is
// safe to call more than once and from several goroutines.
func (q *InputQ[C, R]) Close() error {
	q.stopOnce.Do(func() {
		q.state.Or(closedBit)
		close(q.stopping) // callers blocked on a full queue give up
		// Wake the owner, which receives from reqs alone. If the queue is
		// full this waits for the owner to make room, which Close waits for
		// anyway.
		q.reqs <- nil
	})
	<-q.done
	return nil
}

// QueueHighWater reports the largest number of commands the owner has found
// waiting in the queue, counting the one it took. 1 means no command ever
// waited behind another.
func (q *InputQ[C, R]) QueueHighWater() int64 { return q.highWater.Load() }

// ResetQueueHighWater starts a new measurement window for QueueHighWater and
// returns the high-water mark of the window it ends. A command the owner is
// applying while the reset happens may count in either window.
func (q *InputQ[C, R]) ResetQueueHighWater() int64 { return q.highWater.Swap(0) }

// QueueCap reports the capacity of the queue.
func (q *InputQ[C, R]) QueueCap() int { return cap(q.reqs) }

func (q *InputQ[C, R]) run() {
	defer close(q.done)
	apply := func(req *request[C, R]) {
		if n := int64(len(q.reqs)) + 1; n > q.highWater.Load() {
			q.highWater.Store(n)
		}
		r, err := q.m.Apply(req.cmd)
		req.reply <- reply[R]{r: r, err: err}
	}
	for {
		req := q.next()
		if req == nil {
			break // Close was called
		}
		apply(req)
	}
	// Do now refuses new commands, but a caller that passed its check before
	// Close may still be sending: keep applying until none is left in flight
	// and the queue is empty.
	for {
		select {
		case req := <-q.reqs:
			apply(req)
			continue
		default:
		}
		if q.state.Load() == closedBit && len(q.reqs) == 0 {
			return
		}
		runtime.Gosched()
	}
}

// next returns the next request, yielding once before it blocks on an empty
// queue.
//
// Blocking parks the owner, and every park costs a wake-up (a trip through the
// scheduler, often a futex call) when the next command arrives. The callers
// that will send the next commands are usually runnable, waiting for a P:
// yielding lets them queue their commands first, so the owner goes on without
// parking and each wake-up serves many commands. In BenchmarkStore with 8 and
// 64 callers per P this took the owner from one park per command to one per
// thousands of commands and cut the cost of Do by 20-40%; with a single caller
// it changed nothing measurable.
func (q *InputQ[C, R]) next() *request[C, R] {
	select {
	case req := <-q.reqs:
		return req
	default:
	}
	runtime.Gosched()
	return <-q.reqs
}
