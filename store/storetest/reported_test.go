package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/store"
)

// The tests here run each control through every check, as Check and
// Results do, and assert that it is reported by the checks it breaks, with
// no check waiting on it longer than its hang bound. With -v they log how
// long each check took; BenchmarkControlsReported measures the same with
// the default options.

type newStore = func(store.Machine[int64, int64]) (store.Store[int64, int64], error)

// unsynchronisedStore is TestControls' unsynchronised wrapper, with less
// patience: a check that makes one call at a time waits that long for a
// second caller that never comes.
func unsynchronisedStore(m store.Machine[int64, int64]) (store.Store[int64, int64], error) {
	return unsynchronised{m: m, meet: &meeting{both: make(chan struct{}), patience: 250 * time.Millisecond}}, nil
}

// closeNeverReturns is a mutex design whose Close waits for release, closed
// when the test ends so that no goroutine outlives it.
func closeNeverReturns(tb testing.TB) newStore {
	release := make(chan struct{})
	tb.Cleanup(func() { close(release) })
	return wrapMutex(func(w *mutexAround) { w.hangClose = release })
}

// runControl runs every check on one control design and returns the
// results by check, logging each as it comes and when the first failure
// came.
func runControl(t *testing.T, name string, ns newStore, opts ...Option) map[string]Result {
	t.Helper()
	k := mustKit(t, newRMW, rmwGen, opts...)
	results := map[string]Result{}
	start := time.Now()
	var first time.Duration
	runAll(k, []subject[int64, int64]{{name, ns}}, 7, func(r Result) bool {
		results[r.Check] = r
		if r.Err != nil && first == 0 {
			first = time.Since(start)
		}
		if r.Err != nil {
			t.Logf("%s: failed after %v", r.Check, round(r.Elapsed))
		} else {
			t.Logf("%s: passed in %v", r.Check, round(r.Elapsed))
		}
		return true
	})
	t.Logf("%s: first failure reported %v after the start, all %d checks done after %v", name, round(first), len(results), round(time.Since(start)))
	require.Len(t, results, len(checks[int64, int64]()))
	return results
}

// assertFails: the check failed with an error saying want, and it did not
// give up on a hang.
func assertFails(t *testing.T, results map[string]Result, check, want string) {
	t.Helper()
	r := results[check]
	if assert.Error(t, r.Err, "check %q passed a broken design", check) {
		assert.ErrorContains(t, r.Err, want, check)
		assert.NotErrorIs(t, r.Err, ErrHang, check)
	}
}

func TestReportedUnsynchronised(t *testing.T) {
	results := runControl(t, "unsynchronised", unsynchronisedStore)
	assertFails(t, results, "linearizable", "Apply ran concurrently")
	assertFails(t, results, "ended context is refused", "already ended")
	assertFails(t, results, "Do after Close is refused", "want store.ErrClosed")
	assertFails(t, results, "Close waits for Apply", "while Apply was still running")
	assertFails(t, results, "Close under load", "after Close returned")
	for _, r := range results {
		assert.NotErrorIs(t, r.Err, ErrHang, r.Check)
	}
}

func TestReportedAnswersBeforeApplying(t *testing.T) {
	results := runControl(t, "answers before applying", newBehind(false))
	assertFails(t, results, "linearizable", "the answer came before the command was applied")
	for _, r := range results {
		assert.NotErrorIs(t, r.Err, ErrHang, r.Check)
	}
}

// TestReportedCloseDoesNothing: a store that keeps answering after Close
// is reported by the checks that close it, Close under load included,
// which no longer waits on callers that are never refused.
func TestReportedCloseDoesNothing(t *testing.T) {
	results := runControl(t, "Close does nothing", wrapMutex(func(w *mutexAround) { w.noopClose = true }))
	assertFails(t, results, "Do after Close is refused", "want store.ErrClosed")
	assertFails(t, results, "Close under load", "was not refused with store.ErrClosed")
	for _, r := range results {
		assert.NotErrorIs(t, r.Err, ErrHang, r.Check)
	}
}

// TestReportedCloseNeverReturns: every check closes the store, so every
// check gives up on Close, each after the bound derived from the calls it
// saw complete: max(HangAfter, HangFactor × the slowest).
func TestReportedCloseNeverReturns(t *testing.T) {
	const floor = 250 * time.Millisecond
	results := runControl(t, "Close never returns", closeNeverReturns(t), HangAfter(floor))
	for _, r := range results {
		var he *hangError
		if !assert.ErrorAs(t, r.Err, &he, r.Check) {
			continue
		}
		assert.ErrorIs(t, r.Err, ErrHang, r.Check)
		assert.Equal(t, "Close", he.slot, r.Check)
		assert.Equal(t, floor, he.floor, r.Check)
		assert.Equal(t, max(floor, HangFactor*he.slowest), he.bound, r.Check)
		assert.Greater(t, he.age, he.bound, r.Check)
		// Generous: the old fixed wait was two minutes a check.
		assert.Less(t, r.Elapsed, 30*time.Second, r.Check)
		t.Logf("%s: gave up after %v on a bound of %v (slowest call %v)", r.Check, round(he.age), round(he.bound), round(he.slowest))
	}
}

// TestHangAfterDefault: with no option the floor is DefaultHangAfter.
func TestHangAfterDefault(t *testing.T) {
	k := mustKit(t, newRMW, rmwGen)
	err := checkClosed(k, subject[int64, int64]{"Close never returns", closeNeverReturns(t)}, 7)
	var he *hangError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, DefaultHangAfter, he.floor)
	assert.Equal(t, max(DefaultHangAfter, HangFactor*he.slowest), he.bound)
	assert.Contains(t, err.Error(), "Close has not returned after")
}

// TestHangBoundFromLatency: the bound grows with the slowest call seen
// complete, past the floor, and names the call it gave up on.
func TestHangBoundFromLatency(t *testing.T) {
	w := newWatch(10 * time.Millisecond)
	fast := w.slot("fast", nil)
	stuck := w.slot("stuck", func(n int) string { return "the stuck call" })
	fast.begin(0)
	time.Sleep(3 * time.Millisecond)
	fast.end()
	slowest := w.slowest()
	require.GreaterOrEqual(t, slowest, 3*time.Millisecond)
	stuck.begin(4)
	start := time.Now()
	err := w.wait(make(chan struct{}))
	var he *hangError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, HangFactor*slowest, he.bound, "the derived bound, not the floor")
	assert.Greater(t, he.bound, he.floor)
	assert.GreaterOrEqual(t, time.Since(start), he.bound)
	assert.Equal(t, 4, he.n)
	assert.Contains(t, err.Error(), "the stuck call has not returned after")
	assert.Contains(t, err.Error(), "100 × the slowest call")
}

// TestHangDiscountsStalls: time the whole process stood still (the waiter
// woke late) does not count toward a call's age.
func TestHangDiscountsStalls(t *testing.T) {
	w := newWatch(time.Second)
	s := w.slot("call", nil)
	s.start.Store(1) // began at t0
	require.Nil(t, w.overdue(w.t0.Add(100*time.Millisecond), 0))
	w.paused = 900 * time.Millisecond // then the process stalled
	assert.Nil(t, w.overdue(w.t0.Add(1500*time.Millisecond), 0), "1.5s in flight, 0.9s of it stalled")
	assert.NotNil(t, w.overdue(w.t0.Add(2500*time.Millisecond), 0))
}

// TestReplayInconclusive: a search that runs out of its budget says so,
// and how far it got, rather than running on.
func TestReplayInconclusive(t *testing.T) {
	h := &history[int64, int64]{applies: []applied[int64, int64]{
		{cmd: 1, r: 1, begin: 1, end: 10},
		{cmd: 1, r: 3, begin: 2, end: 9},
		{cmd: 1, r: 2, begin: 3, end: 8},
		{cmd: 2, r: 5, begin: 11, end: 12},
	}}
	k := mustKit(t, newRMW, rmwGen, SearchBudget(2))
	err := k.replay(h)
	require.ErrorIs(t, err, ErrInconclusive)
	assert.ErrorContains(t, err, "inconclusive after 2 applies")
	assert.ErrorContains(t, err, "of the 4 recorded applies, 3 overlapped another")
	assert.NoError(t, mustKit(t, newRMW, rmwGen).replay(h), "the default budget finds the order")
}

// TestVerifyNamesSeedOnce: Verify's error names the seed once, and each
// failing check with the time it took; Results stops when asked.
func TestVerifyNamesSeedOnce(t *testing.T) {
	opts := []Option{Designs("mutex"), Store("unsync", unsynchronisedStore), Seed(7), Calls(4, 50)}
	err := Verify(newRMW, rmwGen, opts...)
	require.Error(t, err)
	msg := err.Error()
	assert.Equal(t, 1, strings.Count(msg, "Seed(7)"), msg)
	assert.Contains(t, msg, "unsync/ended context is refused, failed after", "a check that fails whatever the timing")
	assert.NotContains(t, msg, "mutex/")

	var seen []Result
	for r := range Results(newRMW, rmwGen, opts...) {
		seen = append(seen, r)
		if r.Err != nil {
			break
		}
	}
	require.NotEmpty(t, seen)
	last := seen[len(seen)-1]
	assert.Equal(t, "unsync", last.Design)
	require.Error(t, last.Err, "the first check to fail is the last one run")
	for _, r := range seen[:len(seen)-1] {
		assert.NoError(t, r.Err, r.Check)
	}
	// Which check fails first depends on whether the unsynchronised calls
	// happened to overlap; whichever it was, Verify names it.
	assert.Contains(t, last.String(), "unsync/"+last.Check+", Seed(7), failed after")

	err = Verify(newRMW, rmwGen, HangAfter(0))
	assert.ErrorContains(t, err, "HangAfter")
	assert.False(t, errors.Is(err, ErrHang))
}

// BenchmarkControlsReported measures, with the default options, how long
// each control takes to be reported: the first failing check, and every
// check. One iteration is enough:
//
//	go test -run '^$' -bench ControlsReported -benchtime 1x -v ./store/storetest
func BenchmarkControlsReported(b *testing.B) {
	controls := []struct {
		name string
		ns   func(testing.TB) newStore
	}{
		{"unsynchronised wrapper", func(testing.TB) newStore { return unsynchronisedStore }},
		{"answers before applying", func(testing.TB) newStore { return newBehind(false) }},
		{"Close does nothing", func(testing.TB) newStore { return wrapMutex(func(w *mutexAround) { w.noopClose = true }) }},
		{"Close never returns", closeNeverReturns},
	}
	for _, c := range controls {
		b.Run(c.name, func(b *testing.B) {
			ns := c.ns(b)
			k, err := newKit(newRMW, rmwGen, nil)
			require.NoError(b, err)
			var first, all time.Duration
			for b.Loop() {
				start := time.Now()
				first = 0
				runAll(k, []subject[int64, int64]{{c.name, ns}}, 7, func(r Result) bool {
					if r.Err != nil && first == 0 {
						first = time.Since(start)
					}
					b.Logf("%s: %v (err: %t)", r.Check, round(r.Elapsed), r.Err != nil)
					return true
				})
				all = time.Since(start)
			}
			b.ReportMetric(first.Seconds(), "s-to-first-failure")
			b.ReportMetric(all.Seconds(), "s-all-checks")
		})
	}
}
