// Package calltrace marks every call the server serves in the Go runtime's
// execution trace, so that a trace can be cut into calls: one region of
// type Region on the handler's goroutine, from the outermost interceptor's
// entry to its return. The lab's ledger (internal/lab/ledger) reads a trace
// so marked and says where each call's time went.
//
// The mark costs one atomic load per call while no trace is being taken
// (runtime/trace.IsEnabled); while one is, a region's two events.
package calltrace

import (
	"context"
	"runtime/trace"

	"google.golang.org/grpc"
)

// Region is the type of the region that spans one call.
const Region = "locklab.call"

// Unary is the interceptor that marks a call; install it outermost, so
// that the region holds the other interceptors' time too.
func Unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if !trace.IsEnabled() {
		return handler(ctx, req)
	}
	defer trace.StartRegion(ctx, Region).End()
	return handler(ctx, req)
}
