package store

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/workload"
)

// The small machines the store tests run the designs over. Each is a plain
// sequential Machine, like a real workload, with what a test needs to observe.

// testCmd is a command for recorder: add n to the total, or fail with err.
type testCmd struct {
	n   int
	err error // non-nil: refuse with exactly this error
}

// testError is a machine's own error type; a pointer to one is compared by
// identity, so a design that wrapped or replaced it would be caught.
type testError struct{ msg string }

func (e *testError) Error() string { return e.msg }

// recorder adds up its commands and logs every one it applies, refused ones
// included. Tests read the log only after Close, which orders it after the
// last Apply.
type recorder struct {
	total int
	log   []testCmd
}

func (m *recorder) Apply(c testCmd) (int, error) {
	m.log = append(m.log, c)
	if c.err != nil {
		return 0, c.err
	}
	m.total += c.n
	return m.total, nil
}

// gate's Apply announces each command on entered and then waits for a token
// on release (or for release to be closed), so a test decides when the
// machine moves on: it can hold the InputQ's owner inside Apply while it fills
// the queue.
type gate struct {
	entered chan int
	release chan struct{}
	applied []int // in order; read after Close
}

func newGate() *gate {
	return &gate{entered: make(chan int, 10_000), release: make(chan struct{})}
}

func (g *gate) Apply(cmd int) (int, error) {
	g.entered <- cmd
	<-g.release
	g.applied = append(g.applied, cmd)
	return cmd * 10, nil
}

// overlapDetector counts Apply calls that run while another is running. It
// uses atomics only, so it can watch a broken design without the race
// detector stopping the test first.
type overlapDetector struct {
	inApply  atomic.Int32
	overlaps atomic.Int32
	applied  atomic.Int32
}

func (m *overlapDetector) Apply(int) (int, error) {
	if m.inApply.Add(1) > 1 {
		m.overlaps.Add(1)
	}
	// Stay inside Apply across a reschedule, so that any goroutine able to
	// enter concurrently gets the chance, even with GOMAXPROCS=1.
	for range 3 {
		runtime.Gosched()
	}
	m.applied.Add(1)
	m.inApply.Add(-1)
	return 0, nil
}

// waitFor fails the test unless cond becomes true within a generous bound
// (the race detector and a shared machine slow everything down).
func waitFor(t *testing.T, cond func() bool, msg string, args ...any) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 100*time.Microsecond, append([]any{msg}, args...)...)
}

// notYet fails the test if ch is closed or ready within a short while: used to
// check that something waits when it should.
func notYet[T any](t *testing.T, ch <-chan T, msg string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatal(msg)
	case <-time.After(20 * time.Millisecond):
	}
}

// within receives from ch or fails the test after a generous bound.
func within[T any](t *testing.T, ch <-chan T, msg string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal(msg)
		panic("unreachable")
	}
}

// newTestBank is a sample bank for designsFor.
func newTestBank() *workload.Bank {
	b, err := workload.NewBank(workload.BankConfig{})
	if err != nil {
		panic(err)
	}
	return b
}
