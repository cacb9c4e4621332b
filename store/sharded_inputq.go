package store

import "context"

// shardedInputQEngine is the sharded-inputQ design: one owner goroutine per
// shard of a machine that splits (CapShards). A command on one shard goes to
// that shard's owner and is applied there, beside the other shards' owners.
//
// A command on two shards a < b must be applied atomically with respect to
// both, or a reader could see money leave a and not yet reach b. It travels
// up the owners in shard order: the owner of a takes it from its queue and
// forwards it to the owner of b, then waits; the owner of b applies it — while
// a's owner is parked on it, so nothing else touches shard a — and then
// releases a's owner and answers the caller. A command on every shard (a bank
// summary or reset) travels through all owners, 0 to n-1, the same way. An
// owner waits only for owners of later shards, so the waits cannot form a
// cycle, and forwarding never deadlocks; it is the ordered locking of the
// sharded design with owners for locks. Docs: docs/decisions.md.
type shardedInputQEngine struct {
	*owners
	commit func() error
}

func newShardedInputQEngine(mi machineInfo, cfg Config) engine {
	e := &shardedInputQEngine{owners: newOwners(cfg.Shards, 0, cfg), commit: mi.commit}
	e.countRuns()
	for i := range e.boxes {
		go e.run(i) // stopped by close
	}
	return e
}

func (e *shardedInputQEngine) exec(ctx context.Context, x op) error {
	first := max(x.access().a, 0)
	if err := e.admit(ctx, e.boxes[first], x); err != nil {
		return err
	}
	return await(ctx, x)
}

func (e *shardedInputQEngine) run(i int) {
	b := e.boxes[i]
	defer close(b.done)
	for {
		x := b.next()
		if x == nil {
			break // Close was called
		}
		e.handle(i, x)
	}
	b.closed()
	// Owners close in shard order, so every owner that could forward to
	// this one has exited: what is left comes from callers.
	e.drain(b, func(x op) { e.handle(i, x) })
}

// handle is owner i's part of x: forward it up and wait, or apply it.
func (e *shardedInputQEngine) handle(i int, x op) {
	a := x.access()
	next := -1
	switch {
	case a.a < 0 && i < len(e.boxes)-1:
		next = i + 1
	case a.a >= 0 && i == a.a && a.b != a.a:
		next = a.b
	}
	if next >= 0 {
		// Forwarded commands skip the gate: they were accepted already,
		// and the later owner outlives this one.
		e.boxes[next].q <- x
		<-e.boxes[i].resume
		return
	}
	e.meter.took(x) // its wait ends with the owner that applies it
	t0 := e.meter.start()
	x.apply()
	e.meter.stopOn(t0, a) // every shard x holds
	// Release the earlier owners parked on x: they may take their next
	// commands while x is committed and answered, since x's effects are
	// in place.
	switch {
	case a.a < 0:
		for j := range len(e.boxes) - 1 {
			e.boxes[j].resume <- struct{}{}
		}
	case a.b != a.a:
		e.boxes[a.a].resume <- struct{}{}
	}
	finish(e.meter, e.commit, x)
}
