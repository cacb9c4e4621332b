package store

import (
	"context"
	"errors"
)

// ErrClosed is returned by Do once the store has been closed.
var ErrClosed = errors.New("store: closed")

// ErrOverloaded is returned by Do of an owner design made with
// Config.RejectWhenFull when the owner's queue is full: the command was not
// accepted and will never be applied.
var ErrOverloaded = errors.New("store: overloaded: the owner's queue is full")

// Machine is a sequential state machine. Apply is never called by two
// goroutines at once; the designs in this package guarantee that.
//
// Apply must not keep or return references into its state: a result is read by
// the caller after the design has let other commands run.
type Machine[C, R any] interface {
	Apply(cmd C) (R, error)
}

// Store applies commands to a machine safely from any number of goroutines.
type Store[C, R any] interface {
	// Do applies cmd once and returns its result, or returns ctx.Err() or
	// ErrClosed. Errors returned by the machine are passed through unchanged.
	Do(ctx context.Context, cmd C) (R, error)
	// Close stops the store. It is safe to call more than once.
	Close() error
}
