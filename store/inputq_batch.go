package store

import "context"

// inputQBatchEngine is the inputQ-batch design: one owner goroutine, as
// inputQ, but each time it wakes it takes up to the batch limit of the
// commands already queued, applies them all, commits once (group commit: one
// write and one sync cover the batch), and only then answers them. Under
// load one wake-up and one sync serve many commands; alone, a command waits
// for nobody.
//
// With a committing machine the sync runs on a second goroutine, the
// syncer, so that the owner applies the next batch while the last one is
// being made durable (a pipeline of depth two, as LMAX's journaller or
// etcd's raft log does). The syncer commits the batches in the order they
// were applied and answers a batch only after its commit, and a commit makes
// durable everything appended before it: no answer reflects a state that is
// not on disk. Commit is called while the owner applies (appends), which
// the Committer must allow (the write-ahead log does: its appends and syncs
// take its own lock).
type inputQBatchEngine struct {
	*owners
	box    *mailbox
	commit func() error
	batch  []op // owned by the owner goroutine (without a syncer)

	// With a committing machine: free holds the empty batch buffers (two),
	// syncs the applied batches the syncer commits and answers in order.
	free, syncs chan []op
	synced      chan struct{} // closed when the syncer has exited
}

func newInputQBatchEngine(mi machineInfo, cfg Config) engine {
	syncers := 0
	if mi.commit != nil {
		syncers = 1 // a serial stage of its own: resource 1
	}
	e := &inputQBatchEngine{owners: newOwners(1, syncers, cfg), commit: mi.commit, batch: make([]op, 0, cfg.BatchLimit)}
	e.box = e.boxes[0]
	if e.commit != nil {
		e.free, e.syncs, e.synced = make(chan []op, 2), make(chan []op, 2), make(chan struct{})
		e.free <- e.batch
		e.free <- make([]op, 0, cfg.BatchLimit)
		go e.syncer() // stopped by run, which closes syncs
	}
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
	if e.syncs != nil {
		defer func() { <-e.synced }() // every batch answered before the owner counts as exited
		defer close(e.syncs)
	}
	for closing := false; !closing; {
		x := e.box.next()
		if x == nil {
			break // Close was called
		}
		batch := e.buffer()
		batch = append(batch, x)
	fill:
		for len(batch) < cap(batch) {
			select {
			case y := <-e.box.q:
				if y == nil {
					closing = true // answer this batch, then drain
					break fill
				}
				batch = append(batch, y)
			default:
				break fill
			}
		}
		e.flush(batch)
	}
	e.drain(e.box, func(x op) { e.flush(append(e.buffer(), x)) })
}

// buffer returns an empty batch: the owner's own, or with a syncer the next
// free one (waiting while both are being committed).
func (e *inputQBatchEngine) buffer() []op {
	if e.free == nil {
		return e.batch[:0]
	}
	select {
	case b := <-e.free:
		return b
	default:
	}
	return <-e.free
}

// flush applies the batch (the owner's serial busy time); then, without a
// syncer, answers it at once, with one, hands it to the syncer to commit
// and answer.
//
// The batch's waits end here, as the owner takes it; the batch is recorded
// when its applies are timed.
func (e *inputQBatchEngine) flush(batch []op) {
	e.meter.tookAll(batch)
	t0 := e.meter.start()
	for _, x := range batch {
		x.apply()
	}
	e.meter.stop(t0, 0)
	if t0 >= 0 {
		e.meter.batch(len(batch))
	}
	if e.syncs == nil {
		answer(batch)
		return
	}
	e.syncs <- batch
}

// syncer commits the applied batches in order, once each, and answers them.
func (e *inputQBatchEngine) syncer() {
	defer close(e.synced)
	for batch := range e.syncs {
		t0 := e.meter.start()
		err := e.commit()
		e.meter.stop(t0, syncerResource) // the commit is its busy time; answering is not
		if err != nil {
			for _, x := range batch {
				x.fail(err)
			}
		}
		answer(batch)
		e.free <- batch[:0]
	}
}

// syncerResource is the syncer's index in the serial stats, after the owner.
const syncerResource = 1

// answer signals every command of a batch and clears it: each caller may
// reuse its op at once.
func answer(batch []op) {
	for i, x := range batch {
		x.ready() <- true
		batch[i] = nil
	}
}
