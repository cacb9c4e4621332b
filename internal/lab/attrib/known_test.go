//go:build linux

package attrib

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/work"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workload"
)

// The known answer: every command spins a calibrated amount of CPU (work's
// spin, as the server's -work runs it), and the test clocks each spin on its
// thread's CPU clock as it runs. Fold must put that CPU in the spin's
// category. The total is the spins' own clock, not calls × the calibrated
// time, because on a shared machine (a VM whose stolen time counts as the
// running thread's, a sibling hyperthread kept busy) the same loop costs
// more or less CPU from one second to the next, which would test the
// machine rather than the attribution.
const (
	// Long enough that the store's own code, slowed by -race, is a few
	// percent beside it.
	spinFor   = 100 * time.Microsecond
	tolerance = 0.20
	// The spin's CPU to collect: about 150 samples at the profiler's
	// 100 Hz, which counts a share to a few percent. The store lands a
	// few percent above its spins' clock, not below: a sample is taken
	// at the kernel's tick after the CPU was spent, so the wake-ups just
	// before a spin lean into it (see the package doc).
	targetCPU = 1500 * time.Millisecond
	// A loaded machine gives the process less CPU per second; past this the
	// test measures what it has (and fails if that is too few samples).
	maxWall = 4 * time.Second
)

// callers is one caller per P: more would have the callers that spin
// outside the store preempt each other, and a preempted spin's clock, on a
// locked thread, counts the scheduler's work of handing the thread over.
var callers = runtime.GOMAXPROCS(0)

// where puts the spin inside the store (in Apply, through package work, as
// the server's -work does) or in the caller, before it calls the store.
type where int

const (
	inApply where = iota
	inCaller
)

type knownRun struct {
	b     Breakdown
	calls int64
	want  time.Duration // the spins' CPU, by their own clock
}

// landed is the check the tests make: is cat's CPU within tolerance of
// want?
func landed(b Breakdown, cat string, want time.Duration) error {
	got := b.CPU[cat]
	if rel := (float64(got) - float64(want)) / float64(want); rel < -tolerance || rel > tolerance {
		return fmt.Errorf("%s: %v of CPU, want %v ± %.0f%% (off by %+.0f%%); breakdown %v",
			cat, got, want, tolerance*100, rel*100, b.CPU)
	}
	return nil
}

func TestKnownCostLandsInStore(t *testing.T) {
	// The two seed designs: the spin runs on the caller's goroutine under a
	// lock in one, on the owner goroutine in the other.
	for _, design := range []string{"mutex", "inputQ"} {
		t.Run(design, func(t *testing.T) {
			r := runKnown(t, design, inApply)
			assert.NoError(t, landed(r.b, "store", r.want))
		})
	}
}

// The control: the same calibrated spin per command, now in the caller
// before it calls the store. The check on the store must fail, and the cost
// must move to the caller's category (the test's own package, Other).
func TestKnownCostControl(t *testing.T) {
	r := runKnown(t, "mutex", inCaller)
	assert.Error(t, landed(r.b, "store", r.want), "the store check passed with the cost outside the store")
	assert.NoError(t, landed(r.b, Other, r.want))
}

func runKnown(t *testing.T, design string, at where) knownRun {
	t.Helper()
	sp := work.NewSpinner(spinFor, work.Calibrate())
	var spent atomic.Int64 // ns of thread CPU in spins
	var m store.Machine[workload.CounterCmd, int64] = workload.NewCounter()
	if at == inApply {
		m = &clocked{inner: work.New(m, sp), spent: &spent}
	}
	s, err := store.New(design, m, store.Config{})
	require.NoError(t, err)
	defer s.Close()

	var buf bytes.Buffer
	require.NoError(t, pprof.StartCPUProfile(&buf))
	ctx, cancel := context.WithTimeout(context.Background(), maxWall)
	defer cancel()
	var calls atomic.Int64
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for ctx.Err() == nil && spent.Load() < int64(targetCPU) {
				if at == inCaller {
					clock(&spent, func() { callerSpin(sp.Iterations()) })
				}
				if _, err := s.Do(ctx, workload.CounterCmd{Op: workload.CounterIncrement, Delta: 1}); err != nil {
					assert.ErrorIs(t, err, context.DeadlineExceeded)
					return
				}
				calls.Add(1)
			}
		})
	}
	wg.Wait()
	pprof.StopCPUProfile()

	p, err := profile.Parse(&buf)
	require.NoError(t, err)
	b, err := Fold(p)
	require.NoError(t, err)
	r := knownRun{b: b, calls: calls.Load(), want: time.Duration(spent.Load())}
	t.Logf("%s, spin %v: %d calls, spins took %v (%v each; calibrated %v); %d samples; %v",
		design, at, r.calls, r.want, r.want/time.Duration(max(r.calls, 1)), spinFor, b.Samples, b.CPU)
	require.GreaterOrEqual(t, b.Samples, int64(50), "too few samples to count shares: the machine gave this test too little CPU")
	return r
}

// clocked is a machine whose Apply is clocked on the thread's CPU clock.
// The clock's own frames are this package's and the syscall's, not the
// store's.
type clocked struct {
	inner store.Machine[workload.CounterCmd, int64]
	spent *atomic.Int64
}

func (c *clocked) Apply(cmd workload.CounterCmd) (r int64, err error) {
	clock(c.spent, func() { r, err = c.inner.Apply(cmd) })
	return r, err
}

// clock adds f's thread CPU time to spent. The goroutine is locked to its
// thread so that both readings are of the same thread's clock.
func clock(spent *atomic.Int64, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	f()
	spent.Add(int64(threadCPU() - start))
}

func threadCPU() time.Duration {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		panic(errno)
	}
	return time.Duration(ts.Nano())
}

func (w where) String() string { return [...]string{"in Apply", "in the caller"}[w] }

// callerSpin is work's loop, compiled in this package so that its frames
// belong to the caller, not to the store.
//
//go:noinline
func callerSpin(n uint64) {
	x := uint64(88172645463325252)
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	if x == 0 {
		panic("xorshift reached 0")
	}
}
