// Package work lengthens a machine's critical section by a known amount of
// CPU: the server's -work flag. Real critical sections are longer than
// locklab's ~0.1 µs in-memory ones, and the designs only diverge once the
// section is long enough to matter.
//
// The work is a calibrated spin loop, not a sleep and not a clock polled in
// the loop: a sleep would give the CPU away (a lock design would look free),
// and reading the clock in the loop would make the work itself the clock's
// cost. The loop's speed is measured once, by Calibrate, and every Spin then
// runs a fixed number of iterations.
package work

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/store"
)

// Kinds are the ways a command's work can be spent (the server's
// -work-kind): KindSpin burns CPU, as a real critical section computes;
// KindSleep sleeps for the same time, off the CPU, as a critical section
// that waits (for a disk, a network) would. The sleep is the control of
// measurements that say where a call's time went: the same time, in
// another state.
const (
	KindSpin  = "spin"
	KindSleep = "sleep"
)

// Kinds lists the kinds, the default first.
func Kinds() []string { return []string{KindSpin, KindSleep} }

// Spinner spends a fixed amount of work per Spin: it burns CPU, or sleeps
// if NewSleeper made it. The zero value does nothing.
type Spinner struct {
	iters uint64
	sleep time.Duration
}

// Calibrate measures how many loop iterations the CPU runs per microsecond:
// the fastest of a few rounds, so that other load at calibration time makes
// the work shorter rather than longer than asked. It takes ~10 ms.
func Calibrate() float64 {
	const n = 1 << 20
	best := time.Duration(1<<63 - 1)
	for range 8 {
		start := time.Now()
		if spin(n) == 0 {
			panic("work: xorshift reached 0")
		}
		best = min(best, time.Since(start))
	}
	return n / (float64(best.Nanoseconds()) / 1000)
}

// NewSpinner returns a Spinner that burns d of CPU per Spin at perMicro
// iterations per microsecond (Calibrate's result).
func NewSpinner(d time.Duration, perMicro float64) Spinner {
	return Spinner{iters: uint64(float64(d.Nanoseconds()) / 1000 * perMicro)}
}

// NewSleeper returns a Spinner whose Spin sleeps for d (KindSleep): the
// time of the work, spent waiting rather than running.
func NewSleeper(d time.Duration) Spinner { return Spinner{sleep: d} }

// NewKind returns the Spinner of kind (one of Kinds; "" is KindSpin) for d of
// work, calibrating the spin if it is one.
func NewKind(kind string, d time.Duration) (Spinner, error) {
	switch kind {
	case KindSpin, "":
		return NewSpinner(d, Calibrate()), nil
	case KindSleep:
		return NewSleeper(d), nil
	}
	return Spinner{}, fmt.Errorf("work kind %q: want one of %s", kind, strings.Join(Kinds(), ", "))
}

// Iterations is the number of loop iterations a Spin runs (0 for a
// sleeper).
func (s Spinner) Iterations() uint64 { return s.iters }

// Spin spends the work: burns the Spinner's CPU, or sleeps.
func (s Spinner) Spin() {
	if s.sleep > 0 {
		time.Sleep(s.sleep)
		return
	}
	if s.iters > 0 && spin(s.iters) == 0 {
		panic("work: xorshift reached 0")
	}
}

// spin runs n rounds of xorshift64, which never reaches 0 from a non-zero
// seed; the caller checks the result, so the loop cannot be optimised away.
func spin(n uint64) uint64 {
	x := uint64(88172645463325252)
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// Machine is a machine whose state-changing commands (every command the
// inner machine does not report ReadOnly) first spin. It has every
// capability method, forwarding to the inner machine, and reports through
// Capabilities which ones the inner machine really has.
type Machine[C, R any] struct {
	inner  store.Machine[C, R]
	spin   Spinner
	ro     store.ReadOnly[C]         // nil if inner has no read-only commands
	shards store.Sharded[C]          // nil if inner is not sharded
	atomic store.Atomic[C, R]        // nil if inner has no lock-free path
	tx     store.Transactional[C, R] // nil unless inner keeps its state in a database
	owned  store.Owned[C, R]         // nil unless inner writes owned keys through to a database
	commit store.Committer           // nil unless inner commits (a database's transaction)
	caps   store.Capability
}

var (
	_ store.Machine[int, int]       = (*Machine[int, int])(nil)
	_ store.ReadOnly[int]           = (*Machine[int, int])(nil)
	_ store.Sharded[int]            = (*Machine[int, int])(nil)
	_ store.Atomic[int, int]        = (*Machine[int, int])(nil)
	_ store.Transactional[int, int] = (*Machine[int, int])(nil)
	_ store.Owned[int, int]         = (*Machine[int, int])(nil)
	_ store.CapabilityReporter      = (*Machine[int, int])(nil)
)

// New wraps m. Wrap the bare machine, and wrap the result for durability
// (durable.Machine), not the other way round: the log must see the
// commands this decorator passes on. Commit and ApplyTx are forwarded to a
// machine that keeps its state in a database, whose transactions the work
// then runs inside.
func New[C, R any](m store.Machine[C, R], s Spinner) *Machine[C, R] {
	w := &Machine[C, R]{inner: m, spin: s, caps: store.CapabilitiesOf(m)}
	w.ro, _ = m.(store.ReadOnly[C])
	w.shards, _ = m.(store.Sharded[C])
	w.atomic, _ = m.(store.Atomic[C, R])
	w.tx, _ = m.(store.Transactional[C, R])
	w.owned, _ = m.(store.Owned[C, R])
	w.commit, _ = m.(store.Committer)
	return w
}

func (w *Machine[C, R]) writes(cmd C) bool { return w.ro == nil || !w.ro.ReadOnly(cmd) }

// Apply spins if cmd may change state, then applies it. A command the
// machine refuses has still spun: the work models computing the change,
// which happens before the machine can refuse it.
func (w *Machine[C, R]) Apply(cmd C) (R, error) {
	if w.writes(cmd) {
		w.spin.Spin()
	}
	return w.inner.Apply(cmd)
}

// ApplyAtomic is Apply for the atomic design.
func (w *Machine[C, R]) ApplyAtomic(cmd C) (R, error) {
	if w.writes(cmd) {
		w.spin.Spin()
	}
	if w.atomic == nil {
		var zero R
		return zero, store.ErrUnsupported
	}
	return w.atomic.ApplyAtomic(cmd)
}

// ApplyTx is Apply for the db-rowlock design.
func (w *Machine[C, R]) ApplyTx(cmd C) (R, error) {
	if w.tx == nil {
		var zero R
		return zero, store.ErrUnsupported
	}
	if w.writes(cmd) {
		w.spin.Spin()
	}
	return w.tx.ApplyTx(cmd)
}

// ApplyOwned is Apply for the routed-owner design.
func (w *Machine[C, R]) ApplyOwned(cmd C) (R, error) {
	if w.owned == nil {
		var zero R
		return zero, store.ErrUnsupported
	}
	if w.writes(cmd) {
		w.spin.Spin()
	}
	return w.owned.ApplyOwned(cmd)
}

// Commit forwards to the inner machine (nothing to commit if it has no
// Commit).
func (w *Machine[C, R]) Commit() error {
	if w.commit == nil {
		return nil
	}
	return w.commit.Commit()
}

// ReadOnly forwards to the inner machine (false if it has no read-only
// commands).
func (w *Machine[C, R]) ReadOnly(cmd C) bool { return w.ro != nil && w.ro.ReadOnly(cmd) }

// SetShards forwards to the inner machine.
func (w *Machine[C, R]) SetShards(n int) {
	if w.shards != nil {
		w.shards.SetShards(n)
	}
}

// ShardsOf forwards to the inner machine (every shard if it is not sharded).
func (w *Machine[C, R]) ShardsOf(cmd C) (a, b int) {
	if w.shards == nil {
		return -1, -1
	}
	return w.shards.ShardsOf(cmd)
}

// Capabilities reports what the inner machine really has.
func (w *Machine[C, R]) Capabilities() store.Capability { return w.caps }
