package store

import (
	"context"
	"sync/atomic"
)

// atomicEngine is the atomic design: the machine's own lock-free ApplyAtomic
// (CapAtomic), called by every caller at once. Nothing is guarded; the
// engine only refuses commands after Close.
//
// Close does not wait for commands already inside ApplyAtomic: there is no
// lock to take and no goroutine to stop, and each such command completes on
// its own, linearizably. A counter in a gate (as the owner designs keep)
// would add two contended atomic adds to every command of a design whose
// whole point is one.
type atomicEngine struct {
	closed atomic.Bool
}

func newAtomicEngine(machineInfo, Config) engine { return &atomicEngine{} }

func (e *atomicEngine) acquire(context.Context, access) error {
	if e.closed.Load() {
		return ErrClosed
	}
	return nil
}

func (e *atomicEngine) release(access) {}

func (e *atomicEngine) close() error {
	e.closed.Store(true)
	return nil
}
