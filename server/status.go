package server

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workload"
)

// toStatus is the one place where an error from a store or a workload becomes
// a gRPC status (docs/design.md §status-codes). nil stays nil. The message is
// the error's own, which names the rule the request broke.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	return status.Error(codeOf(err), err.Error())
}

func codeOf(err error) codes.Code {
	switch {
	case errors.Is(err, workload.ErrInvalid), errors.Is(err, ErrKeyHeader):
		return codes.InvalidArgument
	case errors.Is(err, workload.ErrNotFound):
		return codes.NotFound
	case errors.Is(err, workload.ErrInsufficientFunds):
		return codes.FailedPrecondition
	case errors.Is(err, workload.ErrFenced):
		// gRPC's code for a failed sequencer check: retry the whole call,
		// wherever the balancer now sends it.
		return codes.Aborted
	case errors.Is(err, workload.ErrOverflow):
		return codes.OutOfRange
	case errors.Is(err, errNotServed):
		return codes.Unimplemented
	case errors.Is(err, store.ErrClosed), errors.Is(err, workload.ErrUnavailable):
		return codes.Unavailable
	case errors.Is(err, store.ErrOverloaded):
		return codes.ResourceExhausted
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	}
	return codes.Internal
}
