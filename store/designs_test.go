package store

import (
	"sync"
)

// design is one concurrency design under test: every contract test,
// concurrency test, linearizability check and benchmark ranges over the
// registry through designsFor, so a design added to the registry goes
// through everything.
type design[C, R any] struct {
	name string
	new  func(m Machine[C, R]) Store[C, R]
}

// designsFor lists every registry design that serves machines like sample
// (Supports), in registry order, and, for the owner designs, a variant with a
// queue of one: callers then wait for the owner almost always, exercising the
// blocked-send paths that the default queue rarely reaches. Sharded designs
// get a two-shard variant too, where most transfers cross shards.
func designsFor[C, R any](sample Machine[C, R]) []design[C, R] {
	var out []design[C, R]
	with := func(name string, cfg Config) func(Machine[C, R]) Store[C, R] {
		return func(m Machine[C, R]) Store[C, R] {
			s, err := New(name, m, cfg)
			if err != nil {
				panic(err)
			}
			return s
		}
	}
	for _, d := range Designs() {
		if Supports(d.Name, sample) != nil {
			continue
		}
		out = append(out, design[C, R]{d.Name, with(d.Name, Config{})})
		if d.Owner {
			out = append(out, design[C, R]{d.Name + "/queue1", with(d.Name, Config{QueueSize: 1})})
		}
		if d.Needs&CapShards != 0 {
			out = append(out, design[C, R]{d.Name + "/shards2", with(d.Name, Config{Shards: 2})})
		}
	}
	return out
}

// capable gives a test machine every capability, so the contract tests reach
// every design: nothing is read-only, everything is on shard 0 (so the
// sharded designs serialise it), and ApplyAtomic and ApplyTx take a lock of
// their own (the atomic and db-rowlock designs' contract is about ctx and
// Close, not about the machine).
type capable[C, R any] struct {
	m  Machine[C, R]
	mu sync.Mutex // serialises ApplyAtomic and ApplyTx
}

func capableOf[C, R any](m Machine[C, R]) *capable[C, R] { return &capable[C, R]{m: m} }

func (c *capable[C, R]) Apply(cmd C) (R, error) { return c.m.Apply(cmd) }
func (c *capable[C, R]) ReadOnly(C) bool        { return false }
func (c *capable[C, R]) SetShards(int)          {}
func (c *capable[C, R]) ShardsOf(C) (int, int)  { return 0, 0 }
func (c *capable[C, R]) ApplyAtomic(cmd C) (R, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m.Apply(cmd)
}

func (c *capable[C, R]) ApplyTx(cmd C) (R, error) { return c.ApplyAtomic(cmd) }

// ApplyOwned is called by routed-owner's one owner goroutine: no lock.
func (c *capable[C, R]) ApplyOwned(cmd C) (R, error) { return c.m.Apply(cmd) }
