package server

import (
	"context"
	"fmt"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	"github.com/locklab/locklab/store"
)

// inflight is the server-wide admission bound (-max-inflight): at most max
// data calls inside the stores at once, over every workload; a call over it
// is refused at once, before it reaches the store, so it changes nothing.
// It is the same for every design, so that an overload comparison stays
// fair: a lock design has no queue of its own to say "full".
type inflight struct {
	n   atomic.Int64
	max int64
	err error // what a refused call gets, made once
}

func newInflight(max int) *inflight {
	return &inflight{max: int64(max), err: fmt.Errorf("%w: %d calls are inside the store already (-max-inflight %d); retry later", store.ErrOverloaded, max, max)}
}

// bounded is a store whose Do is refused while its inflight bound is full.
type bounded[C, R any] struct {
	inner store.Store[C, R]
	in    *inflight
}

func bound[C, R any](s store.Store[C, R], in *inflight) store.Store[C, R] {
	if in == nil {
		return s
	}
	return &bounded[C, R]{inner: s, in: in}
}

func (s *bounded[C, R]) Do(ctx context.Context, cmd C) (R, error) {
	if s.in.n.Add(1) > s.in.max {
		s.in.n.Add(-1)
		var zero R
		return zero, s.in.err
	}
	defer s.in.n.Add(-1)
	return s.inner.Do(ctx, cmd)
}

func (s *bounded[C, R]) Close() error { return s.inner.Close() }

// tapGate is the admission bound that refuses before a call costs
// (-max-calls): at most max data calls in the server at once. It runs as
// the gRPC transport's tap (grpc.InTapHandle), in the connection's reader
// once a call's headers are read, before a stream, a handler goroutine or
// the request's decoding exist; a call over it is answered
// RESOURCE_EXHAUSTED from there, so it reaches neither a handler nor a
// store and changes nothing. Only the workloads' methods count: the admin
// service and health checks are always served.
type tapGate struct {
	n       atomic.Int64
	max     int64
	data    map[string]bool // full method names the gate counts
	err     error           // what a refused call gets, made once
	refused func(method string)
}

func newTapGate(max int, data []string, refused func(method string)) *tapGate {
	g := &tapGate{max: int64(max), data: map[string]bool{}, refused: refused,
		err: status.Errorf(codes.ResourceExhausted, "overloaded: %d data calls are in the server already (-max-calls %d); refused before the request was decoded, retry later", max, max)}
	for _, m := range data {
		g.data[m] = true
	}
	return g
}

// admitted is one call the gate let in; release gives its place back, once.
type admitted struct {
	g    *tapGate
	done atomic.Bool
}

func (a *admitted) release() {
	if a.done.CompareAndSwap(false, true) {
		a.g.n.Add(-1)
	}
}

type admittedKey struct{}

// handle is the tap. An admitted call gives its place back when its
// handler returns (unary), or else when its stream's context ends, which
// the transport does for every stream it admitted (answered, cancelled,
// timed out before a handler ran, or lost with its connection), so the
// bound cannot leak.
func (g *tapGate) handle(ctx context.Context, info *tap.Info) (context.Context, error) {
	if !g.data[info.FullMethodName] {
		return ctx, nil
	}
	if g.n.Add(1) > g.max {
		g.n.Add(-1)
		if g.refused != nil {
			g.refused(info.FullMethodName)
		}
		return ctx, g.err
	}
	a := &admitted{g: g}
	context.AfterFunc(ctx, a.release)
	return context.WithValue(ctx, admittedKey{}, a), nil
}

// unary gives an admitted call's place back as its handler returns, before
// its answer is written: a caller that has its answer finds the place free.
func (g *tapGate) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if a, ok := ctx.Value(admittedKey{}).(*admitted); ok {
		defer a.release()
	}
	return handler(ctx, req)
}
