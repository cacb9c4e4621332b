package store

import (
	"sync"
	"time"
)

// spinner burns a deterministic amount of CPU: a loop calibrated once
// against the clock, then run by count, never by polling the clock (a
// sleep would hand the CPU away, which is not what a long critical section
// does).
type spinner struct {
	perMicro float64 // loop iterations per microsecond
	sink     uint64
}

var calibrated = sync.OnceValue(func() float64 {
	var s spinner
	const n = 20_000_000
	start := time.Now()
	s.spin(n)
	return n / float64(time.Since(start).Microseconds())
})

//go:noinline
func (s *spinner) spin(n int) {
	x := s.sink | 1
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	s.sink = x
}

// spun adds work to every state-changing Apply of m (every Apply if m cannot
// tell reads), forwarding m's capabilities.
type spun[C, R any] struct {
	m     Machine[C, R]
	iters int
	caps  Capability
	sp    spinner // written only under the design's exclusion
}

func withSpin[C, R any](m Machine[C, R], d time.Duration) *spun[C, R] {
	return &spun[C, R]{m: m, iters: int(calibrated() * float64(d.Nanoseconds()) / 1000), caps: CapabilitiesOf(m)}
}

func (s *spun[C, R]) Capabilities() Capability { return s.caps }

func (s *spun[C, R]) writes(cmd C) bool {
	r, ok := s.m.(ReadOnly[C])
	return !ok || !r.ReadOnly(cmd)
}

func (s *spun[C, R]) Apply(cmd C) (R, error) {
	if s.writes(cmd) {
		s.sp.spin(s.iters)
	}
	return s.m.Apply(cmd)
}

func (s *spun[C, R]) ReadOnly(cmd C) bool { return s.m.(ReadOnly[C]).ReadOnly(cmd) }
func (s *spun[C, R]) SetShards(n int)     { s.m.(Sharded[C]).SetShards(n) }
func (s *spun[C, R]) ShardsOf(cmd C) (int, int) {
	return s.m.(Sharded[C]).ShardsOf(cmd)
}

// ApplyAtomic spins outside any lock (the atomic design has none) on a
// spinner of its own.
func (s *spun[C, R]) ApplyAtomic(cmd C) (R, error) {
	if s.writes(cmd) {
		var sp spinner
		sp.spin(s.iters)
	}
	return s.m.(Atomic[C, R]).ApplyAtomic(cmd)
}
