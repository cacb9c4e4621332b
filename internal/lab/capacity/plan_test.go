package capacity

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/summary"
)

func TestParseSLO(t *testing.T) {
	o, err := ParseSLO(ExampleSLO)
	require.NoError(t, err)
	assert.Equal(t, SLO{Pct: "p99", Latency: 5 * time.Millisecond, Achieved: 0.99, Errors: 0}, o)
	assert.Equal(t, ExampleSLO, o.String(), "the canonical form reads back")
	assert.Equal(t, "p99 ≤ 5 ms", o.Title())

	o, err = ParseSLO(" p99.9<=5ms , errors<=3 ")
	require.NoError(t, err)
	assert.Equal(t, SLO{Pct: "p99.9", Latency: 5 * time.Millisecond, Achieved: 0.99, Errors: 3}, o, "the other terms take their defaults")

	for _, tt := range []struct{ in, want string }{
		{"", "term"},
		{"p99", "term \"p99\""},
		{"p98<=1ms", `no percentile "p98"`},
		{"p99>=1ms", "bounds latency from above"},
		{"p99<=fast", "want a duration"},
		{"p99<=0s", "want a duration"},
		{"p99<=1ms,p50<=1ms", "latency given twice"},
		{"achieved>=0.99", "no latency term"},
		{"p99<=1ms,achieved>=1.5", "achieved: want"},
		{"p99<=1ms,achieved<=0.5", "achieved: want"},
		{"p99<=1ms,errors=-1", "errors: want"},
		{"p99<=1ms,errors>=0", "errors: want"},
		{"p99<=1ms,goodput>=5", `unknown term "goodput"`},
	} {
		_, err := ParseSLO(tt.in)
		require.Error(t, err, tt.in)
		assert.Contains(t, err.Error(), tt.want, tt.in)
		assert.Contains(t, err.Error(), "-slo", "the message names the flag")
	}
}

// TestFloorObjective: the default objective is the floor times the
// multiple, rounded up to 0.1 ms, with the example's other terms; it reads
// back through ParseSLO.
func TestFloorObjective(t *testing.T) {
	for _, tt := range []struct {
		floor, multiple float64
		want            string
	}{
		{2.1, 3, "p99<=6.3ms,achieved>=0.99,errors=0"},
		{1.52, 3, "p99<=4.6ms,achieved>=0.99,errors=0"}, // 4.56 up
		{0.01, 2, "p99<=100µs,achieved>=0.99,errors=0"}, // at least 0.1 ms
	} {
		o := FloorObjective(tt.floor, tt.multiple)
		assert.Equal(t, tt.want, o.String())
		back, err := ParseSLO(o.String())
		require.NoError(t, err)
		assert.Equal(t, o, back)
	}
}

func TestSLOVerdict(t *testing.T) {
	o, err := ParseSLO("p99<=1ms")
	require.NoError(t, err)
	ok := &summary.Summary{CallsPerS: 1000, LatencyMs: summary.LatencyMs{P99: 0.9}}
	pass, why := o.Verdict(1000, ok)
	assert.True(t, pass, why)
	for _, tt := range []struct {
		name  string
		spoil func(*summary.Summary)
		want  string
	}{
		{"slow", func(s *summary.Summary) { s.LatencyMs.P99 = 1.2 }, "p99 1.2 ms > 1 ms"},
		{"short", func(s *summary.Summary) { s.CallsPerS = 980 }, "achieved 98.0%"},
		{"errors", func(s *summary.Summary) { s.UnexpectedErrors = 1 }, "1 unexpected errors > 0"},
	} {
		s := *ok
		tt.spoil(&s)
		pass, why := o.Verdict(1000, &s)
		assert.False(t, pass, tt.name)
		assert.Contains(t, why, tt.want, tt.name)
	}
}

func TestParseStepsAndRates(t *testing.T) {
	steps, err := ParseSteps("10,25,50,75,100,120", "-steps")
	require.NoError(t, err)
	assert.Equal(t, []float64{0.1, 0.25, 0.5, 0.75, 1, 1.2}, steps)
	assert.Equal(t, []int{1000, 2500, 5000, 7500, 10000, 12000}, LadderRates(10000, steps))
	assert.Equal(t, []int{1, 2}, LadderRates(2, []float64{0.1, 0.5, 1}), "at least 1, no repeats")
	for _, bad := range []string{"", "50,10", "0,10", "10,10", "x", "600"} {
		_, err := ParseSteps(bad, "-steps")
		assert.ErrorContains(t, err, "-steps", bad)
	}
	for _, bad := range []string{"", "5000,1000", "0", "1.5", "2000000"} {
		_, err := ParseRates(bad, "-rates")
		assert.ErrorContains(t, err, "-rates", bad)
	}
}

func probes(rates []int, pass func(int) bool) []Probe {
	var out []Probe
	for _, r := range rates {
		out = append(out, Probe{Rate: r, Pass: pass(r)})
	}
	return out
}

func TestFindKnee(t *testing.T) {
	ladder := []int{100, 200, 400, 800}
	below := func(c int) func(int) bool { return func(r int) bool { return r <= c } }
	assert.Equal(t, Knee{State: KneeFound, Rate: 200, Fail: 400}, FindKnee(probes(ladder, below(300))))
	assert.Equal(t, Knee{State: KneeAbove, Rate: 800}, FindKnee(probes(ladder, below(1000))))
	assert.Equal(t, Knee{State: KneeBelow, Fail: 100}, FindKnee(probes(ladder, below(50))))
	// The control: a curve that passes again above a failure has no knee
	// the finder may claim.
	noisy := probes(ladder, func(r int) bool { return r != 200 })
	assert.Equal(t, KneeNonMonotone, FindKnee(noisy).State)
	assert.Equal(t, KneeNonMonotone, FindKnee([]Probe{{100, true}, {100, false}}).State, "one rate that both passed and failed")
	assert.Equal(t, KneeNonMonotone, FindKnee(nil).State)

	// Bisection narrows the bracket to RefineResolution and stops.
	ps := probes(ladder, below(300))
	steps := 0
	for {
		next, ok := FindKnee(ps).Next()
		if !ok {
			break
		}
		ps = append(ps, Probe{Rate: next, Pass: next <= 300})
		steps++
	}
	k := FindKnee(ps)
	assert.Equal(t, KneeFound, k.State)
	assert.Equal(t, 300, k.Rate)
	assert.LessOrEqual(t, float64(k.Fail-k.Rate), RefineResolution*float64(k.Rate)+1)
	assert.Less(t, steps, 10)
	_, ok := Knee{State: KneeAbove, Rate: 800}.Next()
	assert.False(t, ok, "no bracket, no midpoint")
}

func TestAdmissionBoundAndPolicies(t *testing.T) {
	assert.Equal(t, 20, AdmissionBound(20000, time.Millisecond), "Little's law: 20,000/s × 1 ms")
	assert.Equal(t, 1, AdmissionBound(10, time.Millisecond), "at least one")
	for _, p := range Policies {
		ok, _ := p.Serves("inputQ")
		assert.True(t, ok, "%s serves an owner design", p.Name)
		got, found := LookupPolicy(p.Name)
		assert.True(t, found)
		assert.Equal(t, p.Name, got.Name)
	}
	q, _ := LookupPolicy("owner-queue")
	ok, why := q.Serves("mutex")
	assert.False(t, ok)
	assert.Equal(t, "mutex has no owner queue", why)
	assert.Equal(t, []string{"-reject-when-full", "-queue-size", "20"}, q.Server(20))
}
