package store

import (
	"context"
	"sync"
)

// mutexEngine is the mutex design: a sync.Mutex around every Apply. The
// caller applies its own command while it holds the lock, and its result is
// a value it owns; nothing reads the machine after Unlock.
type mutexEngine struct {
	mu     sync.Mutex // protects the machine and closed
	closed bool
}

func newMutexEngine(machineInfo, Config) engine { return &mutexEngine{} }

// acquire does not watch ctx once it waits for the lock (a sync.Mutex cannot
// be abandoned), as with an accepted InputQ command; the command is then
// applied unless Close takes the lock first.
func (e *mutexEngine) acquire(context.Context, access) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	return nil
}

func (e *mutexEngine) release(access) { e.mu.Unlock() }

func (e *mutexEngine) resources() int { return 1 }

// close waits for the command being applied, if any, and makes every later
// Do return ErrClosed.
func (e *mutexEngine) close() error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	return nil
}

// Mutex is the mutex design with its types named: what New("mutex", …)
// returns, for callers who want the concrete type.
type Mutex[C, R any] struct{ *facade[C, R] }

// NewMutex returns a Mutex store around m. The caller must not use m directly
// afterwards.
func NewMutex[C, R any](m Machine[C, R]) *Mutex[C, R] {
	return &Mutex[C, R]{mustNew("mutex", m, Config{})}
}

// mustNew is New for the typed constructors, whose designs serve every
// machine: an error is a bug.
func mustNew[C, R any](design string, m Machine[C, R], cfg Config) *facade[C, R] {
	s, err := New(design, m, cfg)
	if err != nil {
		panic(err)
	}
	return s.(*facade[C, R])
}
