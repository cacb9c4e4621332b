package paired

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Simulated experiments: log ratios drawn from a normal distribution with a
// known effect, in units of the block-to-block noise σ, and judged as the
// report judges them. The seeds are fixed, so the figures are the same on
// every run; `go test ./internal/lab/paired -run Sim -v` prints them.

// simFamily is the default plan's family: 5 groups × inputQ against
// mutex × 2 primary metrics.
const simFamily = 10

// simBlocks is the default plan's blocks.
const simBlocks = 10

// experiment draws one family: comparison 0 has the effect (plus an
// outlying block shifted by shift·σ against it when shift > 0); the others
// are null.
func experiment(rng *rand.Rand, n int, effect, shift float64) []Comparison {
	cs := make([]Comparison, simFamily)
	for k := range cs {
		d, b := make([]float64, n), make([]float64, n)
		for i := range n {
			mu := 0.0
			if k == 0 {
				mu = effect
				if shift > 0 && i == 0 {
					mu -= shift
				}
			}
			b[i] = 1
			d[i] = math.Exp(0.01 * (mu + rng.NormFloat64())) // σ = 1% per block
		}
		cs[k] = Comparison{Design: fmt.Sprint("d", k), Baseline: "b", Metric: "m", DesignValues: d, BaselineValues: b}
	}
	return cs
}

// detections counts, over sims experiments, how often the effect was
// detected by Confirm and by the signed-rank Analyse, and how often any
// null was (falsely) detected by Confirm.
func detections(t *testing.T, seed uint64, sims, n int, effect, shift float64, control bool) (confirm, signedRank, falseAny float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	var c, s, f int
	for range sims {
		cs := experiment(rng, n, effect, shift)
		ps, err := Confirm(cs, 0.05, 0.03)
		require.NoError(t, err)
		if ps[0].Outcome == OutcomeDetected {
			c++
		}
		if control {
			vs, err := Analyse(cs, 0.05)
			require.NoError(t, err)
			if vs[0].State == Detected {
				s++
			}
		}
		for _, p := range ps[1:] {
			if p.Outcome == OutcomeDetected {
				f++
				break
			}
		}
	}
	return float64(c) / float64(sims), float64(s) / float64(sims), float64(f) / float64(sims)
}

// TestSimOneBadBlockCannotVeto: a 3σ effect with one block shifted by 8σ
// against it, at the default plan's blocks and family. The trimmed mean
// sets the block aside and detects the effect; the control, the exact
// signed-rank test with Holm over the same family, cannot — the bad block's
// rank is the largest, and its sign vetoes.
func TestSimOneBadBlockCannotVeto(t *testing.T) {
	c, s, _ := detections(t, 1, 1000, simBlocks, 3, 8, true)
	t.Logf("3σ effect, one block shifted 8σ against it, %d blocks, family %d: detected by the trimmed mean in %.1f%%, by the signed-rank test in %.1f%%",
		simBlocks, simFamily, 100*c, 100*s)
	assert.GreaterOrEqual(t, c, 0.90)
	assert.LessOrEqual(t, s, 0.20, "the control must show the veto")
}

// TestSimFamilyWiseError: every comparison null; the chance of any false
// detection in the family stays near α.
func TestSimFamilyWiseError(t *testing.T) {
	_, _, f := detections(t, 2, 2000, simBlocks, 0, 0, false)
	t.Logf("all null, %d blocks, family %d: some false detection in %.1f%% of experiments (α = 5%%)", simBlocks, simFamily, 100*f)
	assert.LessOrEqual(t, f, 0.07)
}

// TestSimCoverageUnderTheStoppingRule: the two-stage -precision rule — a
// first stage of the default blocks, then, once, as many more as
// PlanBlocks asks (at most 40) — and the 95% interval of the whole still
// covers the true effect in at least 93% of experiments. The target is
// set so that about half the experiments add blocks.
func TestSimCoverageUnderTheStoppingRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 99))
	const sims, effect, target, maxBlocks = 3000, 0.02, 0.0075, 40
	covered, added := 0, 0
	draw := func() float64 { return effect + 0.01*rng.NormFloat64() }
	for range sims {
		logs := make([]float64, simBlocks)
		for i := range logs {
			logs[i] = draw()
		}
		first, err := Yuen(logs, 0.05)
		require.NoError(t, err)
		total := PlanBlocks(simBlocks, first.HalfWidth(), target, maxBlocks)
		if total > simBlocks {
			added++
		}
		for len(logs) < total {
			logs = append(logs, draw())
		}
		all, err := Yuen(logs, 0.05)
		require.NoError(t, err)
		if all.Lo <= math.Exp(effect) && math.Exp(effect) <= all.Hi {
			covered++
		}
	}
	cov, share := float64(covered)/sims, float64(added)/sims
	t.Logf("two-stage rule (first %d blocks, target ±%.2f%%, at most %d): %.1f%% of experiments added blocks; the 95%% interval covered the effect in %.1f%%",
		simBlocks, 100*target, maxBlocks, 100*share, 100*cov)
	assert.InDelta(t, 0.5, share, 0.3, "the target should make about half add blocks, or the test says little")
	assert.GreaterOrEqual(t, cov, 0.93)
}

// TestSimEquivalence: no effect and little noise is "the same within
// ±3%" — but for the α of experiments whose test (wrongly) detects a
// difference, which comes first; an effect of twice the margin never is.
func TestSimEquivalence(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 99))
	for _, tt := range []struct {
		effect, sd float64
		wantMin    float64 // share judged equivalent, at least
		wantMax    float64 // and at most
	}{
		{effect: 0, sd: 0.01, wantMin: 0.90, wantMax: 1},
		{effect: 0.06, sd: 0.01, wantMin: 0, wantMax: 0},
	} {
		eq := 0
		for range 500 {
			d, b := make([]float64, simBlocks), make([]float64, simBlocks)
			for i := range d {
				b[i], d[i] = 1, math.Exp(tt.effect+tt.sd*rng.NormFloat64())
			}
			ps, err := Confirm([]Comparison{{Design: "d", Baseline: "b", Metric: "m", DesignValues: d, BaselineValues: b}}, 0.05, 0.03)
			require.NoError(t, err)
			if ps[0].Outcome == OutcomeEquivalent {
				eq++
			}
		}
		share := float64(eq) / 500
		assert.GreaterOrEqual(t, share, tt.wantMin, "effect %v", tt.effect)
		assert.LessOrEqual(t, share, tt.wantMax, "effect %v", tt.effect)
	}
}

// TestPowerAtDefaultPlan prints the power of the primary test at the
// default plan (10 blocks, a family of 10), and with 12 and 20 blocks, for
// effects of 1, 2 and 3 block-to-block σ: `go test ./internal/lab/paired
// -run TestPowerAtDefaultPlan -v`. At 3σ it must be at least 90%.
func TestPowerAtDefaultPlan(t *testing.T) {
	for _, n := range []int{simBlocks, 12, 20} {
		line := fmt.Sprintf("%d blocks, family %d:", n, simFamily)
		for _, effect := range []float64{1, 2, 3} {
			c, s, _ := detections(t, uint64(10+n), 400, n, effect, 0, n == simBlocks)
			line += fmt.Sprintf("  %gσ: %.0f%%", effect, 100*c)
			if n == simBlocks {
				line += fmt.Sprintf(" (signed-rank %.0f%%)", 100*s)
			}
			if n == simBlocks && effect == 3 {
				assert.GreaterOrEqual(t, c, 0.90)
			}
		}
		t.Log(line)
	}
}
