package server

import (
	"context"
	"math"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"

	pb "github.com/locklab/locklab/proto/locklab/v1"
)

// TestCallWorkSpinsOnTheCPUForItsTime: the spin lasts at least its time and
// spends it on the CPU (the thread's own CPU clock, read around it); a
// sleep of the same time, the control, passes the time off the CPU. The
// CPU bound is loose: a busy machine may preempt the thread inside the
// spin.
func TestCallWorkSpinsOnTheCPUForItsTime(t *testing.T) {
	const d = 20 * time.Millisecond
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	measure := func(f func()) (wall, cpu time.Duration) {
		var before, after syscall.Rusage
		require.NoError(t, syscall.Getrusage(syscall.RUSAGE_THREAD, &before))
		start := time.Now()
		f()
		wall = time.Since(start)
		require.NoError(t, syscall.Getrusage(syscall.RUSAGE_THREAD, &after))
		used := func(r syscall.Rusage) time.Duration {
			return time.Duration(r.Utime.Nano() + r.Stime.Nano())
		}
		return wall, used(after) - used(before)
	}
	// A busy machine may preempt the spin (a 2-CPU machine running the
	// other packages' tests gave it half the CPU in five tries running);
	// one of a few tries has the CPU for a good part of its time, and a
	// sleep for almost none.
	var best time.Duration
	for range 20 {
		wall, cpu := measure(func() { spinFor(d) })
		assert.GreaterOrEqual(t, wall, d)
		if best = max(best, cpu); best > d*3/4 {
			break
		}
	}
	assert.Greater(t, best, d/4, "the spin runs on the CPU")
	wall, cpu := measure(func() { time.Sleep(d) })
	assert.GreaterOrEqual(t, wall, d)
	assert.Less(t, cpu, d/4, "the control sleeps: its time is off the CPU")
}

// TestSpinReadReadsTheSpin: a spin read by its thread's CPU clock reads
// what it took, the clock's own cost taken out: spins of 1 ms, every one
// read, read about 1 ms each (loose: a busy machine may preempt the
// thread inside the spin, or charge it an interruption); the control, a
// spin of nothing read the same way, reads far less.
func TestSpinReadReadsTheSpin(t *testing.T) {
	const d, calls = time.Millisecond, 20
	data := "/locklab.v1.CounterService/Increment"
	handler := func(context.Context, any) (any, error) { return nil, nil }
	for _, spin := range []time.Duration{d, 0} {
		c := newCallWork(d, []string{data})
		c.every = 1
		if spin == 0 {
			c.spin = func() {}
		}
		for range calls {
			_, err := c.unary(t.Context(), nil, &grpc.UnaryServerInfo{FullMethod: data}, handler)
			require.NoError(t, err)
		}
		n, cpu := c.spun()
		require.EqualValues(t, calls, n, "every spin read")
		per := cpu / time.Duration(n)
		if spin == 0 {
			assert.Less(t, per, d/4, "the control: a spin of nothing read as little")
			continue
		}
		assert.Greater(t, per, d/2, "a read spin took its CPU")
		assert.Less(t, per, 3*d, "a read spin took its own CPU, nothing else's")
	}
}

// TestSpinsReadAtRandom: one spin in spinSampleEvery is read, drawn per
// call; a call of a method that does not spin, the control, draws none.
func TestSpinsReadAtRandom(t *testing.T) {
	const calls = 200_000
	data := "/locklab.v1.CounterService/Increment"
	c := newCallWork(time.Nanosecond, []string{data})
	c.spin = func() {}
	handler := func(context.Context, any) (any, error) { return nil, nil }
	for range calls {
		_, err := c.unary(t.Context(), nil, &grpc.UnaryServerInfo{FullMethod: data}, handler)
		require.NoError(t, err)
		_, err = c.unary(t.Context(), nil, &grpc.UnaryServerInfo{FullMethod: "/locklab.v1.AdminService/GetStats"}, handler)
		require.NoError(t, err)
	}
	n, _ := c.spun()
	want := float64(calls) / spinSampleEvery
	assert.InDelta(t, want, float64(n), 5*math.Sqrt(want), "about one data call in %d read, none of the others", spinSampleEvery)
}

// TestGetStatsReportsTheSpinsRead: GetStats reports what the server's
// call work read; the control, a server without call work, reports none.
func TestGetStatsReportsTheSpinsRead(t *testing.T) {
	for _, work := range []time.Duration{time.Microsecond, 0} {
		ts := startServer(t, Config{Mode: "mutex", CallWork: work})
		ts.srv.work.samples.Store(3)
		ts.srv.work.ns.Store(6600)
		st, err := ts.admin.GetStats(t.Context(), &pb.GetStatsRequest{WindowOnly: true})
		require.NoError(t, err)
		if work == 0 {
			assert.Zero(t, st.GetCallWorkSamples(), "the control: no call work, no spins reported")
			assert.Zero(t, st.GetCallWorkSampleEvery())
			continue
		}
		assert.EqualValues(t, 3, st.GetCallWorkSamples())
		assert.InDelta(t, 6.6e-6, st.GetCallWorkCpuSeconds(), 1e-15)
		assert.EqualValues(t, spinSampleEvery, st.GetCallWorkSampleEvery())
	}
}

// BenchmarkCallWorkSpin is what the known answer's spin costs on this
// machine's CPU, alone: the thread's own CPU clock around b.N spins of each
// length, per spin ("cpu-ns/op") and beyond the length it is set to
// ("over-ns/op": the clock reads past its time, and whatever interrupted
// it where the kernel charges interrupts to the thread; callWork).
// Side by side the known arm's added CPU per call is read against the
// spin's length; this says how much of any excess the spin itself accounts
// for.
func BenchmarkCallWorkSpin(b *testing.B) {
	for _, d := range []time.Duration{500 * time.Nanosecond, 2 * time.Microsecond, 8 * time.Microsecond} {
		b.Run(d.String(), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var before, after unix.Timespec
			require.NoError(b, unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &before))
			for b.Loop() {
				spinFor(d)
			}
			require.NoError(b, unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &after))
			cpu := float64(after.Nano()-before.Nano()) / float64(b.N)
			b.ReportMetric(cpu, "cpu-ns/op")
			b.ReportMetric(cpu-float64(d.Nanoseconds()), "over-ns/op")
		})
	}
}

// BenchmarkSpinRead is what reading a spin costs beyond the spin: the
// goroutine pinned to its thread and the thread's CPU clock read twice,
// around a spin of nothing ("ns/op"), and that spread over the calls one
// read stands for ("ns/call": what the known arm's server does per call
// that the calibration's true value does not hold).
func BenchmarkSpinRead(b *testing.B) {
	c := newCallWork(time.Nanosecond, nil)
	c.spin = func() {}
	for b.Loop() {
		c.spinRead()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/spinSampleEvery, "ns/call")
	n, cpu := c.spun()
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "read-ns/spin")
}
