package server

import (
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

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

// TestGetStatsReadsTheSpin: a server with call work reads what one spin in
// spinSampleEvery took by its thread's CPU clock, and GetStats reports it
// (the spin is long, so that a read around anything else would be far
// short of it; loose, for a busy machine may preempt the thread inside
// the spin); the control, a server without call work, reads none.
func TestGetStatsReadsTheSpin(t *testing.T) {
	const d, calls = 20 * time.Microsecond, 3000 // no spin read: a chance of (127/128)^3000, 6e-11
	for _, work := range []time.Duration{d, 0} {
		ts := startServer(t, Config{Mode: "mutex", CallWork: work})
		for range calls {
			_, err := ts.counter.Increment(t.Context(), &pb.IncrementRequest{Delta: 1})
			require.NoError(t, err)
		}
		st, err := ts.admin.GetStats(t.Context(), &pb.GetStatsRequest{WindowOnly: true})
		require.NoError(t, err)
		if work == 0 {
			assert.Zero(t, st.GetCallWorkSamples(), "the control: no spin, none read")
			assert.Zero(t, st.GetCallWorkCpuSeconds())
			continue
		}
		assert.EqualValues(t, spinSampleEvery, st.GetCallWorkSampleEvery())
		n := st.GetCallWorkSamples()
		assert.InDelta(t, calls/spinSampleEvery, n, calls/spinSampleEvery, "about one spin in %d read", spinSampleEvery)
		require.Positive(t, n)
		per := time.Duration(st.GetCallWorkCpuSeconds() / float64(n) * 1e9)
		assert.Greater(t, per, d/4, "a read spin took its CPU")
		assert.Less(t, per, 4*d, "a read spin took its own CPU, nothing else's")
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
