package store

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// holdMachine holds its serial resource for as long as the test says: its
// command 0 announces itself on entered and waits for release; the others
// return at once. Every command is a write on shard 0, so that every design
// (rwmutex, the sharded ones) makes the others wait behind command 0.
type holdMachine struct {
	entered chan struct{}
	release chan struct{}
}

func (m *holdMachine) Apply(cmd int) (int, error) {
	if cmd == 0 {
		m.entered <- struct{}{}
		<-m.release
	}
	return cmd, nil
}

func (m *holdMachine) ReadOnly(int) bool       { return false }
func (m *holdMachine) SetShards(int)           {}
func (m *holdMachine) ShardsOf(int) (int, int) { return 0, 0 }

func newHoldMachine() *holdMachine {
	return &holdMachine{entered: make(chan struct{}), release: make(chan struct{})}
}

// waitDesigns are the designs with a serial resource in the process: all
// but atomic (none) and db-rowlock (the database's).
func waitDesigns() (out []Design) {
	for _, d := range Designs() {
		if Supports(d.Name, Machine[int, int](newHoldMachine())) == nil {
			out = append(out, d)
		}
	}
	return out
}

// lockWaiters is how many goroutines started by holdRun are blocked on a
// sync.Mutex or sync.RWMutex now, read from their stacks.
func lockWaiters() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	k := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		head, _, _ := strings.Cut(g, "\n")
		if (strings.Contains(head, "[sync.Mutex.Lock") || strings.Contains(head, "[sync.RWMutex.")) && strings.Contains(g, "store.holdRun") {
			k++
		}
	}
	return k
}

// waiting is how many commands wait for s's serial resource now: in an
// owner's queue, on the combiner's list, or blocked on a lock.
func waiting(s Store[int, int]) int {
	f := s.(*facade[int, int])
	switch e := f.eng.(type) {
	case queueEngine:
		return e.queueLen()
	case *combiningEngine:
		n := 0
		for p := e.head.Load(); p != nil; p = p.next {
			n++
		}
		return n
	}
	return lockWaiters()
}

// The known answer: waitK commands wait behind one that holds the serial
// resource for at least waitHold after all of them are waiting.
const (
	waitK    = 4
	waitHold = 2 * time.Millisecond
)

// holdRun makes design's store hold its serial resource (command 0) while
// waitK more commands queue behind it, holds it waitHold longer once all
// of them wait, then lets go. It returns the stats after Close.
func holdRun(t *testing.T, d Design) SerialStats {
	t.Helper()
	m := newHoldMachine()
	s, err := New(d.Name, Machine[int, int](m), Config{MeasureSerial: true, SerialSampleEvery: 1, SpinBudget: time.Microsecond})
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Go(func() {
		_, err := s.Do(context.Background(), 0)
		assert.NoError(t, err)
	})
	within(t, m.entered, "command 0 never reached Apply")
	for i := 1; i <= waitK; i++ {
		wg.Go(func() {
			_, err := s.Do(context.Background(), i)
			assert.NoError(t, err)
		})
	}
	waitFor(t, func() bool { return waiting(s) == waitK }, "%s: %d commands never all waited", d.Name, waitK)
	time.Sleep(waitHold) // the wait every one of them has at least: not a synchronisation
	close(m.release)
	wg.Wait()
	require.NoError(t, s.Close())
	st, ok := s.(SerialReporter).SerialStats()
	require.True(t, ok)
	return st
}

// checkWaits is the check: at least k waits of d or more, and a median of
// d at least when they are most of the waits. Below is exact at a power of
// two: the largest one not above d.
func checkWaits(w Waits, k int, d time.Duration) error {
	p := time.Duration(1) << (bits.Len64(uint64(d)) - 1)
	long := w.Count() - w.Below(p)
	switch {
	case long < uint64(k):
		return fmt.Errorf("%d waits of %v or more (of %d), want %d at least", long, p, w.Count(), k)
	case 2*uint64(k) > w.Count() && w.Quantile(0.5) < time.Duration(float64(d)*(1-WaitResolution)):
		return fmt.Errorf("median wait %v < %v", w.Quantile(0.5), d)
	}
	return nil
}

// checkBatch is the batch's check for the designs that take more than one
// command in one go: the waiting commands were taken together.
func checkBatch(st SerialStats, k int) error {
	if st.Batches == 0 || st.MeanBatch() < float64(k+1)/2 {
		return fmt.Errorf("%d batches of %d commands: mean %.2f, want %.2f at least", st.Batches, st.BatchCommands, st.MeanBatch(), float64(k+1)/2)
	}
	return nil
}

// TestWaitKnownAnswer: in every design with a serial resource, commands
// that queue behind a held one report a wait of at least the time it was
// held after they queued — the lock wait of a lock design and the mailbox
// age of an owner design alike — and the owners and the combiner report
// them taken in one batch.
func TestWaitKnownAnswer(t *testing.T) {
	for _, d := range waitDesigns() {
		t.Run(d.Name, func(t *testing.T) {
			st := holdRun(t, d)
			assert.Equal(t, uint64(waitK+1), st.Wait.Count(), "every command's wait timed (SampleEvery 1)")
			assert.NoError(t, checkWaits(st.Wait, waitK, waitHold))
			if d.Owner || d.GroupCommit {
				assert.NoError(t, checkBatch(st, waitK))
				assert.Equal(t, int64(waitK+1), st.BatchCommands, "every command in a batch")
			} else {
				assert.Zero(t, st.Batches, "a lock takes one command per hold")
			}
		})
	}
}

// TestWaitCheckCanFail is TestWaitKnownAnswer's control: a clock that
// started each wait as the resource took the command (every wait 0), one
// that lost the waits, and a store that recorded no batch, from the same
// runs, fail the same checks.
func TestWaitCheckCanFail(t *testing.T) {
	broken := map[string]func(Waits) Waits{
		"started late": func(w Waits) Waits {
			out := Waits{Counts: make([]uint64, len(w.Counts))}
			out.Counts[0] = w.Count()
			return out
		},
		"lost": func(Waits) Waits { return Waits{} },
	}
	for _, name := range []string{"mutex", "inputQ", "inputQ-batch", "combining"} {
		d, _ := LookupDesign(name)
		t.Run(name, func(t *testing.T) {
			st := holdRun(t, d)
			for what, b := range broken {
				assert.Error(t, checkWaits(b(st.Wait), waitK, waitHold), what)
			}
			if d.Owner || d.GroupCommit {
				st.Batches, st.BatchCommands = 0, 0
				assert.Error(t, checkBatch(st, waitK), "no batch")
			}
		})
	}
}

// TestWaitSampled: with the default rate, one command's wait in 16 is
// timed (within 4 standard deviations of the binomial sample); every one
// with 1; none without MeasureSerial, and none in atomic, which has no
// serial resource and stays without a meter.
func TestWaitSampled(t *testing.T) {
	const n = 8_000
	count := func(design string, cfg Config) uint64 {
		s, err := New(design, Machine[int, int](capableOf[int, int](newBusyMachine(0))), cfg)
		require.NoError(t, err)
		defer s.Close()
		for i := range n {
			_, err := s.Do(context.Background(), i)
			require.NoError(t, err)
		}
		st, _ := s.(SerialReporter).SerialStats()
		return st.Wait.Count()
	}
	for _, design := range []string{"mutex", "inputQ", "combining"} {
		got := count(design, Config{MeasureSerial: true})
		p := 1.0 / DefaultSerialSampleEvery
		assert.InDelta(t, n*p, float64(got), 4*math.Sqrt(n*p*(1-p)), "%s: one in %d", design, DefaultSerialSampleEvery)
		assert.Equal(t, uint64(n), count(design, Config{MeasureSerial: true, SerialSampleEvery: 1}), design)
		assert.Zero(t, count(design, Config{}), design)
	}
	assert.Zero(t, count("atomic", Config{MeasureSerial: true}))
	s, err := New("atomic", Machine[int, int](newBusyMachine(0)), Config{MeasureSerial: true})
	require.NoError(t, err)
	defer s.Close()
	assert.Nil(t, s.(*facade[int, int]).hold, "atomic has no meter")
}

// TestWaitBuckets: every wait lands in a bucket that holds it; a quantile
// is within WaitResolution of the wait; Below is exact at powers of two;
// Sub and Mean are the window's.
func TestWaitBuckets(t *testing.T) {
	for _, v := range []int64{0, 1, 7, 15, 16, 17, 31, 32, 100, 999, 1000, 1023, 1024, 123_456, 1 << 39, 1<<40 - 1} {
		i := waitBucket(v)
		lo, hi := waitBounds(i)
		assert.True(t, lo <= v && v < hi, "%d in bucket %d [%d, %d)", v, i, lo, hi)
		var w waitClock
		w.add(v)
		q := w.read().Quantile(0.5)
		assert.InDelta(t, float64(v), float64(q), float64(v)*WaitResolution+0.5, "%d", v)
	}
	for i := 1; i < waitBuckets; i++ {
		_, hi0 := waitBounds(i - 1)
		lo, _ := waitBounds(i)
		assert.Equal(t, hi0, lo, "buckets %d and %d meet", i-1, i)
	}
	assert.Equal(t, waitBuckets-1, waitBucket(1<<62), "longer than the last bucket: counted in it")

	var w waitClock
	for _, v := range []int64{100, 200, 300, 5000} {
		w.add(v)
	}
	r := w.read()
	assert.Equal(t, uint64(4), r.Count())
	assert.Equal(t, time.Duration(1400), r.Mean())
	assert.Equal(t, uint64(3), r.Below(512))
	assert.Equal(t, uint64(1), r.Below(128))
	w.add(7000)
	win := w.read().Sub(r)
	assert.Equal(t, uint64(1), win.Count())
	assert.Equal(t, time.Duration(7000), win.Mean())
	assert.Zero(t, Waits{}.Quantile(0.99))
	assert.Zero(t, Waits{}.Mean())
	assert.Zero(t, SerialStats{}.MeanBatch())
}

// TestSerialStatsSubClocks: a window's stats hold the waits and batches
// recorded in it, not before.
func TestSerialStatsSubClocks(t *testing.T) {
	m := newSerialMeter(1, Config{MeasureSerial: true, SerialSampleEvery: 1})
	m.waited(0, 1000+m.overhead)
	m.batch(3)
	s0 := m.stats()
	m.waited(0, 5000+m.overhead)
	m.batch(5)
	m.batch(7)
	m.batch(0) // no batch
	w := m.stats().Sub(s0)
	assert.Equal(t, uint64(1), w.Wait.Count())
	assert.Equal(t, 5000*time.Nanosecond, w.Wait.Mean())
	assert.Equal(t, int64(2), w.Batches)
	assert.Equal(t, int64(12), w.BatchCommands)
	assert.InDelta(t, 6.0, w.MeanBatch(), 1e-9)
	assert.Equal(t, uint64(1), s0.Wait.Count(), "Sub leaves its operands alone")
	var none *serialMeter
	none.batch(4) // no meter: nothing, and no panic
	none.took(nil)
}
