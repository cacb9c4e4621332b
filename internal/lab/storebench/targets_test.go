package storebench

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/store"
)

// benchLine is one row of synthetic go test output, one line per value.
type benchLine struct {
	design, op string
	par        int
	work       time.Duration
	cpu        int
	ns         []float64
	allocs     float64
}

// benchText renders lines as go test -bench prints them, with a header;
// mem false leaves out B/op and allocs/op, as without -benchmem.
func benchText(mem bool, ls ...benchLine) string {
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\npkg: github.com/locklab/locklab/store\ncpu: Test CPU @ 1GHz\n")
	for _, l := range ls {
		suffix := ""
		if l.cpu > 1 {
			suffix = fmt.Sprintf("-%d", l.cpu)
		}
		for _, v := range l.ns {
			fmt.Fprintf(&b, "BenchmarkStore/op=%s/work=%v/design=%s/par=%d%s\t1000\t%g ns/op", l.op, l.work, l.design, l.par, suffix, v)
			if mem {
				fmt.Fprintf(&b, "\t0 B/op\t%g allocs/op", l.allocs)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("PASS\n")
	return b.String()
}

// six is six runs with median v: enough for a 95% interval of the median.
func six(v float64) []float64 { return []float64{v - 2, v - 1, v - 0.5, v + 0.5, v + 1, v + 2} }

// drift is eight rounds' ns/op of a row at v whose rounds drift by ±20%:
// unpaired, its interval is wide; paired with another row drifting alike,
// the drift cancels.
func drift(v float64) []float64 {
	f := []float64{0.8, 1.2, 0.9, 1.1, 0.85, 1.15, 0.95, 1.05}
	out := make([]float64, len(f))
	for i := range f {
		out[i] = v * f[i]
	}
	return out
}

// times multiplies a row's rounds by the per-round ratios rs.
func times(xs []float64, rs ...float64) []float64 {
	out := make([]float64, len(xs))
	for i := range xs {
		out[i] = xs[i] * rs[i%len(rs)]
	}
	return out
}

// at is a row at the targets' coordinates.
func at(design, op string, cpu int, ns []float64) benchLine {
	return benchLine{design: design, op: op, par: targetPar, work: targetWork, cpu: cpu, ns: ns}
}

func TestTargetNamesExist(t *testing.T) {
	for _, name := range []string{designMutex, designSharded, designCombining} {
		_, ok := store.LookupDesign(name)
		assert.True(t, ok, "the targets name %q, which the registry lacks", name)
	}
	owners := ownerOrCombining()
	assert.Contains(t, owners, designCombining)
	for _, name := range owners {
		ds, ok := store.LookupDesign(name)
		require.True(t, ok)
		assert.True(t, ds.Owner || name == designCombining, name)
	}
	assert.Greater(t, len(owners), 1, "the registry has owner-style designs")
}

func TestWithinLimit(t *testing.T) {
	inf := math.Inf(1)
	assert.Equal(t, met, withinLimit(1, 2, 2), "an interval ending at the limit is within it")
	assert.Equal(t, notMet, withinLimit(2.01, 3, 2))
	assert.Equal(t, undecided, withinLimit(1.9, 2.1, 2))
	assert.Equal(t, undecided, withinLimit(-inf, inf, 2), "no interval decides nothing")
}

func TestTargets(t *testing.T) {
	owner := ownerOrCombining()[0] // an owner-style design, from the registry
	incUnder := func(cpu int) func(*Data) target {
		return func(d *Data) target { return fastestUnder(d, opIncrement, ownerIncrementMaxNs, cpu) }
	}
	combVsMutex := func(cpu int) func(*Data) target {
		return func(d *Data) target {
			return ratioAtMost(d, designCombining, designMutex, opIncrement, combiningMaxRatio, cpu)
		}
	}
	shardedVsMutex := func(d *Data) target {
		return ratioAtMost(d, designSharded, designMutex, opTransfer, shardedMaxRatio, 2)
	}
	base := drift(100)
	tests := []struct {
		name   string
		mem    bool
		lines  []benchLine
		judge  func(*Data) target
		want   verdict
		detail string
	}{
		{"owner Increment under 150", true, []benchLine{at(owner, opIncrement, 2, six(100)), at(designCombining, opIncrement, 2, six(400))},
			incUnder(2), met, owner + "'s whole interval is under 150 ns/op"},
		{"control: owner Increment over 150", true, []benchLine{at(owner, opIncrement, 2, six(200)), at(designCombining, opIncrement, 2, six(400))},
			incUnder(2), notMet, "every design's whole interval is over 150"},
		{"an interval across the limit is undecided", true, []benchLine{at(owner, opIncrement, 2, []float64{100, 120, 140, 150, 160, 180, 200, 220})},
			incUnder(2), undecided, owner + " 155 [100, 200]"},
		{"a median under the limit is not enough", true, []benchLine{at(owner, opIncrement, 2, []float64{100, 110, 120, 130, 140, 145, 400, 800})},
			incUnder(2), undecided, "no design's interval is wholly under"},
		{"a lock design does not count", true, []benchLine{at(designMutex, opTransfer, 2, six(10)), at(owner, opTransfer, 2, six(300))},
			func(d *Data) target { return fastestUnder(d, opTransfer, ownerTransferMaxNs, 2) }, notMet, owner + " 300"},
		{"no owner row", true, []benchLine{at(designMutex, opIncrement, 2, six(10))},
			incUnder(2), noData, "no owner-style"},
		{"only other parallelism", true, []benchLine{{design: owner, op: opIncrement, par: 8, cpu: 2, ns: six(100)}},
			incUnder(2), noData, "par=64, work=0s, -cpu 2"},
		{"combining within 2× mutex, per round", true, []benchLine{at(designCombining, opIncrement, 2, times(base, 1.5, 1.6, 1.4)), at(designMutex, opIncrement, 2, base)},
			combVsMutex(2), met, "combining/mutex 1.50× [1.40, 1.60], median of 8 per-round ratios"},
		{"control: combining 2.5× mutex", true, []benchLine{at(designCombining, opIncrement, 2, times(base, 2.5, 2.4, 2.6)), at(designMutex, opIncrement, 2, base)},
			combVsMutex(2), notMet, "2.50× [2.40, 2.60]"},
		{"ratios across the limit are undecided", true, []benchLine{at(designCombining, opIncrement, 2, times(base, 1.8, 2.2, 1.9, 2.1)), at(designMutex, opIncrement, 2, base)},
			combVsMutex(2), undecided, "[1.80, 2.20]"},
		{"judged at each -cpu: 1", true, []benchLine{
			at(designCombining, opIncrement, 1, times(base, 9)), at(designMutex, opIncrement, 1, base),
			at(designCombining, opIncrement, 2, times(base, 1.5)), at(designMutex, opIncrement, 2, base)},
			combVsMutex(1), notMet, "9.00×"},
		{"judged at each -cpu: 2", true, []benchLine{
			at(designCombining, opIncrement, 1, times(base, 9)), at(designMutex, opIncrement, 1, base),
			at(designCombining, opIncrement, 2, times(base, 1.5)), at(designMutex, opIncrement, 2, base)},
			combVsMutex(2), met, "1.50×"},
		{"combining without mutex", true, []benchLine{at(designCombining, opIncrement, 2, six(150))},
			combVsMutex(2), noData, "needs both"},
		// Drift of ±20% a round, sharded 10% faster in every round: the
		// medians' intervals overlap, the per-round ratio decides.
		{"sharded faster than mutex, paired", true, []benchLine{at(designSharded, opTransfer, 2, times(base, 0.9)), at(designMutex, opTransfer, 2, base)},
			shardedVsMutex, met, "sharded/mutex 0.90× [0.90, 0.90]"},
		{"control: sharded slower than mutex", true, []benchLine{at(designSharded, opTransfer, 2, times(base, 1.1)), at(designMutex, opTransfer, 2, base)},
			shardedVsMutex, notMet, "1.10×"},
		{"sharded and mutex within the noise", true, []benchLine{at(designSharded, opTransfer, 2, times(base, 0.98, 1.03)), at(designMutex, opTransfer, 2, base)},
			shardedVsMutex, undecided, "[0.98, 1.03]"},
		{"unpaired when the run counts differ", true, []benchLine{at(designSharded, opTransfer, 2, times(base, 0.9)), at(designMutex, opTransfer, 2, base[:7])},
			shardedVsMutex, undecided, "ratio of the medians"},
		{"no allocations", true, []benchLine{at(designMutex, opIncrement, 2, six(1)), at(designSharded, "Put", 2, six(1))},
			zeroAllocs, met, "0 allocs/op"},
		{"control: one op allocates", true, []benchLine{at(designMutex, opIncrement, 2, six(1)), {design: designSharded, op: "Put", par: 1, cpu: 1, ns: six(5), allocs: 2}},
			zeroAllocs, notMet, "1 design × op pairs allocate: sharded Put (up to 2)"},
		{"without -benchmem", false, []benchLine{at(designMutex, opIncrement, 2, six(1))},
			zeroAllocs, noData, "-benchmem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := parse(strings.NewReader(benchText(tt.mem, tt.lines...)), "t")
			require.NoError(t, err)
			got := tt.judge(d)
			assert.Equal(t, tt.want, got.Verdict, got.Detail)
			assert.Contains(t, got.Detail, tt.detail)
		})
	}
}

// TestTargetsAtEveryCPU: every speed target once per -cpu, in order, and
// the allocation check once for all.
func TestTargetsAtEveryCPU(t *testing.T) {
	d, err := parse(strings.NewReader(benchText(true,
		at(designMutex, opIncrement, 1, six(10)), at(designMutex, opIncrement, 4, six(10)))), "t")
	require.NoError(t, err)
	ts := targets(d)
	require.Len(t, ts, len(speedTargets)*2+1)
	for i := range speedTargets {
		assert.Equal(t, 1, ts[2*i].CPU)
		assert.Equal(t, 4, ts[2*i+1].CPU)
		assert.Equal(t, ts[2*i].Name, ts[2*i+1].Name)
	}
	assert.Equal(t, 0, ts[len(ts)-1].CPU)
}

func TestVerdictString(t *testing.T) {
	assert.Equal(t, "met", met.String())
	assert.Equal(t, "not met", notMet.String())
	assert.Equal(t, "undecided", undecided.String())
	assert.Equal(t, "no data", noData.String())
}
