package server

import (
	"context"
	"slices"
	"time"

	"google.golang.org/grpc"
)

// callWork spins a known amount of CPU in every data call before its
// handler runs (Config.CallWork): outside every store and lock, so that the
// CPU it adds to a call is its own, whatever the design does with the rest.
// It is the known answer of a side-by-side study, so its cost is set in
// time, not in work: the spin polls the monotonic clock until its time has
// passed. A loop of a fixed number of iterations (-work's, calibrated once
// at start) costs more than d whenever the CPU runs slower than it did at
// calibration, as it does beside co-runners that share its core and caches;
// its true cost per call would then be unknown.
//
// Polling the clock costs more than the time it waits for: the first clock
// read before it, and the last iteration, which ends past it (on this
// project's machines about 0.1 µs for a 2 µs spin, BenchmarkCallWorkSpin).
// So the server measures, once at start, what a spin of d costs, and waits
// for d less that excess (spinTarget): a spin then costs d on average, and
// the known answer's true value is its length. The excess is a few clock
// reads, so a CPU slowed by co-runners changes it by nanoseconds; a spin
// preempted inside runs short of CPU, as any spin timed by the clock does.
type callWork struct {
	spin func()
	wait time.Duration   // what the spin waits for (spinTarget); 0 without call work
	data map[string]bool // full method names that spin
}

// newCallWork is the call work of d in the data methods, its spin's wait
// set from cost, what a spin costs as measured (spinCost).
func newCallWork(d time.Duration, data []string, cost func(time.Duration) time.Duration) *callWork {
	c := &callWork{data: map[string]bool{}}
	if d > 0 {
		t := spinTarget(d, cost)
		c.spin, c.wait = func() { spinFor(t) }, t
	}
	for _, m := range data {
		c.data[m] = true
	}
	return c
}

// unary looks the method up whether or not it spins, so that a server
// without call work runs every step of one with it but the spin: the
// known answer's arm differs from its baseline by the spin alone.
func (c *callWork) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if c.data[info.FullMethod] && c.spin != nil {
		c.spin()
	}
	return handler(ctx, req)
}

// spinFor keeps the CPU busy until d has passed by the monotonic clock.
func spinFor(d time.Duration) {
	start := time.Now()
	for time.Since(start) < d {
	}
}

// spinTarget is the time a spin waits for so that it costs d: cost(t) is
// what a spin that waits for t costs, measured; the target is corrected
// twice, since the excess grows a little with the time waited. It is never
// below zero.
func spinTarget(d time.Duration, cost func(time.Duration) time.Duration) time.Duration {
	t := d
	for range 2 {
		t = max(t+d-cost(t), 0)
	}
	return t
}

// spinCost measures what a spin that waits for t costs: the wall time of a
// batch of spins, per spin, the median of a few batches, so that the
// interruptions a spin is charged for in a typical batch count and a batch
// the server's thread lost the CPU in (the other arms' servers start at the
// same moment) does not. The thread's CPU and the clock agree while it runs
// (BenchmarkCallWorkSpin). A 2 µs spin measures in about 4 ms, and
// spinTarget measures twice.
func spinCost(t time.Duration) time.Duration {
	const batch, batches = 256, 7
	per := make([]time.Duration, batches)
	for i := range per {
		start := time.Now()
		for range batch {
			spinFor(t)
		}
		per[i] = time.Since(start) / batch
	}
	slices.Sort(per)
	return per[batches/2]
}
