package paired

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Simulated experiments: per-block log ratios drawn from a normal
// distribution with a known effect, in units of the block-to-block noise σ
// (1% here; the analysis is scale-free), and judged as the report judges
// them. The seeds are fixed, so the figures are the same on every run;
// `go test ./internal/lab/paired -run 'Sim|Power' -v` prints them.

// simSigma is σ, the block-to-block noise of the log ratios.
const simSigma = 0.01

// simFamily is the family of the default report: inputQ against mutex on
// two primary metrics in five groups.
const simFamily = 10

// simBlocks are the block counts simulated: the runner's default -reps
// (10) and 12.
var simBlocks = []int{10, 12}

// simExperiment draws one family of simFamily comparisons of n blocks.
// Comparison 0 has the effect (in σ), and when shift > 0 its first block
// is moved by shift·σ against the effect; the others are null.
func simExperiment(rng *rand.Rand, n int, effect, shift float64) []Comparison {
	cs := make([]Comparison, simFamily)
	for k := range cs {
		d, b := make([]float64, n), make([]float64, n)
		for i := range n {
			mu := 0.0
			if k == 0 {
				mu = effect
				if i == 0 {
					mu -= math.Copysign(shift, effect)
				}
			}
			b[i] = 1
			d[i] = math.Exp(simSigma * (mu + rng.NormFloat64()))
		}
		cs[k] = Comparison{Design: fmt.Sprint("d", k), Baseline: "b", Metric: "m", DesignValues: d, BaselineValues: b}
	}
	return cs
}

// simRates are shares of simulated experiments.
type simRates struct {
	// confirm: comparison 0 detected by Confirm.
	confirm float64
	// signedRank, tTest, fifth: comparison 0 detected, with Holm over the
	// same family, by the signed-rank test of Analyse, by the plain t test
	// (Yuen with nothing trimmed), and by Yuen with a fifth of the blocks
	// trimmed (the textbook 20%); computed only when asked for.
	signedRank, tTest, fifth float64
	// falseAny: some null comparison (1 and on) detected by Confirm;
	// rawAny: some null with Yuen's unadjusted p ≤ α.
	falseAny, rawAny float64
}

// simFamilies runs sims experiments at family-wise level 0.05 and margin
// 3%, and with controls the other analyses of the same data.
func simFamilies(t *testing.T, seed uint64, sims, n int, effect, shift float64, controls bool) simRates {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	var c, s, tt, te, f, r int
	for k := range sims {
		cs := simExperiment(rng, n, effect, shift)
		ps, err := Confirm(cs, 0.05, 0.03)
		require.NoError(t, err)
		if ps[0].Outcome == OutcomeDetected {
			c++
		}
		if slices.ContainsFunc(ps[1:], func(p Primary) bool { return p.Outcome == OutcomeDetected }) {
			f++
		}
		if slices.ContainsFunc(ps[1:], func(p Primary) bool { return p.P <= 0.05 }) {
			r++
		}
		if !controls {
			continue
		}
		logs := make([][]float64, len(cs))
		for i, c := range cs {
			logs[i], err = logRatios(c)
			require.NoError(t, err)
		}
		sr := holmFirst(t, logs, func(x []float64) float64 {
			w, err := SignedRankTest(x)
			require.NoError(t, err)
			return w.P
		})
		// The signed-rank detection is Analyse's, computed without its
		// intervals (which cost more than the test); every 50th
		// experiment checks that the two agree.
		if k%50 == 0 {
			vs, err := Analyse(cs, 0.05)
			require.NoError(t, err)
			require.Equal(t, vs[0].State == Detected, sr, "the shortcut is Analyse's verdict")
		}
		if sr {
			s++
		}
		if holmFirst(t, logs, func(x []float64) float64 { return yuen(x, 0.05, 0).P }) {
			tt++
		}
		if holmFirst(t, logs, func(x []float64) float64 { return yuen(x, 0.05, len(x)/5).P }) {
			te++
		}
	}
	share := func(k int) float64 { return float64(k) / float64(sims) }
	return simRates{confirm: share(c), signedRank: share(s), tTest: share(tt), fifth: share(te), falseAny: share(f), rawAny: share(r)}
}

// holmFirst says whether comparison 0 of a family, given by its log
// ratios, is detected at family-wise level 0.05 by the test p with Holm's
// adjustment over the family.
func holmFirst(t *testing.T, logs [][]float64, p func(logs []float64) float64) bool {
	t.Helper()
	raw := make([]float64, len(logs))
	for i, x := range logs {
		raw[i] = p(x)
	}
	adj, err := Holm(raw)
	require.NoError(t, err)
	return adj[0] <= 0.05
}

// TestSimOneBadBlockCannotVeto: a 3σ effect with one block shifted by 8σ
// against it, in a family of 10 whose other comparisons are null. The
// trimmed mean sets the block aside and detects the effect in at least
// 90% of experiments. The control, the exact signed-rank test with Holm
// over the same family on the same data, detects it in at most 20%: the
// bad block holds the largest rank, and its sign alone keeps p above
// Holm's first step.
func TestSimOneBadBlockCannotVeto(t *testing.T) {
	for _, n := range simBlocks {
		t.Run(fmt.Sprint(n, " blocks"), func(t *testing.T) {
			r := simFamilies(t, uint64(n), 500, n, 3, 8, true)
			t.Logf("3σ effect, one block shifted 8σ against it, %d blocks, family %d, 500 experiments: detected by the confirmatory test in %.1f%%, by the signed-rank test in %.1f%% (the t test: %.1f%%; a fifth trimmed: %.1f%%)",
				n, simFamily, 100*r.confirm, 100*r.signedRank, 100*r.tTest, 100*r.fifth)
			assert.GreaterOrEqual(t, r.confirm, 0.90)
			assert.LessOrEqual(t, r.signedRank, 0.20, "the control must show the veto")
		})
	}
}

// TestSimFamilyWiseError: every comparison of a family of 10 null; some
// false detection in at most 7% of 2000 experiments (α = 5%). The
// control: unadjusted, some null reaches p ≤ 0.05 in far more (about
// 1 − 0.95¹⁰ = 40%), so the check would catch a family left unadjusted.
func TestSimFamilyWiseError(t *testing.T) {
	for _, n := range simBlocks {
		t.Run(fmt.Sprint(n, " blocks"), func(t *testing.T) {
			r := simFamilies(t, uint64(100+n), 2000, n, 0, 0, false)
			t.Logf("all null, %d blocks, family %d, 2000 experiments: some false detection in %.1f%% (α = 5%%); unadjusted, in %.1f%%",
				n, simFamily, 100*r.falseAny, 100*r.rawAny)
			assert.LessOrEqual(t, r.falseAny, 0.07)
			assert.GreaterOrEqual(t, r.rawAny, 0.25, "the control: unadjusted, the family errs far more often")
		})
	}
}

// TestSimCoverageUnderTheStoppingRule: the two-stage -precision rule — a
// first stage of n0 blocks, then, once, as many more as PlanBlocks asks
// from the first stage's half-width (at most 40 in all) — and the 95%
// interval of all the blocks still covers the true effect in at least 93%
// of 3000 experiments. The target is the median first-stage half-width
// (from a separate pilot of 1000), so that about half the experiments add
// blocks. The control: the same intervals with the normal quantile 1.96 in
// place of Student's t, too narrow at these degrees of freedom, cover less
// than 93%, so the check can tell an interval that is too narrow.
func TestSimCoverageUnderTheStoppingRule(t *testing.T) {
	const sims, maxBlocks = 3000, 40
	effect := 2 * simSigma
	for _, c := range []struct {
		n0    int
		again bool
	}{{12, false}, {10, false}, {12, true}, {10, true}} {
		n0, again := c.n0, c.again
		t.Run(fmt.Sprint(n0, " blocks first, looking again: ", again), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(200+n0), map[bool]uint64{false: 99, true: 98}[again]))
			draw := func() float64 { return effect + simSigma*rng.NormFloat64() }
			stage := func(n int) []float64 {
				logs := make([]float64, n)
				for i := range logs {
					logs[i] = draw()
				}
				return logs
			}
			pilot := make([]float64, 1000)
			for i := range pilot {
				y, err := Yuen(stage(n0), 0.05)
				require.NoError(t, err)
				pilot[i] = y.HalfWidth()
			}
			slices.Sort(pilot)
			target := pilot[len(pilot)/2]

			covered, coveredZ, added, blocks := 0, 0, 0, 0
			truth := math.Exp(effect)
			for range sims {
				logs := stage(n0)
				first, err := Yuen(logs, 0.05)
				require.NoError(t, err)
				total := PlanBlocks(n0, first.HalfWidth(), target, maxBlocks)
				if total > n0 {
					added++
				}
				logs = append(logs, stage(total-n0)...)
				all, err := Yuen(logs, 0.05)
				require.NoError(t, err)
				// Side by side the rule looks again after each addition
				// (duet.Rounds), until the width is within the target or
				// the blocks at their most.
				for again && total < maxBlocks {
					next := PlanBlocks(total, all.HalfWidth(), target, maxBlocks)
					if next <= total {
						break
					}
					logs = append(logs, stage(next-total)...)
					total = next
					if all, err = Yuen(logs, 0.05); err != nil {
						t.Fatal(err)
					}
				}
				blocks += total
				if all.Lo <= truth && truth <= all.Hi {
					covered++
				}
				if math.Abs(all.Center-effect) <= 1.96*all.SE {
					coveredZ++
				}
			}
			cov, covZ, share := float64(covered)/sims, float64(coveredZ)/sims, float64(added)/sims
			t.Logf("two-stage rule, first %d blocks, target ±%.2f%% (σ = %.0f%%), at most %d, 3000 experiments: %.1f%% added blocks (%.1f blocks on average); the 95%% interval covered the effect in %.1f%% (with 1.96 in place of t: %.1f%%)",
				n0, 100*target, 100*simSigma, maxBlocks, 100*share, float64(blocks)/sims, 100*cov, 100*covZ)
			assert.InDelta(t, 0.5, share, 0.15, "the target should make about half add blocks, or the test says little")
			assert.GreaterOrEqual(t, cov, 0.93)
			assert.Less(t, covZ, 0.93, "the control: a too narrow interval fails the check")
		})
	}
}

// TestSimEquivalence: the two one-sided tests. With no effect and little
// noise, "the same within ±3%" nearly always (but for the experiments
// whose test detects a difference, which comes first); with an effect of
// twice the margin, never; with an effect exactly at the margin, in at
// most α of experiments, which is the level TOST promises. The control at
// the margin: calling it the same whenever the estimate lies inside the
// margin would do so about half the time, which the check would catch.
func TestSimEquivalence(t *testing.T) {
	const sims, margin = 1000, 0.03
	for i, tt := range []struct {
		name       string
		effect, sd float64 // log ratio's mean and σ
		min, max   float64 // share judged equivalent: at least, at most
	}{
		{"no effect, σ 0.5%", 0, 0.005, 0.90, 1},
		{"no effect, σ 1%", 0, 0.01, 0.90, 1},
		{"twice the margin above", math.Log(1 + 2*margin), 0.01, 0, 0},
		{"twice the margin below", math.Log(1 - 2*margin), 0.01, 0, 0},
		{"at the margin above", math.Log(1 + margin), 0.02, 0, 0.07},
		{"at the margin below", math.Log(1 - margin), 0.02, 0, 0.07},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(300+i), 99))
			eq, naive := 0, 0
			for range sims {
				d, b := make([]float64, 12), make([]float64, 12)
				for i := range d {
					b[i], d[i] = 1, math.Exp(tt.effect+tt.sd*rng.NormFloat64())
				}
				ps, err := Confirm([]Comparison{{Design: "d", Baseline: "b", Metric: "m", DesignValues: d, BaselineValues: b}}, 0.05, margin)
				require.NoError(t, err)
				if ps[0].Outcome == OutcomeEquivalent {
					eq++
				}
				if math.Abs(ps[0].Ratio-1) <= margin {
					naive++
				}
			}
			share := float64(eq) / sims
			t.Logf("%s, 12 blocks, 1000 experiments: the same within ±3%% in %.1f%%", tt.name, 100*share)
			assert.GreaterOrEqual(t, share, tt.min)
			assert.LessOrEqual(t, share, tt.max)
			if strings.HasPrefix(tt.name, "at the margin") {
				assert.Greater(t, float64(naive)/sims, 0.3, "the control: the estimate alone says 'the same' far more often")
			}
		})
	}
}

// TestPowerAtDefaultPlan prints the power of the confirmatory test — the
// share of 400 experiments in which an effect of 1, 2 or 3 block-to-block
// σ is detected in a family of 10 whose other comparisons are null — at
// 10 blocks (the runner's default), 12 and 20; and beside it, with Holm
// over the same family on the same experiments, the power of the plain t
// test on the log ratios, of Yuen with a fifth of the blocks trimmed (the
// textbook 20%, not chosen: see the package's notes), and of the
// signed-rank test of Analyse:
//
//	go test ./internal/lab/paired -run TestPowerAtDefaultPlan -v
//
// At 3σ the confirmatory test's power must be at least 90% at 10 and 12
// blocks.
func TestPowerAtDefaultPlan(t *testing.T) {
	t.Logf("power, family %d, α = 0.05, 400 experiments a cell: confirmatory test (t test | a fifth trimmed | signed-rank)", simFamily)
	for _, n := range []int{10, 12, 20} {
		line := fmt.Sprintf("%d blocks:", n)
		for _, effect := range []float64{1, 2, 3} {
			r := simFamilies(t, uint64(400+10*n)+uint64(effect), 400, n, effect, 0, true)
			line += fmt.Sprintf("  %gσ %.0f%% (%.0f%% | %.0f%% | %.0f%%)", effect, 100*r.confirm, 100*r.tTest, 100*r.fifth, 100*r.signedRank)
			if effect == 3 && n <= 12 {
				assert.GreaterOrEqual(t, r.confirm, 0.90, "%d blocks, 3σ", n)
			}
		}
		t.Log(line)
	}
}
