package storetest

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/locklab/locklab/store"
)

// recorder is the machine a design under test is given: it forwards to the
// user's machine and notes, on one logical clock shared with the callers,
// when each Apply began and ended and what it returned. Together with the
// callers' own notes, that is enough to check the design without a model of
// the machine: replay the applies in the order they ran on a fresh machine,
// and match every answer to an Apply that ran inside its call.
type recorder[C, R any] struct {
	m        store.Machine[C, R]
	caps     store.Capability
	readOnly store.ReadOnly[C] // nil unless CapReads
	sharded  store.Sharded[C]  // nil unless CapShards
	clock    *atomic.Int64

	// gate, when set, holds the first Apply inside the machine until
	// release is closed: the contract checks use it to see what Close and
	// waiting callers do while a command is being applied.
	gate *gate

	mu        sync.Mutex // protects everything below
	shards    int        // from SetShards; 0: never called, ShardsOf not consulted
	inflight  map[int64]access
	applies   []applied[C, R]
	overlaps  []string // Apply calls that ran together though the machine forbids it
	closedAt  int64    // the tick at which Close returned; 0: open
	lateApply []string // Apply calls begun after Close returned
}

type gate struct {
	atomic  bool // the held Apply is an ApplyAtomic; read after entered
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}), release: make(chan struct{})} }

// applied is one Apply the design made.
type applied[C, R any] struct {
	cmd         C
	r           R
	err         error
	begin, end  int64 // ticks
	atomicApply bool  // through ApplyAtomic, which may overlap by contract
	read        bool  // declared read-only by the machine
}

// access is what the machine declares about a command: whether it only
// reads, and which shards it touches.
type access struct {
	read   bool
	lo, hi int // shards; lo < 0: every shard, or shards not in use
	atomic bool
}

func newRecorder[C, R any](m store.Machine[C, R], clock *atomic.Int64) *recorder[C, R] {
	r := &recorder[C, R]{m: m, caps: store.CapabilitiesOf(m), clock: clock, inflight: map[int64]access{}}
	if r.caps&store.CapReads != 0 {
		r.readOnly = m.(store.ReadOnly[C])
	}
	if r.caps&store.CapShards != 0 {
		r.sharded = m.(store.Sharded[C])
	}
	return r
}

func (r *recorder[C, R]) Capabilities() store.Capability { return r.caps }

func (r *recorder[C, R]) ReadOnly(cmd C) bool { return r.readOnly.ReadOnly(cmd) }

func (r *recorder[C, R]) SetShards(n int) {
	r.mu.Lock()
	r.shards = n
	r.mu.Unlock()
	r.sharded.SetShards(n)
}

func (r *recorder[C, R]) ShardsOf(cmd C) (int, int) { return r.sharded.ShardsOf(cmd) }

func (r *recorder[C, R]) Commit() error { return r.m.(store.Committer).Commit() }

func (r *recorder[C, R]) Apply(cmd C) (R, error) { return r.apply(cmd, false) }

func (r *recorder[C, R]) ApplyAtomic(cmd C) (R, error) { return r.apply(cmd, true) }

func (r *recorder[C, R]) access(cmd C, atomicApply bool, shards int) access {
	a := access{lo: -1, hi: -1, atomic: atomicApply}
	if r.readOnly != nil {
		a.read = r.readOnly.ReadOnly(cmd)
	}
	if r.sharded != nil && shards > 0 {
		a.lo, a.hi = r.sharded.ShardsOf(cmd)
	}
	return a
}

// allowed reports whether two Apply calls may run at once by the machine's
// own declarations: both read, both are ApplyAtomic, or they touch no shard
// in common (each touches one or two: lo and hi, not the range between).
func allowed(a, b access) bool {
	switch {
	case a.read && b.read, a.atomic && b.atomic:
		return true
	case a.lo < 0 || b.lo < 0:
		return false
	}
	return a.lo != b.lo && a.lo != b.hi && a.hi != b.lo && a.hi != b.hi
}

func (r *recorder[C, R]) apply(cmd C, atomicApply bool) (R, error) {
	r.mu.Lock()
	acc := r.access(cmd, atomicApply, r.shards)
	begin := r.clock.Add(1)
	for other, oa := range r.inflight {
		if !allowed(acc, oa) {
			r.overlaps = append(r.overlaps, fmt.Sprintf("Apply(%+v) began at tick %d while the Apply begun at tick %d was running", cmd, begin, other))
		}
	}
	// ApplyAtomic is exempt: with no lock to take, a design calling it (the
	// atomic design says so) lets a command it accepted before Close run
	// after Close returned, which is still linearizable.
	if r.closedAt != 0 && !atomicApply {
		r.lateApply = append(r.lateApply, fmt.Sprintf("Apply(%+v) began at tick %d, after Close returned at tick %d", cmd, begin, r.closedAt))
	}
	r.inflight[begin] = acc
	g := r.gate
	r.mu.Unlock()

	if g != nil {
		g.once.Do(func() {
			g.atomic = atomicApply
			close(g.entered)
			<-g.release
		})
	}
	// Stay inside Apply across a reschedule, so that a design that lets
	// another caller in gets caught at it even with one CPU.
	runtime.Gosched()
	var res R
	var err error
	if atomicApply {
		res, err = r.m.(store.Atomic[C, R]).ApplyAtomic(cmd)
	} else {
		res, err = r.m.Apply(cmd)
	}

	r.mu.Lock()
	delete(r.inflight, begin)
	r.applies = append(r.applies, applied[C, R]{cmd: cmd, r: res, err: err, begin: begin, end: r.clock.Add(1), atomicApply: atomicApply, read: acc.read})
	r.mu.Unlock()
	return res, err
}

// closed notes that Close has returned: no Apply may begin after this.
func (r *recorder[C, R]) closed() {
	r.mu.Lock()
	r.closedAt = r.clock.Add(1)
	r.mu.Unlock()
}

// snapshot returns what was recorded so far.
func (r *recorder[C, R]) snapshot() (applies []applied[C, R], overlaps, late []string, inflight int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]applied[C, R](nil), r.applies...), append([]string(nil), r.overlaps...),
		append([]string(nil), r.lateApply...), len(r.inflight)
}
