package store

import "context"

// inputQEngine is the inputQ design: one owner goroutine alone touches the
// machine and applies the commands sent to it over a bounded channel, one at
// a time, in arrival order, answering each before it takes the next (and, with
// a committing machine, committing each before it answers).
type inputQEngine struct {
	*owners
	box    *mailbox
	commit func() error
}

func newInputQEngine(mi machineInfo, cfg Config) engine {
	e := &inputQEngine{owners: newOwners(1, 0, cfg), commit: mi.commit}
	e.box = e.boxes[0]
	e.countRuns()
	go e.run() // stopped by close
	return e
}

func (e *inputQEngine) exec(ctx context.Context, x op) error {
	if err := e.admit(ctx, e.box, x); err != nil {
		return err
	}
	return await(ctx, x)
}

// handle applies x and answers it; the apply and the commit are the
// owner's serial busy time, the receive and the answer are not. x's wait
// ends here, as the owner takes it.
func (e *inputQEngine) handle(x op) {
	e.meter.took(x)
	t0 := e.meter.start()
	x.apply()
	e.meter.stop(t0, 0)
	finish(e.meter, e.commit, x)
}

func (e *inputQEngine) run() {
	defer close(e.box.done)
	for {
		x := e.box.next()
		if x == nil {
			break // Close was called
		}
		e.handle(x)
	}
	e.box.closed()
	e.drain(e.box, e.handle)
}

// Option configures an InputQ made by NewInputQ.
type Option func(*Config)

// WithQueueSize sets the capacity of the InputQ's queue: how many accepted
// commands may wait for the owner before Do blocks. 0 means DefaultQueueSize;
// a negative size makes NewInputQ panic.
func WithQueueSize(n int) Option {
	return func(c *Config) { c.QueueSize = n }
}

// InputQ is the inputQ design with its types named: what New("inputQ", …)
// returns, for callers who want the concrete type and its queue gauges.
//
// A command passed to Do is either applied exactly once and its result
// returned, or never applied. It is accepted when it enters the queue. If ctx
// ends before that, Do returns ctx.Err() and the command is never applied. If
// ctx ends after that, Do returns ctx.Err() at once but the command is still
// applied: acceptance cannot be taken back, as with a request already written
// to a socket. Close stops accepting, lets the owner apply every accepted
// command and answer its caller, and returns once the owner goroutine has
// exited.
type InputQ[C, R any] struct{ *facade[C, R] }

// NewInputQ starts the owner goroutine of a new InputQ around m. The caller
// must not use m directly afterwards, and must call Close to stop the
// goroutine.
func NewInputQ[C, R any](m Machine[C, R], opts ...Option) *InputQ[C, R] {
	var cfg Config
	for _, o := range opts {
		o(&cfg)
	}
	return &InputQ[C, R]{mustNew("inputQ", m, cfg)}
}
