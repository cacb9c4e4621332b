package server

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
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
// measures what it costs on the machine at hand. So the server reads what
// the spin costs while it serves: one spin in spinSampleEvery, chosen at
// random, runs between two reads of its thread's CPU clock (GetStats'
// call_work fields), and a side-by-side round reads its known answer
// against the CPU its spin took in that round.
type callWork struct {
	spin func()
	data map[string]bool // full method names that spin
	// The spins read by the thread's CPU clock, and the nanoseconds they
	// took: atomics, added to by one call in spinSampleEvery.
	samples, ns atomic.Int64
}

// spinSampleEvery is how rarely a spin is read: reading costs two system
// calls and pins the goroutine to its thread, work the spin's arm does
// beyond its spin; at one spin in 128 that is a few nanoseconds a call.
const spinSampleEvery = 128

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
// The draw that picks the spins read is made in every data call, spinning
// or not, for the same reason.
func (c *callWork) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if c.data[info.FullMethod] {
		read := rand.Uint32()%spinSampleEvery == 0
		switch {
		case c.spin == nil:
		case read:
			c.spinRead()
		default:
			c.spin()
		}
	}
	return handler(ctx, req)
}

// spinRead spins once between two reads of the thread's CPU clock, the
// goroutine pinned to its thread between them, and adds what it took.
func (c *callWork) spinRead() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, ok0 := threadCPU()
	c.spin()
	t1, ok1 := threadCPU()
	if ok0 && ok1 {
		c.ns.Add(int64(t1 - t0))
		c.samples.Add(1)
	}
}

// spun is what the spins read so far took: how many, and their CPU.
func (c *callWork) spun() (samples int64, cpu time.Duration) {
	return c.samples.Load(), time.Duration(c.ns.Load())
}

// spinFor keeps the CPU busy until d has passed by the monotonic clock.
func spinFor(d time.Duration) {
	start := time.Now()
	for time.Since(start) < d {
	}
}
