package store

import (
	"context"
	"sync"
)

// rowLockEngine is the db-rowlock design: the machine's own ApplyTx
// (CapTx), called by every caller at once. The process serialises nothing;
// each command is one database transaction and the database's row locks
// order the transactions that touch the same rows, as a service with many
// stateless replicas in front of one database does.
//
// The engine only gates Close: callers share a read lock, so that Close
// waits for the transactions in flight before the machine's connections may
// be closed. Readers of a sync.RWMutex never wait for each other.
type rowLockEngine struct {
	mu     sync.RWMutex // held shared by every command in flight; guards closed
	closed bool
}

func newRowLockEngine(machineInfo, Config) engine { return &rowLockEngine{} }

func (e *rowLockEngine) acquire(context.Context, access) error {
	e.mu.RLock()
	if e.closed {
		e.mu.RUnlock()
		return ErrClosed
	}
	return nil
}

func (e *rowLockEngine) release(access) { e.mu.RUnlock() }

// close waits for the transactions in flight and makes every later Do
// return ErrClosed.
func (e *rowLockEngine) close() error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	return nil
}
