package server

import (
	"context"
	"time"

	"google.golang.org/grpc"
)

// callWork spins a known amount of CPU in every data call before its
// handler runs (Config.CallWork): outside every store and lock, so that the
// CPU it adds to a call is its own, whatever the design does with the rest.
// It is the known answer of a side-by-side study, so its cost is set in
// time, not in work: the spin polls the monotonic clock until d has passed.
// A loop of a fixed number of iterations (-work's, calibrated once at
// start) costs more than d whenever the CPU runs slower than it did at
// calibration, as it does beside co-runners that share its core and caches;
// its true cost per call would then be unknown. The clock-polled spin is
// off by one clock read (tens of nanoseconds) when nothing interrupts it,
// and runs short of CPU when the thread is preempted inside it; a kernel
// that charges an interrupt's time to the thread it interrupts (without
// CONFIG_IRQ_TIME_ACCOUNTING) charges the spin for its interruptions too,
// and the spin ends on the clock after them: BenchmarkCallWorkSpin
// measures what it costs on the machine at hand.
type callWork struct {
	spin func()
	data map[string]bool // full method names that spin
}

func newCallWork(d time.Duration, data []string) *callWork {
	c := &callWork{data: map[string]bool{}}
	if d > 0 {
		c.spin = func() { spinFor(d) }
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
