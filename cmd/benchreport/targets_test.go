package main

import (
	"fmt"
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
			fmt.Fprintf(&b, "BenchmarkStore/design=%s/op=%s/par=%d/work=%v%s\t1000\t%g ns/op", l.design, l.op, l.par, l.work, suffix, v)
			if mem {
				fmt.Fprintf(&b, "\t0 B/op\t%g allocs/op", l.allocs)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("PASS\n")
	return b.String()
}

// six is six runs with median v: enough for a 95% interval and for the U test
// to tell two rows apart.
func six(v float64) []float64 { return []float64{v - 2, v - 1, v - 0.5, v + 0.5, v + 1, v + 2} }

// at is a row at the targets' coordinates.
func at(design, op string, cpu int, ns float64) benchLine {
	return benchLine{design: design, op: op, par: targetPar, work: targetWork, cpu: cpu, ns: six(ns)}
}

func TestTargetNamesExist(t *testing.T) {
	for _, name := range []string{designMutex, designSharded, designCombining} {
		_, ok := store.LookupDesign(name)
		assert.True(t, ok, "issue 10's targets name %q, which the registry lacks", name)
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

func TestTargets(t *testing.T) {
	owner := ownerOrCombining()[0] // an owner-style design, from the registry
	tests := []struct {
		name   string
		mem    bool
		lines  []benchLine
		judge  func(*Data) target
		want   verdict
		detail string
	}{
		{"owner Increment under 150", true, []benchLine{at(owner, opIncrement, 2, 100), at(designCombining, opIncrement, 2, 400)},
			func(d *Data) target { return fastestUnder(d, opIncrement, ownerIncrementMaxNs) }, met, owner + ": 100 ± "},
		{"control: owner Increment over 150", true, []benchLine{at(owner, opIncrement, 2, 200), at(designCombining, opIncrement, 2, 400)},
			func(d *Data) target { return fastestUnder(d, opIncrement, ownerIncrementMaxNs) }, notMet, "50.0 ns/op over the limit of 150 ns/op (+33%)"},
		{"a lock design does not count", true, []benchLine{at(designMutex, opTransfer, 2, 10), at(owner, opTransfer, 2, 300)},
			func(d *Data) target { return fastestUnder(d, opTransfer, ownerTransferMaxNs) }, notMet, owner + ": 300"},
		{"combining TransferMoney under 250", true, []benchLine{at(designCombining, opTransfer, 2, 240)},
			func(d *Data) target { return fastestUnder(d, opTransfer, ownerTransferMaxNs) }, met, "10.0 ns/op under"},
		{"no owner row", true, []benchLine{at(designMutex, opIncrement, 2, 10)},
			func(d *Data) target { return fastestUnder(d, opIncrement, ownerIncrementMaxNs) }, noData, "no owner-style"},
		{"only other parallelism", true, []benchLine{{design: owner, op: opIncrement, par: 8, cpu: 2, ns: six(100)}},
			func(d *Data) target { return fastestUnder(d, opIncrement, ownerIncrementMaxNs) }, noData, "par=64, work=0s, -cpu 2"},
		{"combining within 2× mutex", true, []benchLine{at(designCombining, opIncrement, 2, 150), at(designMutex, opIncrement, 2, 100)},
			combiningVsMutex, met, "1.50×"},
		{"control: combining 2.5× mutex", true, []benchLine{at(designCombining, opIncrement, 2, 250), at(designMutex, opIncrement, 2, 100)},
			combiningVsMutex, notMet, "2.50×, 0.50× over"},
		{"judged at the highest -cpu", true, []benchLine{
			at(designCombining, opIncrement, 1, 900), at(designMutex, opIncrement, 1, 100),
			at(designCombining, opIncrement, 2, 150), at(designMutex, opIncrement, 2, 100)},
			combiningVsMutex, met, "1.50×"},
		{"control: -cpu 1 passes, -cpu 2 fails", true, []benchLine{
			at(designCombining, opIncrement, 1, 150), at(designMutex, opIncrement, 1, 100),
			at(designCombining, opIncrement, 2, 900), at(designMutex, opIncrement, 2, 100)},
			combiningVsMutex, notMet, "9.00×"},
		{"combining without mutex", true, []benchLine{at(designCombining, opIncrement, 2, 150)},
			combiningVsMutex, noData, "needs both"},
		{"sharded faster than mutex", true, []benchLine{at(designSharded, opTransfer, 2, 90), at(designMutex, opTransfer, 2, 100)},
			shardedVsMutex, met, "faster than mutex; Mann-Whitney U p=0.002 (n=6+6), significant"},
		{"control: sharded slower than mutex", true, []benchLine{at(designSharded, opTransfer, 2, 110), at(designMutex, opTransfer, 2, 100)},
			shardedVsMutex, notMet, "sharded is 10.0 ns/op (+10%) slower than mutex"},
		{"sharded slower by noise", true, []benchLine{at(designSharded, opTransfer, 2, 100.2), at(designMutex, opTransfer, 2, 100)},
			shardedVsMutex, notMet, "not significant"},
		{"no allocations", true, []benchLine{at(designMutex, opIncrement, 2, 1), at(designSharded, "Put", 2, 1)},
			zeroAllocs, met, "0 allocs/op"},
		{"control: one op allocates", true, []benchLine{at(designMutex, opIncrement, 2, 1), {design: designSharded, op: "Put", par: 1, cpu: 1, ns: six(5), allocs: 2}},
			zeroAllocs, notMet, "1 design × op pairs allocate: sharded Put (up to 2)"},
		{"without -benchmem", false, []benchLine{at(designMutex, opIncrement, 2, 1)},
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

func TestVerdictString(t *testing.T) {
	assert.Equal(t, "met", met.String())
	assert.Equal(t, "not met", notMet.String())
	assert.Equal(t, "no data", noData.String())
}
