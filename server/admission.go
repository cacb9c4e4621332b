package server

import (
	"context"
	"fmt"
	"sync/atomic"

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
