package store

import (
	"context"
	"sync"
)

// shardedEngine is the sharded design: one lock per shard of a machine that
// splits (CapShards). A command locks the one or two shards it touches, in
// increasing shard order, so two transfers between the same shards in
// opposite directions cannot deadlock; a command on every shard (a bank
// summary, a reset) locks them all, in order.
type shardedEngine struct {
	// locks[i] protects shard i of the machine; closed is written only with
	// every lock held, so reading it under any one is safe.
	locks  []paddedMutex
	closed bool
}

// paddedMutex keeps each shard's lock on its own cache line, so that callers
// on different shards do not slow each other down through false sharing.
type paddedMutex struct {
	sync.Mutex
	_ [56]byte
}

func newShardedEngine(_ machineInfo, cfg Config) engine {
	return &shardedEngine{locks: make([]paddedMutex, cfg.Shards)}
}

func (e *shardedEngine) acquire(_ context.Context, a access) error {
	e.lock(a)
	if e.closed {
		e.release(a)
		return ErrClosed
	}
	return nil
}

func (e *shardedEngine) lock(a access) {
	if a.a < 0 {
		for i := range e.locks {
			e.locks[i].Lock()
		}
		return
	}
	e.locks[a.a].Lock()
	if a.b != a.a {
		e.locks[a.b].Lock()
	}
}

func (e *shardedEngine) release(a access) {
	if a.a < 0 {
		for i := range e.locks {
			e.locks[i].Unlock()
		}
		return
	}
	if a.b != a.a {
		e.locks[a.b].Unlock()
	}
	e.locks[a.a].Unlock()
}

func (e *shardedEngine) resources() int { return len(e.locks) }

func (e *shardedEngine) close() error {
	all := access{a: -1}
	e.lock(all)
	e.closed = true
	e.release(all)
	return nil
}
