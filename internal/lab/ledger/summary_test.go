package ledger

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/exp/trace"
)

// call is a call of the given time in each named category.
func call(by map[string]time.Duration) Call {
	c := Call{By: make([]time.Duration, len(Categories))}
	for name, d := range by {
		c.By[index[name]] += d
		c.Total += d
	}
	return c
}

// TestSummarize: 100 calls, 98 of 10 µs running and two slow ones, 1 ms
// mostly waiting on a lock: the median call is running, the tail is the
// lock, and the part the trace could not place counts against Accounted.
func TestSummarize(t *testing.T) {
	var l Ledger
	for range 98 {
		l.Calls = append(l.Calls, call(map[string]time.Duration{Running: 10 * time.Microsecond}))
	}
	for range 2 {
		l.Calls = append(l.Calls, call(map[string]time.Duration{
			Running: 10 * time.Microsecond, Sync: 980 * time.Microsecond, Unattributed: 10 * time.Microsecond}))
	}
	s, err := l.Summarize()
	require.NoError(t, err)
	assert.Equal(t, 100, s.Calls)
	assert.InDelta(t, 10, s.P50Us, 1e-9)
	assert.InDelta(t, 10, s.StateP50Us[Running], 1e-9)
	assert.InDelta(t, 0, s.StateP50Us[Sync], 1e-9)
	assert.InDelta(t, 10, s.AtP50Us[Running], 1e-9)
	assert.InDelta(t, 980, s.TailUs[Sync], 1e-9, "the tail is the slow calls")
	assert.InDelta(t, 1-20.0/(98*10+2*1000), s.Accounted, 1e-9)
	for _, m := range []map[string]float64{s.StateP50Us, s.StateP99Us, s.AtP50Us, s.AtP99Us, s.TailUs} {
		assert.Len(t, m, len(Categories), "every category a key")
	}
	share, err := l.Share(Sync)
	require.NoError(t, err)
	assert.InDelta(t, 2*980.0/(98*10+2*1000), share, 1e-9)
	_, err = l.Share("nosuch")
	assert.ErrorContains(t, err, "nosuch")
}

// TestClassify: every category but Unattributed is reachable from some
// state, so no row of the table is dead.
func TestClassify(t *testing.T) {
	reached := map[string]bool{}
	for _, s := range statesToTry() {
		reached[Classify(s)] = true
	}
	for _, c := range Names() {
		assert.True(t, reached[c], "no state lands in %s", c)
	}
}

// statesToTry is every goroutine state with every reason the table names
// (and one it does not), in and out of an assist and a pause.
func statesToTry() []State {
	reasons := []string{"", "sleep"}
	for r := range waitReasons {
		reasons = append(reasons, r)
	}
	var out []State
	for g := trace.GoUndetermined; g <= trace.GoSyscall; g++ {
		for _, r := range reasons {
			for _, flags := range []State{{}, {Assist: true}, {STW: true}} {
				out = append(out, State{Go: g, Reason: r, Assist: flags.Assist, STW: flags.STW})
			}
		}
	}
	return out
}
