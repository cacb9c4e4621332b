// Package durable makes a machine durable: every command that changed state
// is appended to a write-ahead log (package wal) as the machine applies it,
// and Commit — which every design calls before it answers — makes what was
// appended durable. Lock designs call Commit inside their critical section
// for each command; inputQ-batch and combining once per batch, so one
// fdatasync covers the whole batch (group commit).
//
// The machine also takes the log's snapshots: once wal.Options.SnapshotEvery
// records have been appended, the next Commit stops Apply for as long as it
// takes to serialise the state and write it, so that the snapshot is exactly
// the state after every logged record.
package durable

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/locklab/locklab/server/internal/wal"
	"github.com/locklab/locklab/store"
)

// Codec turns a machine's state-changing commands into log records and its
// state into snapshots, and back; workload.CounterLog, BankLog and KVLog are
// codecs. Replay and Restore act on the bare machine the codec was made for,
// not through any decorator.
type Codec[C, R any] interface {
	// Encode appends the record of cmd, applied with result r and no
	// error, to dst; ok is false if cmd changed nothing.
	Encode(dst []byte, cmd C, r R) (rec []byte, ok bool)
	// Replay applies a record.
	Replay(rec []byte) error
	// Snapshot returns the state; Restore replaces the state with one
	// Snapshot returned.
	Snapshot() []byte
	Restore(state []byte) error
}

// Machine is a durable machine. It has every capability method of the
// machine it wraps except ApplyAtomic and ApplyTx — a lock-free path, or a
// transaction per caller, has no place to log in order — and reports through
// Capabilities which ones the inner machine really has, without CapAtomic and
// CapTx and with CapCommit.
type Machine[C, R any] struct {
	inner  store.Machine[C, R]
	codec  Codec[C, R]
	log    *wal.Log
	ro     store.ReadOnly[C] // nil if inner has no read-only commands
	shards store.Sharded[C]  // nil if inner is not sharded
	caps   store.Capability
	bufs   sync.Pool // *[]byte: record buffers; Apply runs concurrently under the sharded designs

	// snapMu is held shared by Apply and exclusively while a snapshot is
	// taken: the sharded designs apply disjoint commands concurrently, and
	// a snapshot must see every applied command logged and none half done.
	snapMu sync.RWMutex
	// snapping lets one Commit take a due snapshot while the others go on.
	snapping atomic.Bool
}

var (
	_ store.Machine[int, int]  = (*Machine[int, int])(nil)
	_ store.ReadOnly[int]      = (*Machine[int, int])(nil)
	_ store.Sharded[int]       = (*Machine[int, int])(nil)
	_ store.Committer          = (*Machine[int, int])(nil)
	_ store.CapabilityReporter = (*Machine[int, int])(nil)
)

// Open opens (or creates) the log in dir, recovers the codec's machine from
// it, and returns m made durable. m is what the designs apply commands to:
// the codec's machine itself, or that machine inside decorators (work.New).
// A log with no snapshot yet — a new one — gets one at once, so the state
// it starts from is in the log, not in the flags of the next start.
func Open[C, R any](dir string, m store.Machine[C, R], codec Codec[C, R], opts wal.Options) (*Machine[C, R], wal.RecoveryInfo, error) {
	log, info, err := wal.Open(dir, opts, codec.Restore, codec.Replay)
	if err != nil {
		return nil, info, err
	}
	if info.Snapshot == 0 {
		if err := log.Snapshot(codec.Snapshot()); err != nil {
			_ = log.Close()
			return nil, info, fmt.Errorf("durable: the first snapshot of %s: %w", dir, err)
		}
	}
	return New(m, codec, log), info, nil
}

// New makes m durable through log, which already holds m's state.
func New[C, R any](m store.Machine[C, R], codec Codec[C, R], log *wal.Log) *Machine[C, R] {
	d := &Machine[C, R]{
		inner: m,
		codec: codec,
		log:   log,
		caps:  store.CapabilitiesOf(m)&^(store.CapAtomic|store.CapTx|store.CapOwned) | store.CapCommit,
		bufs:  sync.Pool{New: func() any { b := make([]byte, 0, 64); return &b }},
	}
	d.ro, _ = m.(store.ReadOnly[C])
	d.shards, _ = m.(store.Sharded[C])
	return d
}

// Apply applies cmd and, if it changed state, appends its record. The record
// is durable once Commit returns nil.
func (d *Machine[C, R]) Apply(cmd C) (R, error) {
	d.snapMu.RLock()
	defer d.snapMu.RUnlock()
	r, err := d.inner.Apply(cmd)
	if err != nil {
		return r, err // refused: nothing changed
	}
	bp := d.bufs.Get().(*[]byte)
	if rec, ok := d.codec.Encode((*bp)[:0], cmd, r); ok {
		d.log.Append(rec) // copies
		*bp = rec[:0]
	}
	d.bufs.Put(bp)
	return r, nil
}

// Commit makes every record appended so far durable: one write and one
// fdatasync, or none if a concurrent Commit covered them. Then, if a
// snapshot is due, it takes it.
func (d *Machine[C, R]) Commit() error {
	if err := d.log.Sync(); err != nil {
		return err
	}
	if d.log.SnapshotDue() && d.snapping.CompareAndSwap(false, true) {
		d.snapshot()
		d.snapping.Store(false)
	}
	return nil
}

// snapshot takes a due snapshot. Its error is not this caller's — its record
// is already durable — and the log keeps it: every later Commit fails.
func (d *Machine[C, R]) snapshot() {
	d.snapMu.Lock()
	defer d.snapMu.Unlock()
	if d.log.SnapshotDue() {
		_ = d.log.Snapshot(d.codec.Snapshot())
	}
}

// Close closes the log; call it after the store over d is closed.
func (d *Machine[C, R]) Close() error { return d.log.Close() }

// ReadOnly forwards to the inner machine (false if it has no read-only
// commands).
func (d *Machine[C, R]) ReadOnly(cmd C) bool { return d.ro != nil && d.ro.ReadOnly(cmd) }

// SetShards forwards to the inner machine.
func (d *Machine[C, R]) SetShards(n int) {
	if d.shards != nil {
		d.shards.SetShards(n)
	}
}

// ShardsOf forwards to the inner machine (every shard if it is not sharded).
func (d *Machine[C, R]) ShardsOf(cmd C) (a, b int) {
	if d.shards == nil {
		return -1, -1
	}
	return d.shards.ShardsOf(cmd)
}

// Capabilities reports the inner machine's capabilities but CapAtomic,
// CapTx and CapOwned, and CapCommit.
func (d *Machine[C, R]) Capabilities() store.Capability { return d.caps }

// Log is the machine's write-ahead log.
func (d *Machine[C, R]) Log() *wal.Log { return d.log }
