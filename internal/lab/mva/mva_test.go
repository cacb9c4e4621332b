package mva

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMVAByHand: networks small enough to solve on paper.
func TestMVAByHand(t *testing.T) {
	// One CPU of 1 s a call and a serial centre of 1 s, two callers, no
	// think time: with one caller R = 2, X = 1/2, each queue 1/2; with two,
	// each residence 1·(1 + 1/2), R = 3, X = 2/3.
	x, err := Network{CPUs: 1, CPU: 1, Serial: 1}.Throughput(2)
	require.NoError(t, err)
	assert.InDelta(t, 2.0/3, x, 1e-12)
	// One caller sees no queue: X = 1/(Z + D_cpu + D_serial).
	x, err = Network{Think: 2, CPUs: 4, CPU: 1, Serial: 0.5}.Throughput(1)
	require.NoError(t, err)
	assert.InDelta(t, 1/3.5, x, 1e-12)
	// Many callers reach the asymptotes: min(N/D_cpu, 1/D_serial).
	x, err = Network{CPUs: 2, CPU: 1, Serial: 0.25}.Throughput(400)
	require.NoError(t, err)
	assert.InDelta(t, 2, x, 0.01)
	x, err = Network{CPUs: 8, CPU: 1, Serial: 0.25}.Throughput(400)
	require.NoError(t, err)
	assert.InDelta(t, 4, x, 0.01)

	// FitThink inverts Throughput.
	n := Network{Think: 3e-5, CPUs: 2, CPU: 2e-5, Serial: 1e-5}
	x, err = n.Throughput(16)
	require.NoError(t, err)
	z, err := FitThink(n, 16, x)
	require.NoError(t, err)
	assert.InDelta(t, 3e-5, z, 1e-12)
	_, err = FitThink(n, 16, 1e9)
	assert.ErrorIs(t, err, ErrUnreachable)

	for _, bad := range []Network{{CPUs: 0, CPU: 1}, {CPUs: 1, CPU: 0}, {CPUs: 1, CPU: 1, Serial: -1}, {CPUs: 1, CPU: 1, Think: math.NaN()}} {
		_, err := bad.Throughput(1)
		assert.Error(t, err, "%+v", bad)
	}
	_, err = Network{CPUs: 1, CPU: 1}.Throughput(0)
	assert.Error(t, err)
}

// synth is a synthetic server of known demands and known contention: a
// discrete-event simulation of callers that spend an exponential think
// time outside it, an exponential CPU service on one of its CPUs drawn at
// random (each CPU serves its queue in order), and an exponential service
// at one serial resource (the contention), in that order. It reports what
// a run's record would: calls per second and the two demands, from busy
// time over calls.
type synth struct {
	think, cpuBase, serialBase, serialPerWork float64
}

type event struct {
	at   float64
	kind int // 0 think done, 1 CPU done, 2 serial done
	i    int // the CPU
}

type events []event

func (e events) Len() int           { return len(e) }
func (e events) Less(i, j int) bool { return e[i].at < e[j].at }
func (e events) Swap(i, j int)      { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)        { *e = append(*e, x.(event)) }
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// run simulates calls completions (after as many as warm-up) and returns
// the measured point.
func (s synth) run(seed uint64, work float64, cpus, callers, calls int) Obs {
	rng := rand.New(rand.NewPCG(seed, 7))
	dCPU, dSerial := s.cpuBase+work, s.serialBase+s.serialPerWork*work
	exp := func(mean float64) float64 { return rng.ExpFloat64() * mean }
	var q events
	cpuQ := make([]int, cpus) // waiting or in service, per CPU
	serialQ := 0
	for range callers {
		heap.Push(&q, event{at: exp(s.think)})
	}
	var now, start, busyCPU, busySerial float64
	done := 0
	warm := calls / 4
	for done < warm+calls {
		e := heap.Pop(&q).(event)
		now = e.at
		switch e.kind {
		case 0: // to a CPU drawn at random
			i := rng.IntN(cpus)
			cpuQ[i]++
			if cpuQ[i] == 1 {
				d := exp(dCPU)
				busyCPU += d
				heap.Push(&q, event{at: now + d, kind: 1, i: i})
			}
		case 1: // the CPU's next call, and this one to the serial resource
			cpuQ[e.i]--
			if cpuQ[e.i] > 0 {
				d := exp(dCPU)
				busyCPU += d
				heap.Push(&q, event{at: now + d, kind: 1, i: e.i})
			}
			serialQ++
			if serialQ == 1 {
				d := exp(dSerial)
				busySerial += d
				heap.Push(&q, event{at: now + d, kind: 2})
			}
		case 2: // a call done: its caller thinks
			serialQ--
			if serialQ > 0 {
				d := exp(dSerial)
				busySerial += d
				heap.Push(&q, event{at: now + d, kind: 2})
			}
			heap.Push(&q, event{at: now + exp(s.think)})
			done++
			if done == warm {
				start, busyCPU, busySerial = now, 0, 0
			}
		}
	}
	return Obs{Work: work, CPUs: cpus, Callers: callers, X: float64(calls) / (now - start),
		CPU: busyCPU / float64(calls), Serial: busySerial / float64(calls)}
}

// point is where the synthetic server runs.
type point struct {
	work    float64
	cpus    int
	callers int
}

var (
	fitAt   = []point{{0, 1, 16}, {40e-6, 1, 16}}
	heldOut = []point{{10e-6, 1, 16}, {20e-6, 1, 16}, {0, 2, 16}, {10e-6, 2, 16}, {20e-6, 2, 16}, {40e-6, 2, 16}, {20e-6, 1, 4}}
)

const calls = 8000

// heldOutErrors are each held-out point's prediction error, predicted/measured −
// 1, in each of blocks blocks (the simulation's seeds).
func heldOutErrors(t *testing.T, s synth, blocks int, ignoreSerial bool) [][]float64 {
	t.Helper()
	out := make([][]float64, len(heldOut))
	for b := range blocks {
		var obs []Obs
		for i, p := range fitAt {
			obs = append(obs, s.run(uint64(100*b+i), p.work, p.cpus, p.callers, calls))
		}
		m, err := Fit(obs, ignoreSerial)
		require.NoError(t, err)
		for i, p := range heldOut {
			got := s.run(uint64(100*b+50+i), p.work, p.cpus, p.callers, calls)
			want, err := m.Predict(p.work, p.cpus, p.callers)
			require.NoError(t, err)
			out[i] = append(out[i], want/got.X-1)
		}
	}
	return out
}

func median(x []float64) float64 {
	s := slices.Sorted(slices.Values(x))
	return s[len(s)/2]
}

// TestModelPredictsASyntheticServer fits the model on a synthetic server's
// runs at 1 CPU, at no work and at 40 µs, and predicts the runs it held
// out — other work, 2 CPUs, fewer callers — within 5% (the simulation's
// own noise is about 1–2%). The control: the same model told to ignore the
// serial resource mispredicts the 2-CPU runs, where the contention binds,
// by more than 20%.
func TestModelPredictsASyntheticServer(t *testing.T) {
	s := synth{think: 60e-6, cpuBase: 15e-6, serialBase: 3e-6, serialPerWork: 1}
	const blocks = 3
	for i, errs := range heldOutErrors(t, s, blocks, false) {
		assert.Less(t, math.Abs(median(errs)), 0.05, "held out %+v: errors %v", heldOut[i], errs)
	}
	worst := 0.0
	for i, errs := range heldOutErrors(t, s, blocks, true) {
		if heldOut[i].cpus == 2 && heldOut[i].work == 40e-6 {
			assert.Greater(t, median(errs), 0.20, "the control: ignoring contention at 2 CPUs and 40 µs")
		}
		worst = max(worst, math.Abs(median(errs)))
	}
	assert.Greater(t, worst, 0.20, "the control mispredicts somewhere")
}

// TestCrossoverOfTwoSyntheticDesigns: a lock-like design (cheap per call,
// its hold stretched by half again as much as the work) and an owner-like
// one (dearer per call, its busy time the work plus a fixed hand-off),
// both fitted at 1 CPU; the predicted crossover at 2 CPUs is where the
// simulated designs change order.
func TestCrossoverOfTwoSyntheticDesigns(t *testing.T) {
	lock := synth{think: 60e-6, cpuBase: 12e-6, serialBase: 1e-6, serialPerWork: 1.5}
	owner := synth{think: 60e-6, cpuBase: 20e-6, serialBase: 6e-6, serialPerWork: 1}
	fit := func(s synth) Model {
		var obs []Obs
		for i, p := range fitAt {
			obs = append(obs, s.run(uint64(i+1), p.work, p.cpus, p.callers, calls))
		}
		m, err := Fit(obs, false)
		require.NoError(t, err)
		return m
	}
	w, found, err := Crossover(fit(owner), fit(lock), 2, 16, 0, 40e-6)
	require.NoError(t, err)
	require.True(t, found)
	// The truth: where the exact networks of the true demands cross (the
	// serial terms meet at 10 µs; the CPU's share moves it a little).
	truth, found, err := Crossover(Model{CPU: Line{20e-6, 1}, Serial: Line{6e-6, 1}, Think: 60e-6},
		Model{CPU: Line{12e-6, 1}, Serial: Line{1e-6, 1.5}, Think: 60e-6}, 2, 16, 0, 40e-6)
	require.NoError(t, err)
	require.True(t, found)
	assert.InDelta(t, truth, w, 2e-6, "predicted %v, the networks cross at %v", w, truth)
	// The simulated designs change order across it.
	below, above := truth-5e-6, truth+5e-6
	assert.Greater(t, lock.run(9, below, 2, 16, calls).X, owner.run(9, below, 2, 16, calls).X)
	assert.Less(t, lock.run(9, above, 2, 16, calls).X, owner.run(9, above, 2, 16, calls).X)
	// Designs that never cross in the range.
	_, found, err = Crossover(fit(lock), fit(lock), 2, 16, 0, 40e-6)
	require.NoError(t, err)
	assert.False(t, found)
}
