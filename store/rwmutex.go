package store

import (
	"context"
	"sync"
)

// rwMutexEngine is the rwmutex design: commands the machine declares
// read-only (CapReads) share an RLock; every other command takes the lock
// alone.
type rwMutexEngine struct {
	mu     sync.RWMutex // protects the machine and closed
	closed bool
}

func newRWMutexEngine(machineInfo, Config) engine { return &rwMutexEngine{} }

func (e *rwMutexEngine) acquire(_ context.Context, a access) error {
	if a.read {
		e.mu.RLock()
		if e.closed {
			e.mu.RUnlock()
			return ErrClosed
		}
		return nil
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	return nil
}

func (e *rwMutexEngine) release(a access) {
	if a.read {
		e.mu.RUnlock()
		return
	}
	e.mu.Unlock()
}

// resources is the write lock: readers share it, so theirs are no serial
// holds.
func (e *rwMutexEngine) resources() int { return 1 }

func (e *rwMutexEngine) close() error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	return nil
}
