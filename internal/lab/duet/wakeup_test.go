package duet

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wakingRounds are rounds in which every arm's server was woken a random
// number of times per call, each wake-up costing perWakeup seconds of CPU
// on top of the call's own; the calls/s follow from the CPU, which every
// arm gets alike.
func wakingRounds(seed uint64, n int, perWakeup float64) []Round {
	m := newMachine(seed)
	rng := rand.New(rand.NewPCG(seed, 9))
	rounds := m.rounds("g", 1, n)
	for i := range rounds {
		for j := range rounds[i].Arms {
			a := &rounds[i].Arms[j]
			perCall := a.CPU / float64(a.Requests)
			w := 0.08 * (1 + 0.25*rng.NormFloat64())
			perCall += perWakeup * w
			a.Requests = uint64(a.CPU / perCall)
			a.Writes = a.Requests
			a.Wakeups = uint64(w * float64(a.Requests))
		}
	}
	return rounds
}

// TestWakeupCostFromTheAAPair: rounds in which each wake-up costs 40 µs
// give back that cost, with an interval that holds it, and most of the
// A/A pair's spread in CPU per call; the report shows it. The control:
// wake-ups that cost nothing give an interval that holds none and a small
// share, and rounds without wake-ups, or without the twin, give no fit.
func TestWakeupCostFromTheAAPair(t *testing.T) {
	res, err := Analyse(groupsOf("g"), wakingRounds(5, 30, 40e-6), DefaultOptions)
	require.NoError(t, err)
	w := res.Groups[0].Wakeup
	require.NotNil(t, w)
	assert.Equal(t, 30, w.N)
	assert.InDelta(t, 40e-6, w.PerWakeup, 8e-6)
	assert.True(t, w.Lo < 40e-6 && 40e-6 < w.Hi, "the interval [%g, %g] holds the true cost", w.Lo, w.Hi)
	assert.Greater(t, w.R2, 0.5)
	var b bytes.Buffer
	require.NoError(t, WriteMarkdown(&b, Header{Title: "t"}, res))
	assert.Contains(t, b.String(), "| g | 30 | ")
	assert.Contains(t, b.String(), "server CPU a wake-up cost")

	res, err = Analyse(groupsOf("g"), wakingRounds(5, 30, 0), DefaultOptions)
	require.NoError(t, err)
	w = res.Groups[0].Wakeup
	require.NotNil(t, w)
	assert.True(t, w.Lo < 0 && 0 < w.Hi, "the control: free wake-ups, an interval [%g, %g] that holds none", w.Lo, w.Hi)
	assert.Less(t, w.R2, 0.2)

	res, err = Analyse(groupsOf("g"), newMachine(5).rounds("g", 1, 30), DefaultOptions)
	require.NoError(t, err)
	assert.Nil(t, res.Groups[0].Wakeup, "rounds without wake-ups")
	b.Reset()
	require.NoError(t, WriteMarkdown(&b, Header{Title: "t"}, res))
	assert.NotContains(t, b.String(), "server CPU a wake-up cost")

	noTwin := map[string][]Arm{"g": {testArms[0], testArms[2], testArms[3]}}
	res, err = Analyse(noTwin, wakingRounds(5, 30, 40e-6), DefaultOptions)
	require.NoError(t, err)
	assert.Nil(t, res.Groups[0].Wakeup, "no twin")

	_, ok := fitWakeupCost([]float64{1, 1, 1, 1, 1, 1}, []float64{1, 2, 3, 4, 5, 6}, 0.05)
	assert.False(t, ok, "wake-ups that did not vary")
	_, ok = fitWakeupCost([]float64{1, 2, 3, 4, 5}, []float64{1, 2, 3, 4, 5}, 0.05)
	assert.False(t, ok, "too few rounds")
}
