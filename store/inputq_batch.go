package store

import "context"

// inputQBatchEngine is the inputQ-batch design: one owner goroutine, as
// inputQ, but each time it wakes it takes up to the batch limit of the
// commands already queued, applies them all, commits once (group commit: one
// write and one sync cover the batch), and only then answers them. Under
// load one wake-up and one sync serve many commands; alone, a command waits
// for nobody.
type inputQBatchEngine struct {
	*owners
	box    *mailbox
	commit func() error
	batch  []op // owned by the owner goroutine
}

func newInputQBatchEngine(mi machineInfo, cfg Config) engine {
	e := &inputQBatchEngine{owners: newOwners(1, cfg.QueueSize), commit: mi.commit, batch: make([]op, 0, cfg.BatchLimit)}
	e.box = e.boxes[0]
	go e.run() // stopped by close
	return e
}

func (e *inputQBatchEngine) exec(ctx context.Context, x op) error {
	if err := e.admit(ctx, e.box, x); err != nil {
		return err
	}
	return await(ctx, x)
}

func (e *inputQBatchEngine) run() {
	defer close(e.box.done)
	for closing := false; !closing; {
		x := e.box.next()
		if x == nil {
			break // Close was called
		}
		e.batch = append(e.batch[:0], x)
	fill:
		for len(e.batch) < cap(e.batch) {
			select {
			case y := <-e.box.q:
				if y == nil {
					closing = true // answer this batch, then drain
					break fill
				}
				e.batch = append(e.batch, y)
			default:
				break fill
			}
		}
		e.flush()
	}
	e.drain(e.box, func(x op) {
		e.batch = append(e.batch[:0], x)
		e.flush()
	})
}

// flush applies the batch, commits once, then answers every command in it.
func (e *inputQBatchEngine) flush() {
	applyAll(e.batch, e.commit)
	for i, x := range e.batch {
		x.ready() <- true
		e.batch[i] = nil // the caller may reuse x at once
	}
}
