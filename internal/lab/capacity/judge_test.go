package capacity

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/summary"
)

func TestRecoveryNeedsEveryLaterInterval(t *testing.T) {
	slo, err := ParseSLO("p99<=1ms")
	require.NoError(t, err)
	tl := func(p99s ...float64) *summary.Summary {
		s := &summary.Summary{}
		for i, p := range p99s {
			s.Timeline = append(s.Timeline, summary.TimelinePoint{StartS: 0.1 * float64(i), Calls: 1, P99Ms: p})
		}
		return s
	}
	at, ok := Recovery(slo, tl(5, 0.5, 5, 0.5, 0.5))
	assert.True(t, ok)
	assert.InDelta(t, 0.3, at, 1e-9, "a good interval followed by a bad one is not recovered")
	_, ok = Recovery(slo, tl(0.5, 5))
	assert.False(t, ok, "the last interval broke the objective")
	_, ok = Recovery(slo, &summary.Summary{})
	assert.False(t, ok, "no timeline, no recovery time")
}

// TestJudge: a run within the objective passes; the same run failed (the
// control) does not, whatever its latency, and a load-bound driver that
// dropped calls marks the point as beyond what it could offer.
func TestJudge(t *testing.T) {
	slo, err := ParseSLO("p99<=1ms")
	require.NoError(t, err)
	r := capRun("ladder-mutex-5000-b1", "mutex", 5000, 0.5, nil)
	pt := Judge(slo, r)
	assert.True(t, pt.Pass, pt.Why)
	assert.Equal(t, CapPoint{Workload: "counter", Driver: "go", Mode: "mutex", Block: r.Rep, Rate: 5000, RunID: r.ID, Pass: true, Why: pt.Why}, pt)
	assert.Empty(t, pt.Beyond)

	r.Problems = []string{"invariant broken"}
	pt = Judge(slo, r)
	assert.False(t, pt.Pass, "the control: a failed run does not pass")
	assert.Contains(t, pt.Why, "invariant broken")

	r = capRun("ladder-mutex-9000-b1", "mutex", 9000, 0.5, func(s *summary.Summary) { s.Dropped = 12 })
	r.Derived.Class, r.Derived.DriverUtil = record.ClassLoadBound, 0.97
	assert.Equal(t, "go dropped 12 calls using 97% of its CPUs", Judge(slo, r).Beyond)
}
