package duet

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/locklab/locklab/internal/lab/paired"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var testArms = []Arm{
	{Name: "mutex", Mode: "mutex", Role: RoleBaseline},
	{Name: "mutex (A/A)", Mode: "mutex", Role: RoleTwin},
	{Name: "mutex +2µs", Mode: "mutex", Role: RoleKnown},
	{Name: "inputQ", Mode: "inputQ", Role: RoleDesign},
}

// machine simulates rounds on a machine whose speed drifts: every arm of a
// round meets the same speed (an AR(1) in log speed with sd drift and
// round-to-round correlation rho), and each arm's process adds noise of its
// own (sd proc). The baseline spends cpu seconds per call; the design
// effect × fewer calls/s and 1/effect × the CPU; the known arm spin more
// CPU per call, and the calls/s equal quotas imply.
type machine struct {
	rng                 *rand.Rand
	drift, rho, proc    float64
	cpu, effect, spin   float64
	speed               float64
	window, quota, util float64
}

func newMachine(seed uint64) *machine {
	return &machine{rng: rand.New(rand.NewPCG(seed, 7)), drift: 0.10, rho: 0.8, proc: 0.03,
		cpu: 20e-6, effect: 0.92, spin: 2e-6, window: 1, quota: 0.2, util: 0.98}
}

func (m *machine) round(group string, index int) Round {
	m.speed = m.rho*m.speed + math.Sqrt(1-m.rho*m.rho)*m.drift*m.rng.NormFloat64()
	r := Round{Group: group, Index: index}
	for _, a := range testArms {
		perCall := m.cpu
		switch a.Role {
		case RoleKnown:
			perCall += m.spin
		case RoleDesign:
			perCall /= m.effect
		}
		perCall *= math.Exp(-m.speed + m.proc*m.rng.NormFloat64())
		cpu := m.window * m.quota * m.util
		n := uint64(cpu / perCall)
		// The closed loop's tail at 10 callers: three times their mean
		// wait, which the calls/s set (no draw of its own, so that the
		// other figures stay those of the seed).
		p99 := 3e3 * 10 / (float64(n) / m.window)
		r.Arms = append(r.Arms, Measure{Arm: a.Name, Requests: n, Writes: n, CPU: cpu, Window: m.window, Quota: m.quota, P99: p99})
	}
	return r
}

func (m *machine) rounds(group string, from, to int) []Round {
	var out []Round
	for i := from; i <= to; i++ {
		out = append(out, m.round(group, i))
	}
	return out
}

func groupsOf(names ...string) map[string][]Arm {
	out := map[string][]Arm{}
	for _, n := range names {
		out[n] = testArms
	}
	return out
}

func primary(t *testing.T, res Result, design, metric string) Primary {
	for _, p := range res.Primaries {
		if p.Design == design && p.Metric == metric {
			return p
		}
	}
	t.Fatalf("no primary %s %s", design, metric)
	return Primary{}
}

// TestCoverageUnderTheStoppingRule: rounds whose arms share a drifting
// machine speed recover the known ratio, with -precision's rule (Rounds)
// adding rounds and looking again until the widths are within the target
// or the rounds at their most, in at least 93% of simulated studies.
func TestCoverageUnderTheStoppingRule(t *testing.T) {
	const sims, n0, target, maxRounds = 400, 10, 0.02, 60
	o := DefaultOptions
	o.Known = 2 * time.Microsecond
	covered, extended, looks, precise, floored := 0, 0, 0, 0, 0
	for s := range sims {
		m := newMachine(uint64(s))
		rounds := m.rounds("g", 1, n0)
		res, err := Analyse(groupsOf("g"), rounds, o)
		require.NoError(t, err)
		_, ok := res.WidestPrimary()
		require.True(t, ok)
		for done := n0; ; {
			total := Rounds(res, map[string]int{"g": done}, target, maxRounds)["g"]
			if total <= done {
				break
			}
			if done == n0 {
				extended++
			}
			rounds = append(rounds, m.rounds("g", done+1, total)...)
			done = total
			res, err = Analyse(groupsOf("g"), rounds, o)
			require.NoError(t, err)
			looks++
		}
		p := primary(t, res, "inputQ", "calls/s")
		if p.Lo <= m.effect && m.effect <= p.Hi {
			covered++
		}
		if p.N < maxRounds {
			precise++
			if res.Groups[0].Floor() <= target {
				floored++
			}
		}
	}
	t.Logf("coverage %d/%d; %d studies added rounds, in %d additions; the A/A floor within ±%.0f%% in %d of the %d that stopped on precision", covered, sims, extended, looks, 100*target, floored, precise)
	assert.GreaterOrEqual(t, float64(covered)/sims, 0.93)
	assert.Positive(t, extended, "the rule was exercised")
	assert.Greater(t, looks, extended, "some studies looked again after their first addition")
}

// TestRoundsLooksUntilPrecise: the rule asks for more rounds while the
// widest interval is wider than the target and stops once it is within
// it, or at the most rounds; with no target it never adds.
func TestRoundsLooksUntilPrecise(t *testing.T) {
	n := paired.MinBlocksRobust + 10
	wide := Result{Primaries: []Primary{{Group: "g", Primary: paired.Primary{Robust: around(n, 1, 0.04)}}}}
	rounds := func(done int, target float64, most int) int {
		return Rounds(wide, map[string]int{"g": done}, target, most)["g"]
	}
	assert.Equal(t, 4*n, rounds(n, 0.02, 100), "twice the target: four times the rounds")
	assert.Equal(t, 30, rounds(n, 0.02, 30), "at most the most")
	assert.Equal(t, n, rounds(n, 0.05, 100), "within the target: done")
	assert.Equal(t, n, rounds(n, 0, 100), "no target")
	assert.Equal(t, 30, rounds(30, 0.02, 30), "at the most rounds: done")
}

// around is an interval of n blocks about ratio whose half-width
// relative to it (paired.Robust.HalfWidth) is hw: exp(log ratio ± w),
// sinh w = hw.
func around(n int, ratio, hw float64) paired.Robust {
	w := math.Asinh(hw)
	return paired.Robust{N: n, Ratio: ratio, Lo: ratio * math.Exp(-w), Hi: ratio * math.Exp(w)}
}

// TestRoundsReadWidthsNotWhereTheyLie: two groups whose intervals are
// as wide on the log scale, one about no effect and one about a ratio of
// 4 (a p99 four times the baseline's), ask for the same rounds. The
// control: their widths on the ratio scale, (Hi − Lo)/2, differ fourfold,
// and a rule that read them would ask sixteen times the rounds of the
// group with the larger effect, whose interval is no less precise.
func TestRoundsReadWidthsNotWhereTheyLie(t *testing.T) {
	n := paired.MinBlocksRobust + 10
	res := Result{Primaries: []Primary{
		{Group: "none", Primary: paired.Primary{Robust: around(n, 1, 0.04)}},
		{Group: "fourfold", Primary: paired.Primary{Robust: around(n, 4, 0.04)}},
	}, Groups: []Group{{Name: "none"}, {Name: "fourfold"}}}
	got := Rounds(res, map[string]int{"none": n, "fourfold": n}, 0.02, 1000)
	assert.Equal(t, got["none"], got["fourfold"])
	assert.Equal(t, 4*n, got["none"], "twice the target: four times the rounds")
	ratioScale := func(r paired.Robust) float64 { return (r.Hi - r.Lo) / 2 }
	assert.InDelta(t, 4, ratioScale(res.Primaries[1].Robust)/ratioScale(res.Primaries[0].Robust), 1e-9)
	assert.Equal(t, 16*4*n, paired.PlanBlocks(n, ratioScale(res.Primaries[1].Robust), 0.02, 1000), "the control: the ratio scale asks sixteen times as many")
}

// TestRoundsGroupByGroup: a group whose intervals are within the target
// keeps its rounds while a wide one asks for more; the control, the same
// widths read over the whole study, would make both run as many.
func TestRoundsGroupByGroup(t *testing.T) {
	n := paired.MinBlocksRobust + 10
	res := Result{Primaries: []Primary{
		{Group: "narrow", Primary: paired.Primary{Robust: around(n, 0.9, 0.01)}},
		{Group: "wide", Primary: paired.Primary{Robust: around(n, 1, 0.04)}},
	}, Groups: []Group{{Name: "narrow", AA: []Estimate{{Robust: around(n, 1, 0.01)}}}, {Name: "wide"}}}
	got := Rounds(res, map[string]int{"narrow": n, "wide": n}, 0.02, 100)
	assert.Equal(t, map[string]int{"narrow": n, "wide": 4 * n}, got)
	hw, ok := res.WidestPrimary()
	require.True(t, ok)
	assert.Equal(t, 4*n, paired.PlanBlocks(n, hw, 0.02, 100), "the control: the study's widest asks as much of every group")

	res.Groups[0].AA[0].Robust = around(n, 1, 0.05)
	assert.Greater(t, Rounds(res, map[string]int{"narrow": n, "wide": n}, 0.02, 100)["narrow"], n, "a group's own A/A control counts")
}

// TestWithinBudget: rounds beyond the budget go first to the group
// farthest from what it asked, as a share of it, so that the widest group
// is as narrow as the budget allows; a group that asked none gets none.
func TestWithinBudget(t *testing.T) {
	done := map[string]int{"a": 10, "b": 10, "c": 10}
	want := map[string]int{"a": 10, "b": 40, "c": 20}
	got := WithinBudget(done, want, want, nil, 15)
	assert.Equal(t, map[string]int{"a": 10, "b": 23, "c": 12}, got)
	assert.Equal(t, want, WithinBudget(done, want, want, nil, 1000), "a budget that holds them all: what was asked")
	assert.Equal(t, done, WithinBudget(done, want, want, nil, 0), "no budget left: nothing more")
	assert.Equal(t, map[string]int{"a": 10, "b": 10, "c": 10}, done, "done is not changed")

	// The widest a group is left at is target·√(want/rounds): no other
	// split of the same 15 rounds leaves the widest narrower, and one
	// round each in turn (the control) leaves it wider.
	worst := func(out map[string]int) float64 {
		w := 0.0
		for g, n := range out {
			w = max(w, math.Sqrt(float64(want[g])/float64(n)))
		}
		return w
	}
	for b := 0; b <= 15; b++ {
		other := map[string]int{"a": 10, "b": 10 + b, "c": 10 + 15 - b}
		assert.LessOrEqual(t, worst(got), worst(other), "b %d", 10+b)
	}
	inTurn := map[string]int{"a": 10, "b": 18, "c": 17}
	assert.Less(t, worst(got), worst(inTurn))
}

// TestWithinBudgetPastTheBound: two groups that both ask for more rounds
// than -max-blocks allows (60) want the same 60, but the one four times as
// far from the target gets the budget first, up to the bound, and the
// rest goes to the other. The control: read from the bounded wants alone,
// the two would share it evenly.
func TestWithinBudgetPastTheBound(t *testing.T) {
	done := map[string]int{"noisy": 20, "quiet": 20}
	want := map[string]int{"noisy": 60, "quiet": 60}
	ask := map[string]int{"noisy": 800, "quiet": 200}
	assert.Equal(t, map[string]int{"noisy": 50, "quiet": 20}, WithinBudget(done, want, ask, nil, 30))
	assert.Equal(t, map[string]int{"noisy": 60, "quiet": 40}, WithinBudget(done, want, ask, nil, 60), "the noisy group at its bound, the rest to the quiet one")
	assert.Equal(t, map[string]int{"noisy": 35, "quiet": 35}, WithinBudget(done, want, want, nil, 30), "the control: the bound alone splits evenly")
}

// TestWithinBudgetReachableFirst: a group whose tail interval asks for
// more rounds than the budget has left (180, past 20 + 40) cannot bring
// it within the target in this run; its calls/s interval can (32), and so
// can the other group's (27). The budget goes to those first, and what is
// left to the tail. The control: read from the unbounded asks alone, the
// tail takes the whole budget and the other group stays where it was.
func TestWithinBudgetReachableFirst(t *testing.T) {
	res := Result{Primaries: []Primary{
		{Group: "tail", Primary: paired.Primary{Robust: around(20, 0.97, 0.06)}},
		{Group: "tail", Primary: paired.Primary{Robust: around(20, 1.05, 0.025)}},
		{Group: "calls", Primary: paired.Primary{Robust: around(12, 1.03, 0.03)}},
	}, Groups: []Group{{Name: "tail"}, {Name: "calls"}}}
	done := map[string]int{"tail": 20, "calls": 12}
	want, ask := Rounds(res, done, 0.02, 60), Asks(res, done, 0.02)
	require.Equal(t, map[string]int{"tail": 60, "calls": 27}, want)
	require.Equal(t, map[string]int{"tail": 180, "calls": 27}, ask)
	reachable := Reachable(res, done, 0.02, 40)
	assert.Equal(t, map[string]int{"tail": 32, "calls": 27}, reachable, "the tail's 180 is beyond reach")

	assert.Equal(t, map[string]int{"tail": 32, "calls": 27}, WithinBudget(done, want, ask, reachable, 27))
	assert.Equal(t, map[string]int{"tail": 45, "calls": 27}, WithinBudget(done, want, ask, reachable, 40), "what is left goes to the tail")
	assert.Equal(t, map[string]int{"tail": 47, "calls": 12}, WithinBudget(done, want, ask, nil, 27), "the control: the tail takes it all")

	assert.Equal(t, done, Reachable(res, done, 0.02, 0), "no budget left: nothing within reach")
	assert.Equal(t, done, Reachable(res, done, 0, 40), "no target")
}

// TestReachableIsTheRunsWholeBudget: a group whose A/A control asks for
// 72 rounds after 17 is within reach of a run that has run 60 rounds and
// has 35 left (95), though not of its own 17 and the 35 left (52): one
// look that shared the budget among the groups does not put it out of
// reach. The control: alone in its run, with the same rounds left, it is
// beyond reach.
func TestReachableIsTheRunsWholeBudget(t *testing.T) {
	res := Result{Primaries: []Primary{
		{Group: "noisy", Primary: paired.Primary{Robust: around(17, 0.92, 0.015)}},
		{Group: "a", Primary: paired.Primary{Robust: around(23, 0.92, 0.015)}},
		{Group: "b", Primary: paired.Primary{Robust: around(20, 0.92, 0.015)}},
	}, Groups: []Group{
		{Name: "noisy", AA: []Estimate{{Robust: around(17, 1, 0.0185)}}},
		{Name: "a", AA: []Estimate{{Robust: around(23, 1, 0.007)}}},
		{Name: "b", AA: []Estimate{{Robust: around(20, 1, 0.007)}}},
	}}
	done := map[string]int{"noisy": 17, "a": 23, "b": 20}
	ask := Asks(res, done, 0.02)
	require.Greater(t, ask["noisy"], 17+35, "past its own rounds and the budget left")
	require.LessOrEqual(t, ask["noisy"], 17+23+20+35, "within the run's")
	assert.Equal(t, ask["noisy"], Reachable(res, done, 0.02, 35)["noisy"])

	alone := map[string]int{"noisy": 17}
	assert.Equal(t, alone, Reachable(res, alone, 0.02, 35), "the control: alone in its run it is beyond reach")
}

// TestPerLook: one look places half the rounds the budget has left, at
// least the last one, and none of a budget that has ended.
func TestPerLook(t *testing.T) {
	for left, want := range map[int]int{-3: 0, 0: 0, 1: 1, 2: 1, 10: 5, 11: 6} {
		assert.Equal(t, want, PerLook(left), "left %d", left)
	}
}

// TestPairingNarrowsTheInterval: the same rounds analysed unpaired (the
// control) give a wider interval than paired by round.
func TestPairingNarrowsTheInterval(t *testing.T) {
	m := newMachine(1)
	res, err := Analyse(groupsOf("g"), m.rounds("g", 1, 20), DefaultOptions)
	require.NoError(t, err)
	g := res.Groups[0]
	paired, unpaired := g.Paired["inputQ calls/s"], g.Unpaired["inputQ calls/s"]
	t.Logf("half-width paired ±%.2f%%, unpaired ±%.2f%%", 100*paired, 100*unpaired)
	assert.Greater(t, unpaired, 2*paired)
}

// TestCalibration: the known arm's measured added CPU holds the true spin,
// and its calls/s the ratio equal quotas imply; the control, the known arm
// with its spin removed, fails both checks.
func TestCalibration(t *testing.T) {
	o := DefaultOptions
	o.Known = 2 * time.Microsecond
	m := newMachine(3)
	m.proc = 0.01
	res, err := Analyse(groupsOf("g"), m.rounds("g", 1, 20), o)
	require.NoError(t, err)
	k := res.Groups[0].Known
	require.NotNil(t, k)
	assert.True(t, k.CPUOK(), "true %v in [%v, %v]", k.TrueCPU, k.CPU.Lo, k.CPU.Hi)
	assert.True(t, k.CallsOK(), "implied %v in [%v, %v]", k.TrueCalls, k.Calls.Lo, k.Calls.Hi)

	m = newMachine(3)
	m.proc, m.spin = 0.01, 0
	res, err = Analyse(groupsOf("g"), m.rounds("g", 1, 20), o)
	require.NoError(t, err)
	k = res.Groups[0].Known
	assert.False(t, k.CPUOK(), "a known arm without its spin fails the CPU check")
	assert.False(t, k.CallsOK(), "and the calls/s check")
}

// TestGateDropsARoundForEveryArm, and a round under the limit stays.
func TestGateDropsARoundForEveryArm(t *testing.T) {
	tests := []struct {
		name string
		r    Round
		drop bool
	}{
		{"quiet", Round{ServerSteal: 0.01, ServerForeign: 0.05, DriverSteal: 0.02, DriverForeign: 0.04}, false},
		{"steal on the server CPUs", Round{ServerSteal: 0.15}, true},
		{"foreign on the driver CPUs", Round{DriverForeign: 0.2}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Gate(&tt.r, 0.1)
			assert.Equal(t, tt.drop, tt.r.Dropped != "", tt.r.Dropped)
		})
	}
	m := newMachine(5)
	rounds := m.rounds("g", 1, 12)
	rounds[3].ServerSteal = 0.3
	Gate(&rounds[3], 0.1)
	res, err := Analyse(groupsOf("g"), rounds, DefaultOptions)
	require.NoError(t, err)
	assert.Equal(t, 11, res.Groups[0].Clean)
	assert.Equal(t, 11, primary(t, res, "inputQ", "calls/s").N, "the dropped round is gone for every arm")
}

// TestLoadBoundArmIsLeftOut: an arm whose server used less than MinUtil of
// its quota while the drivers' CPUs were saturated is named load-bound and
// its rounds are left out; the controls are the same rounds with the
// server at its quota, and with the drivers not saturated.
func TestLoadBoundArmIsLeftOut(t *testing.T) {
	m := newMachine(6)
	rounds := m.rounds("g", 1, 10)
	res, err := Analyse(groupsOf("g"), rounds, DefaultOptions)
	require.NoError(t, err)
	assert.Empty(t, res.Groups[0].LoadBound, "the control")
	for i := range rounds {
		rounds[i].Arms[3].CPU *= 0.5
	}
	res, err = Analyse(groupsOf("g"), rounds, DefaultOptions)
	require.NoError(t, err)
	assert.Empty(t, res.Groups[0].LoadBound, "below its quota with drivers to spare: the closed loop's pace, not the driver's")
	for i := range rounds {
		rounds[i].DriverBusy = 0.97
	}
	res, err = Analyse(groupsOf("g"), rounds, DefaultOptions)
	require.NoError(t, err)
	assert.Equal(t, []string{"inputQ"}, res.Groups[0].LoadBound)
	p := primary(t, res, "inputQ", "calls/s")
	assert.Equal(t, paired.OutcomeTooFew, p.Outcome)
}

// TestGroupPace: a group's round takes from its start to the next round's,
// whatever group that is; the rounds of two groups alternate here, one
// taking 3 s and the other 5 s. The control: rounds without start times
// give no pace.
func TestGroupPace(t *testing.T) {
	start := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
	var rounds []Round
	at := start
	for i := range 6 {
		rounds = append(rounds, Round{Group: "go", Index: i + 1, Started: at})
		at = at.Add(3 * time.Second)
		rounds = append(rounds, Round{Group: "h2load", Index: i + 1, Started: at})
		at = at.Add(5 * time.Second)
	}
	slices.Reverse(rounds) // in any order
	assert.Equal(t, 3*time.Second, groupPace(rounds, "go"))
	assert.Equal(t, 5*time.Second, groupPace(rounds, "h2load"), "its last round has no next")
	for i := range rounds {
		rounds[i].Started = time.Time{}
	}
	assert.Zero(t, groupPace(rounds, "go"), "the control: no start times")
}

// TestReportGolden renders a fixed analysis; go test -update rewrites it.
func TestReportGolden(t *testing.T) {
	m := newMachine(11)
	rounds := append(m.rounds("counter · go · 10", 1, 12), newMachine(12).rounds("bank-A · go · 10", 1, 12)...)
	start := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
	for i := range rounds {
		rounds[i].Started = start.Add(time.Duration(i) * 2750 * time.Millisecond)
	}
	rounds[2].ServerSteal = 0.4
	Gate(&rounds[2], 0.1)
	o := DefaultOptions
	o.Known = 2 * time.Microsecond
	res, err := Analyse(groupsOf("counter · go · 10", "bank-A · go · 10"), rounds, o)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, WriteMarkdown(&b, Header{Title: "Side by side: test", Command: "compare -reps 12", Commit: "abc1234",
		Setup: []string{"4 servers on CPU 0"}, Picture: "forest.svg"}, res))
	golden := filepath.Join("testdata", "report.golden.md")
	if *update {
		require.NoError(t, os.WriteFile(golden, b.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), b.String())
	assert.Contains(t, b.String(), "dropped", fmt.Sprint("the gate's drop is reported"))
}

// TestTheStoppingRuleWatchesTheAAControl: an A/A interval whose whole
// width passes every primary's half-width sets the width -precision's
// rule reads; without the A/A (the control) the primary's own width does.
func TestTheStoppingRuleWatchesTheAAControl(t *testing.T) {
	n := paired.MinBlocksRobust
	res := Result{
		Primaries: []Primary{{Primary: paired.Primary{Robust: around(n, 0.9, 0.01)}}},
		Groups:    []Group{{AA: []Estimate{{Robust: around(n, 1, 0.03)}}}},
	}
	hw, ok := res.WidestPrimary()
	require.True(t, ok)
	assert.InDelta(t, 0.06, hw, 1e-12, "the A/A's whole width: its floor is its farthest bound")
	res.Groups = append(res.Groups, Group{Name: "other", AA: make([]Estimate, 9)})
	hw, ok = res.WidestPrimary()
	require.True(t, ok)
	assert.InDelta(t, 0.03*aaWidth(10), hw, 1e-12, "ten A/A intervals in the plan: each read wider")
	res.Groups = []Group{{}}
	hw, ok = res.WidestPrimary()
	require.True(t, ok)
	assert.InDelta(t, 0.01, hw, 1e-12)
	res.Primaries = nil
	_, ok = (Result{Groups: []Group{{AA: []Estimate{{Robust: paired.Robust{N: n}}}}}}).WidestPrimary()
	assert.False(t, ok, "no primary, no rule")
}

// TestAAWidthKeepsEveryFloor: k A/A intervals, each as wide as the rule
// lets it end (the precision over aaWidth(k)) and each estimate noise of
// its standard error, keep every floor (the estimate's distance from no
// difference plus the half-width) within the precision in about 95% of
// plans, one A/A interval or ten. The control: ten read at their whole
// width, as one is, miss in about two plans of five.
func TestAAWidthKeepsEveryFloor(t *testing.T) {
	assert.InDelta(t, 2, aaWidth(1), 1e-9, "one A/A interval: its whole width")
	assert.InDelta(t, 2.43, aaWidth(10), 0.01)
	assert.Greater(t, aaWidth(20), aaWidth(10))
	miss := func(k int, w float64) float64 {
		const plans, target = 4000, 0.02
		rng := rand.New(rand.NewPCG(uint64(k), 7))
		hw := target / w
		se := hw / distuv.UnitNormal.Quantile(0.975)
		missed := 0
		for range plans {
			for range k {
				if math.Abs(rng.NormFloat64()*se)+hw > target {
					missed++
					break
				}
			}
		}
		return float64(missed) / plans
	}
	assert.InDelta(t, 0.05, miss(1, aaWidth(1)), 0.015)
	assert.InDelta(t, 0.05, miss(10, aaWidth(10)), 0.015)
	assert.Greater(t, miss(10, aaWidth(1)), 0.3, "the control: ten A/A intervals at their whole width")
}

// TestKnownLevelKeepsEveryCalibration: five known-answer intervals of an
// exact instrument (12 rounds each, the added CPU normal about the true
// spin) all hold the spin in about 95% of plans at KnownLevel(5). The
// control: each at 95% alone, they all hold it in about 77%, a
// calibration failed one plan in four. Analyse reads each group's at the
// level of the plan's groups with a known arm.
func TestKnownLevelKeepsEveryCalibration(t *testing.T) {
	assert.InDelta(t, paired.Confidence, KnownLevel(1), 1e-12, "one known arm: its own level")
	assert.InDelta(t, 0.99, KnownLevel(5), 1e-12)
	held := func(k int, level float64) float64 {
		const plans, n, spin = 4000, 12, 2e-6
		rng := rand.New(rand.NewPCG(uint64(k), 11))
		all := 0
		for range plans {
			ok := true
			for range k {
				d := make([]float64, n)
				for i := range d {
					d[i] = spin + 0.2e-6*rng.NormFloat64()
				}
				e, err := paired.EstimateDifferenceAt(d, level)
				require.NoError(t, err)
				ok = ok && e.Contains(spin)
			}
			if ok {
				all++
			}
		}
		return float64(all) / plans
	}
	assert.InDelta(t, 0.95, held(5, KnownLevel(5)), 0.015)
	assert.InDelta(t, 0.77, held(5, paired.Confidence), 0.025, "the control: five at 95% each")

	o := DefaultOptions
	o.Known = 2 * time.Microsecond
	m := newMachine(5)
	res, err := Analyse(groupsOf("a", "b", "c"), append(append(m.rounds("a", 1, 12), m.rounds("b", 1, 12)...), m.rounds("c", 1, 12)...), o)
	require.NoError(t, err)
	for _, g := range res.Groups {
		require.NotNil(t, g.Known)
		assert.InDelta(t, KnownLevel(3), g.Known.Level, 1e-12, g.Name)
	}
}

// TestAnatomyOfACall: rounds whose known arm wakes its server 1.5 times as
// often per call, and makes as many system calls, read so against the
// baseline, and the report shows the table; rounds recorded without the
// figures (the control) give no estimate and no table.
func TestAnatomyOfACall(t *testing.T) {
	m := newMachine(3)
	rounds := m.rounds("g", 1, 12)
	for i := range rounds {
		for j := range rounds[i].Arms {
			a := &rounds[i].Arms[j]
			a.Wakeups, a.Syscalls = a.Requests, 2*a.Requests
			if a.Arm == "mutex +2µs" {
				a.Wakeups = a.Requests * 3 / 2
			}
		}
	}
	res, err := Analyse(groupsOf("g"), rounds, DefaultOptions)
	require.NoError(t, err)
	g := res.Groups[0]
	got := anatomyRatios(g)
	assert.InDelta(t, 1.5, got["mutex +2µs wake-ups/call"], 0.01)
	assert.InDelta(t, 1.0, got["mutex +2µs syscalls/call"], 0.01)
	assert.InDelta(t, 1.0, got["inputQ wake-ups/call"], 0.01)
	assert.NotContains(t, got, "mutex wake-ups/call", "the baseline is not compared with itself")
	assert.InDelta(t, 2.0, g.Medians["mutex syscalls/call"], 0.01)
	var b bytes.Buffer
	require.NoError(t, WriteMarkdown(&b, Header{Title: "t"}, res))
	assert.Contains(t, b.String(), "## How a call's CPU was spent")

	res, err = Analyse(groupsOf("g"), m.rounds("g", 1, 12), DefaultOptions)
	require.NoError(t, err)
	assert.Empty(t, res.Groups[0].Anatomy)
	b.Reset()
	require.NoError(t, WriteMarkdown(&b, Header{Title: "t"}, res))
	assert.NotContains(t, b.String(), "## How a call's CPU was spent")
}

// TestWakeupsPerSecond: rounds whose servers are all put on the CPU at the
// same rate, whatever they serve, read the same wake-ups per second for
// every arm, and more per call for the arm that serves fewer calls; the
// control, wake-ups that follow the calls, reads the same per call and
// fewer per second for that arm.
func TestWakeupsPerSecond(t *testing.T) {
	m := newMachine(5)
	o := DefaultOptions
	o.Known = 2 * time.Microsecond
	for _, perSecond := range []bool{true, false} {
		rounds := m.rounds("g", 1, 12)
		for i := range rounds {
			for j := range rounds[i].Arms {
				a := &rounds[i].Arms[j]
				a.Wakeups = a.Requests / 4
				if perSecond {
					a.Wakeups = uint64(5000 * a.Window)
				}
			}
		}
		res, err := Analyse(groupsOf("g"), rounds, o)
		require.NoError(t, err)
		g := res.Groups[0]
		got := anatomyRatios(g)
		require.NotNil(t, g.Known)
		calls := g.Known.Calls.Ratio // the known arm's calls/s against the baseline's
		require.Less(t, calls, 0.99)
		if perSecond {
			assert.InDelta(t, 1.0, got["mutex +2µs wake-ups/s"], 0.005)
			assert.InDelta(t, 1/calls, got["mutex +2µs wake-ups/call"], 0.01)
			assert.InDelta(t, 5000, g.Medians["mutex wake-ups/s"], 1)
		} else {
			assert.InDelta(t, calls, got["mutex +2µs wake-ups/s"], 0.01)
			assert.InDelta(t, 1.0, got["mutex +2µs wake-ups/call"], 0.005)
		}
	}
}

// TestForestRowsWithoutAPrimary: a plan with no design beside the baseline
// (its twin and the known spin alone) still draws its comparisons, the
// A/A twin's, under a title that says so; with a design (the control) the
// rows are the primaries.
func TestForestRowsWithoutAPrimary(t *testing.T) {
	calib := []Arm{testArms[0], testArms[1], testArms[2]}
	m := newMachine(9)
	var rounds []Round
	for _, r := range m.rounds("g", 1, 12) {
		r.Arms = slices.DeleteFunc(r.Arms, func(a Measure) bool { return a.Arm == "inputQ" })
		rounds = append(rounds, r)
	}
	res, err := Analyse(map[string][]Arm{"g": calib}, rounds, DefaultOptions)
	require.NoError(t, err)
	require.Empty(t, res.Primaries)
	rows := ForestRows(res)
	require.Len(t, rows, len(DefaultOptions.Judged()))
	for _, r := range rows {
		assert.Contains(t, r.Label, "mutex (A/A) vs the baseline")
		assert.True(t, r.Drawn)
	}
	assert.Contains(t, ForestTitle(res), "no primary comparison")

	// Without the twin either (-aa=false), the known arm's calls/s, and
	// the answer says so instead of nothing.
	pair := []Arm{testArms[0], testArms[2]}
	o := DefaultOptions
	o.Known = 2 * time.Microsecond
	rounds = rounds[:0]
	for _, r := range m.rounds("g", 25, 36) {
		r.Arms = slices.DeleteFunc(r.Arms, func(a Measure) bool { return a.Arm == "inputQ" || a.Arm == "mutex (A/A)" })
		rounds = append(rounds, r)
	}
	res, err = Analyse(map[string][]Arm{"g": pair}, rounds, o)
	require.NoError(t, err)
	rows = ForestRows(res)
	require.Len(t, rows, 1)
	assert.Contains(t, rows[0].Label, "the known arm vs the baseline, calls/s")
	assert.True(t, rows[0].Drawn)
	assert.Contains(t, ForestTitle(res), "no A/A twin")
	var md strings.Builder
	require.NoError(t, WriteMarkdown(&md, Header{Title: "t", Picture: "forest.svg"}, res))
	assert.Contains(t, md.String(), "- **g**: no primary comparison; the known arm added")
	assert.Contains(t, md.String(), "(true +2.00 µs).")

	res, err = Analyse(groupsOf("g"), m.rounds("g", 13, 24), DefaultOptions)
	require.NoError(t, err)
	rows = ForestRows(res)
	require.Len(t, rows, len(res.Primaries))
	assert.Contains(t, rows[0].Label, "inputQ vs mutex")
	assert.Contains(t, ForestTitle(res), "every primary comparison")
}

// TestLatencyJudgedWhenNamed: the p99 is judged only where the plan names
// it, beside the default metrics; it then recovers the known effect (the
// design's calls take 1/effect as long), has its A/A row, and the report
// says it is judged. Rounds without a latency (the control: recorded before
// it) give the p99 no pairs.
func TestLatencyJudgedWhenNamed(t *testing.T) {
	m := newMachine(5)
	rounds := m.rounds("g", 1, 20)
	res, err := Analyse(groupsOf("g"), rounds, DefaultOptions)
	require.NoError(t, err)
	assert.Len(t, res.Primaries, 2, "by default calls/s and CPU/call")

	o := DefaultOptions
	o.Known = 2 * time.Microsecond
	o.Metrics = MetricNames()
	res, err = Analyse(groupsOf("g"), rounds, o)
	require.NoError(t, err)
	require.Len(t, res.Primaries, 3)
	p := primary(t, res, "inputQ", "p99")
	assert.True(t, p.Lo <= 1/m.effect && 1/m.effect <= p.Hi, "p99 ratio [%v, %v], true %v", p.Lo, p.Hi, 1/m.effect)
	assert.Len(t, res.Groups[0].AA, 3)
	var b bytes.Buffer
	require.NoError(t, WriteMarkdown(&b, Header{Title: "t"}, res))
	assert.Contains(t, b.String(), "| A/A p99 |")
	assert.Contains(t, b.String(), "on calls/s, on server CPU per call and on the callers' p99 latency")

	for i := range rounds {
		for j := range rounds[i].Arms {
			rounds[i].Arms[j].P99 = 0
		}
	}
	res, err = Analyse(groupsOf("g"), rounds, o)
	require.NoError(t, err)
	assert.Zero(t, primary(t, res, "inputQ", "p99").N, "no latency, no pairs")
	assert.Equal(t, 20, primary(t, res, "inputQ", "calls/s").N)
}

// TestAgainstAnotherArm: a design compared with another arm than the
// baseline (a second release's build against the first's) is paired with
// that arm, round by round, and recovers its own known ratio; the report
// names what it was compared with. An arm compared with one the group does
// not have is refused (the control).
func TestAgainstAnotherArm(t *testing.T) {
	m := newMachine(9)
	rounds := m.rounds("g", 1, 12)
	for i := range rounds {
		q, _ := rounds[i].Arm("inputQ")
		q.Arm, q.Requests = "inputQ · r2", uint64(float64(q.Requests)*1.1)
		q.P99 /= 1.1
		rounds[i].Arms = append(rounds[i].Arms, q)
	}
	arms := append(slices.Clone(testArms), Arm{Name: "inputQ · r2", Mode: "inputQ", Role: RoleDesign, Against: "inputQ"})
	res, err := Analyse(map[string][]Arm{"g": arms}, rounds, DefaultOptions)
	require.NoError(t, err)
	p := primary(t, res, "inputQ · r2", "calls/s")
	assert.Equal(t, "inputQ", p.Baseline)
	assert.InDelta(t, 1.1, p.Ratio, 0.002, "paired with inputQ, not with the mutex (%v)", 1.1*m.effect)
	var b bytes.Buffer
	require.NoError(t, WriteMarkdown(&b, Header{Title: "t"}, res))
	assert.Contains(t, b.String(), "| g | inputQ · r2 (against inputQ) | calls/s |")
	assert.Contains(t, b.String(), "| g | inputQ | calls/s |")

	arms[len(arms)-1].Against = "inputQ-batch"
	_, err = Analyse(map[string][]Arm{"g": arms}, rounds, DefaultOptions)
	assert.ErrorContains(t, err, "not one of its arms")
}

// anatomyRatios are a group's anatomy estimates by arm and figure
// ("inputQ wake-ups/call").
func anatomyRatios(g Group) map[string]float64 {
	got := map[string]float64{}
	for _, e := range g.Anatomy {
		got[e.Design+" "+e.Metric] = e.Ratio
	}
	return got
}

// TestFloorNeedsTheAAControl: a group without the A/A twin has no floor
// (the report says "—", not ±0%); the control, a group with it, has the
// twin's widest reach from no effect.
func TestFloorNeedsTheAAControl(t *testing.T) {
	assert.True(t, math.IsInf(Group{}.Floor(), 1), "no A/A twin: no floor")
	g := Group{AA: []Estimate{
		{Metric: "calls/s", Robust: paired.Robust{N: 20, Lo: 0.99, Hi: 1.015}},
		{Metric: "CPU/call", Robust: paired.Robust{N: 20, Lo: 0.98, Hi: 1.005}},
	}}
	assert.InDelta(t, 0.02, g.Floor(), 1e-12)
}

// TestReportSaysWhatWouldDecide: a comparison not shown carries about how
// many rounds would decide it, in the answer and in the table; the control,
// the same rounds with an effect the rounds decide, carries none.
func TestReportSaysWhatWouldDecide(t *testing.T) {
	start := time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC)
	var res Result
	render := func(effect float64) (Primary, string) {
		m := newMachine(21)
		m.effect, m.proc = effect, 0.06
		rounds := m.rounds("g", 1, 12)
		for i := range rounds {
			rounds[i].Started = start.Add(time.Duration(i) * 7500 * time.Millisecond)
		}
		var err error
		res, err = Analyse(groupsOf("g"), rounds, DefaultOptions)
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, WriteMarkdown(&b, Header{Title: "t"}, res))
		return primary(t, res, "inputQ", "calls/s"), b.String()
	}
	p, md := render(1)
	require.Equal(t, paired.OutcomeNotShown, p.Outcome, p.Short())
	require.Greater(t, p.ToDecide, 12)
	assert.Contains(t, md, fmt.Sprintf("| not shown (≈%d rounds would decide it) |", p.ToDecide))
	assert.Contains(t, md, p.Sentence()+fmt.Sprintf(", and about %d rounds in all would decide it", p.ToDecide))
	// Both of the group's comparisons are not shown; its rounds serve
	// both, so it adds what the one that asks the most asks.
	more := p.ToDecide - 12
	if q := primary(t, res, "inputQ", "CPU/call"); q.Outcome == paired.OutcomeNotShown {
		more = max(more, q.ToDecide-12)
	}
	assert.Contains(t, md, fmt.Sprintf("**Not shown: 2 of 2.** Were their estimates and spreads to hold, the rounds that would decide them: g about %d more; %d in all, %s at this run's pace of 7.5 s a round",
		more, more, minutes(time.Duration(more)*7500*time.Millisecond)))
	p, md = render(0.8)
	require.Equal(t, paired.OutcomeDetected, p.Outcome)
	assert.Zero(t, p.ToDecide)
	assert.NotContains(t, md, "would decide it")
	assert.NotContains(t, md, "Not shown:")
}

// TestRatesPerHeldSecond: under turns an arm's rates are per second of
// the turns it held, not of the window, whose other seconds were the
// other arms'; without Held (the control) they are per second of the
// window.
func TestRatesPerHeldSecond(t *testing.T) {
	m := Measure{Requests: 3000, CPU: 0.09, Window: 1.2, Wakeups: 600, Quota: 1}
	assert.InDelta(t, 2500, m.CallsPerSec(), 1e-9, "the control: per second of the window")
	assert.InDelta(t, 500, m.WakeupsPerSec(), 1e-9)
	assert.InDelta(t, 0.075, m.Util(), 1e-9)
	m.Held = 0.3
	assert.InDelta(t, 10000, m.CallsPerSec(), 1e-9, "per second it held the CPUs")
	assert.InDelta(t, 2000, m.WakeupsPerSec(), 1e-9)
	assert.InDelta(t, 0.3, m.Util(), 1e-9, "busy 0.09 s of the 0.3 s it held them")
	assert.InDelta(t, 30e-6, m.CPUPerCall(), 1e-12, "per call either way")
}
