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
// random, is read by its thread's CPU clock (spinRead; GetStats'
// call_work fields), and a side-by-side round reads its known answer
// against the CPU its spin took in that round.
type callWork struct {
	spin func()
	data map[string]bool // full method names that spin
	// every: one spin in every is read (spinSampleEvery); the spins read
	// by the thread's CPU clock, and the nanoseconds they took: atomics,
	// added to by the calls whose spins are read.
	every       uint32
	samples, ns atomic.Int64
}

// spinSampleEvery is how rarely a spin is read: reading costs three system
// calls and pins the goroutine to its thread, work the spin's arm does
// beyond its spin (BenchmarkSpinRead's ns/call).
const spinSampleEvery = 1024

func newCallWork(d time.Duration, data []string) *callWork {
	c := &callWork{data: map[string]bool{}, every: spinSampleEvery}
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
		read := rand.Uint32()%c.every == 0
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

// spinRead spins once, the goroutine pinned to its thread, and adds what
// it took by the thread's CPU clock. A reading of the clock is a system
// call, and the thread's CPU between two readings holds the way out of
// the first and the way into the second, whatever ran between them: on a
// virtual machine whose system calls cost microseconds, as much as the
// spin. So the clock is read three times, twice back to back and once
// after the spin, and the first gap, which holds those ways alone, is
// taken from the second.
func (c *callWork) spinRead() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, ok0 := threadCPU()
	t1, ok1 := threadCPU()
	c.spin()
	t2, ok2 := threadCPU()
	if ok0 && ok1 && ok2 {
		c.ns.Add(int64((t2 - t1) - (t1 - t0)))
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
