package store

import (
	"context"
	"sync"
)

// Mutex guards a machine with a sync.Mutex: Do locks, applies, unlocks.
//
// The result is produced by Apply while the lock is held and is a value owned by
// the caller; nothing reads the machine after Unlock (the data race of the toy
// benchmark this project started from).
type Mutex[C, R any] struct {
	mu     sync.Mutex // protects m and closed
	m      Machine[C, R]
	closed bool
}

var _ Store[int, int] = (*Mutex[int, int])(nil)

// NewMutex returns a Mutex store around m. The caller must not use m directly
// afterwards.
func NewMutex[C, R any](m Machine[C, R]) *Mutex[C, R] {
	return &Mutex[C, R]{m: m}
}

// Do applies cmd under the lock. A context that has already ended returns
// ctx.Err() and applies nothing. Once Do waits for the lock it no longer
// watches ctx (sync.Mutex cannot be abandoned), as with an accepted InputQ
// command; the command is then applied unless Close takes the lock first.
func (s *Mutex[C, R]) Do(ctx context.Context, cmd C) (R, error) {
	if err := ctx.Err(); err != nil {
		var zero R
		return zero, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		var zero R
		return zero, ErrClosed
	}
	r, err := s.m.Apply(cmd)
	s.mu.Unlock()
	return r, err
}

// Close waits for the command being applied, if any, and makes every later Do
// return ErrClosed. It is safe to call more than once.
func (s *Mutex[C, R]) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return nil
}
