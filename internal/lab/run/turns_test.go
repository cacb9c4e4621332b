package run

import (
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sleepers starts n processes that wait, each its own arm, and stops them
// when the test ends.
func sleepers(t *testing.T, n int) [][]int {
	t.Helper()
	var procs [][]int
	for range n {
		c := exec.Command("sleep", "60")
		require.NoError(t, c.Start())
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		procs = append(procs, []int{c.Process.Pid})
	}
	return procs
}

// running lists which of procs are not stopped (state T) now.
func running(t *testing.T, procs [][]int) []bool {
	t.Helper()
	out := make([]bool, len(procs))
	for i, ps := range procs {
		out[i] = !stoppedOrGone(ps[0])
	}
	return out
}

// overlaps counts, over samples taken every half millisecond for d, the
// samples in which more than one arm was not stopped, and which arms ran
// at all. A sample reads the arms' states twice and counts only when both
// readings agree: one arm's state is read some microseconds after
// another's (more on a busy machine), and a hand-over between them would
// read as two arms running when no two ran at once.
func overlaps(t *testing.T, procs [][]int, d time.Duration) (both, samples int, ran []bool) {
	t.Helper()
	ran = make([]bool, len(procs))
	// At least d, and on a machine crowded by other tests, on until the
	// samples are enough to judge (minSamples), for at most ten times d.
	start := time.Now()
	for ; time.Since(start) < d || (samples < minSamples && time.Since(start) < 10*d); time.Sleep(500 * time.Microsecond) {
		first, again := running(t, procs), running(t, procs)
		if !slices.Equal(first, again) {
			continue
		}
		n := 0
		for i, r := range again {
			if r {
				n++
				ran[i] = true
			}
		}
		if n > 1 {
			both++
		}
		samples++
	}
	return both, samples, ran
}

// minSamples is how many samples overlaps takes at least, time allowing.
const minSamples = 100

// TestTurnsHoldOneAtATime: under turns one arm's processes run at a time
// and every arm gets turns; the control, the same processes without
// turns, shows the check sees arms running together. Each arm is read
// once, during its own turn, with the time it has held the CPUs, and
// stopping the turns lets every process run again.
func TestTurnsHoldOneAtATime(t *testing.T) {
	procs := sleepers(t, 3)
	both, samples, _ := overlaps(t, procs, 50*time.Millisecond)
	assert.Equal(t, samples, both, "the control: without turns every arm runs at once")

	began := time.Now()
	tn := startTurns(procs, 5*time.Millisecond, nil)
	defer tn.stop()
	both, samples, ran := overlaps(t, procs, 300*time.Millisecond)
	// A turn starts once the last one's stop has landed: no sample may see
	// two arms running, but one in ten on a machine whose tests crowd it
	// past stopWithin (a CI run saw 2 of 39); without turns, every one
	// does (the control above).
	assert.GreaterOrEqual(t, samples, minSamples, "samples enough to judge")
	assert.Less(t, both, samples/10+1, "turns: %d of %d samples saw two arms running", both, samples)
	assert.Equal(t, []bool{true, true, true}, ran, "every arm took turns")

	var mu sync.Mutex
	var order []int
	held := map[int]time.Duration{}
	before := time.Since(began)
	tn.readEach(func(arm int, h time.Duration) {
		r := running(t, procs)
		mu.Lock()
		defer mu.Unlock()
		order = append(order, arm)
		held[arm] = h
		for i, ok := range r {
			assert.Equal(t, i == arm, ok, "arm %d read while arm %d ran: %v", arm, i, r)
		}
	})
	after := time.Since(began)
	assert.Len(t, order, 3, "every arm read once")
	for arm, h := range held {
		// The turns so far (300 ms, or up to ten times that where the
		// sampling ran on), shared three ways: each arm held about a
		// third, and none held them all along.
		assert.Greater(t, h, before*2/15, "arm %d held the CPUs (turns for %v)", arm, before)
		assert.Less(t, h, after*5/6, "arm %d held them only in its turns (turns for %v)", arm, after)
	}
	tn.stop()
	for i, r := range running(t, procs) {
		assert.True(t, r, "arm %d runs again once the turns end", i)
	}
}

// TestTurnsStopWithoutReads: ending the turns while no read is pending,
// and a read asked after they ended, both return.
func TestTurnsStopWithoutReads(t *testing.T) {
	procs := sleepers(t, 2)
	tn := startTurns(procs, time.Millisecond, nil)
	time.Sleep(10 * time.Millisecond)
	tn.stop()
	tn.stop() // twice is fine
	done := make(chan struct{})
	go func() {
		tn.readEach(func(int, time.Duration) { t.Error("no arm is read once the turns ended") })
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("readEach after stop did not return")
	}
	var none *turns
	none.stop() // no turns: nothing to end
}
