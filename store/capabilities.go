package store

import "strings"

// Capability is a set of optional things a machine can do beyond Apply. A
// design lists the capabilities it needs in its registry row; New refuses a
// machine that lacks one with ErrUnsupported.
type Capability uint8

const (
	// CapReads: the machine says which commands only read (ReadOnly), so
	// that they may run side by side (rwmutex).
	CapReads Capability = 1 << iota
	// CapShards: the machine's state splits into shards and it says which
	// shards a command touches (Sharded), so that commands on disjoint
	// shards may run side by side (sharded, sharded-inputQ).
	CapShards
	// CapAtomic: the machine has a lock-free Apply that is safe to call
	// from many goroutines at once (Atomic).
	CapAtomic
	// CapCommit: the machine makes applied commands durable in Commit
	// (Committer). Only designs marked Durable serve such a machine.
	CapCommit
	// CapTx: the machine runs each command as a transaction of its own in
	// a database, safe to call from many goroutines at once, the database's
	// row locks keeping it serializable (Transactional).
	CapTx
	// CapOwned: the machine serves, from memory, the keys routed to this
	// process, loading each from a database shared with other replicas on
	// first use and writing every change through to it under an ownership
	// epoch the database checks (Owned).
	CapOwned
)

var capNames = []struct {
	c    Capability
	name string
}{{CapReads, "reads"}, {CapShards, "shards"}, {CapAtomic, "atomic"}, {CapCommit, "commit"}, {CapTx, "tx"}, {CapOwned, "owned"}}

func (c Capability) String() string {
	var parts []string
	for _, n := range capNames {
		if c&n.c != 0 {
			parts = append(parts, n.name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "+")
}

// ReadOnly is implemented by machines that can tell which commands only read.
// Apply of read-only commands may then run concurrently with each other (not
// with a writing command): a read-only Apply must not write anything, not even
// a cache.
type ReadOnly[C any] interface {
	ReadOnly(cmd C) bool
}

// Sharded is implemented by machines whose state splits into independent
// shards. SetShards(n) is called once, before the first Apply, by a design
// that uses shards. ShardsOf reports which shards a command touches: a < 0
// means every shard; otherwise a <= b are the one (a == b) or two shards
// touched. Apply may then run concurrently for commands whose shard sets are
// disjoint.
type Sharded[C any] interface {
	SetShards(n int)
	ShardsOf(cmd C) (a, b int)
}

// Atomic is implemented by machines with a lock-free Apply: ApplyAtomic may be
// called by any number of goroutines at once and is linearizable on its own.
type Atomic[C, R any] interface {
	ApplyAtomic(cmd C) (R, error)
}

// Transactional is implemented by machines whose state lives in a database:
// ApplyTx runs cmd as one transaction, committed before it returns, and may
// be called by any number of goroutines at once; the database's locks order
// the transactions that touch the same rows.
type Transactional[C, R any] interface {
	ApplyTx(cmd C) (R, error)
}

// Owned is implemented by machines whose state lives in a database shared by
// several replicas, each replica owning the keys routed to it: ApplyOwned
// answers from the owned keys' state in memory (loaded on first use, taking
// ownership in the database) and writes each change through, committed
// before it returns, refused by the database once another replica has taken
// the key over. It is never called by two goroutines at once.
type Owned[C, R any] interface {
	ApplyOwned(cmd C) (R, error)
}

// Committer is implemented by durable machines: Apply records a state change,
// Commit makes every change recorded so far durable. A design calls Commit
// after applying and before answering: a lock design once per command inside
// its critical section, a batching design once per batch (group commit). A
// Commit error is returned to every caller whose command it covered.
type Committer interface {
	Commit() error
}

// CapabilityReporter is implemented by decorators (added CPU work, a
// write-ahead log), which carry every capability method and forward it to
// the machine they wrap: Capabilities says which ones that machine really
// has. Without it, capabilities are found by type assertion.
type CapabilityReporter interface {
	Capabilities() Capability
}

// QueueReporter is implemented by the stores of owner-style designs: how many
// accepted commands wait for an owner.
type QueueReporter interface {
	// QueueHighWater is the largest queue length an owner has seen, the
	// command it took included, since the start or the last reset.
	QueueHighWater() int64
	// ResetQueueHighWater starts a new window and returns the old mark.
	ResetQueueHighWater() int64
	// QueueLen is the number of commands waiting now.
	QueueLen() int
}

// CapabilitiesOf reports the capabilities m has.
func CapabilitiesOf[C, R any](m Machine[C, R]) Capability {
	if r, ok := m.(CapabilityReporter); ok {
		return r.Capabilities()
	}
	var c Capability
	if _, ok := m.(ReadOnly[C]); ok {
		c |= CapReads
	}
	if _, ok := m.(Sharded[C]); ok {
		c |= CapShards
	}
	if _, ok := m.(Atomic[C, R]); ok {
		c |= CapAtomic
	}
	if _, ok := m.(Committer); ok {
		c |= CapCommit
	}
	if _, ok := m.(Transactional[C, R]); ok {
		c |= CapTx
	}
	if _, ok := m.(Owned[C, R]); ok {
		c |= CapOwned
	}
	return c
}
