package main

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/run"
	"github.com/locklab/locklab/internal/lab/study"
)

// TestStudiesFitTheirBudgets ranges over the catalogue: every plan of every
// study parses on this machine (two CPUs at least: plans put the server on
// 2), and the runner's estimate of the study's runs (the one it prints
// before the first) is within the row's budget; a row without a budget is
// one its engines estimate nothing for. The control: the same rows with
// many more repetitions overrun their budgets, so the check can fail.
func TestStudiesFitTheirBudgets(t *testing.T) {
	for _, s := range study.Studies {
		t.Run(s.Name, func(t *testing.T) {
			took, known, err := estimate(s)
			require.NoError(t, err)
			require.Equal(t, known, s.Budget > 0, "a budget exactly where the runner estimates the time")
			t.Logf("%s: %s, budget %v", s.Command(), formatEstimate(took), s.Budget)
			assert.LessOrEqual(t, took, s.Budget)
			if len(s.Plans) > 0 {
				assert.Greater(t, estimateWith(t, s, "-reps", "100"), s.Budget, "the control: 100 blocks (or rounds) overrun the budget")
			}
		})
	}
}

// estimateWith is the estimate of the study's plans with extra flags.
func estimateWith(t *testing.T, s study.Study, extra ...string) time.Duration {
	t.Helper()
	s.Plans = slices.Clone(s.Plans) // the catalogue's own rows stay as they are
	for i := range s.Plans {
		s.Plans[i].Args = strings.TrimSpace(s.Plans[i].Args + " " + strings.Join(extra, " "))
	}
	took, _, err := estimate(s)
	require.NoError(t, err)
	return took
}

// TestStudiesHaveTheirBlocks: the studies whose reports test effects have
// the blocks their tests need (run.PowerWarning), the attribution study
// profiles every run, and the capacity study has the blocks the paired
// analysis judges and the overload phase in every block. The controls: a
// plan with fewer blocks, or without attribution, is caught.
func TestStudiesHaveTheirBlocks(t *testing.T) {
	powered := []string{"why", "runtimes", "ledger", "capacity"}
	for _, name := range powered {
		s, err := study.Lookup(study.Studies, name)
		require.NoError(t, err)
		for _, p := range s.Plans {
			c := parsePlan(t, s, p.Args)
			if c.capacity != nil {
				assert.GreaterOrEqual(t, c.cfg.Reps, paired.MinBlocksRobust, "%s: blocks enough for a verdict", name)
				assert.Positive(t, c.capacity.OverloadFor, "%s: the overload phase runs", name)
				continue
			}
			assert.Empty(t, powerWarning(c), "%s: %s has the blocks its tests need", name, p.Args)
			assert.NotEmpty(t, powerWarning(parsePlan(t, s, p.Args+" -reps 2")), "the control: 2 blocks are too few")
		}
	}
	why, err := study.Lookup(study.Studies, "why")
	require.NoError(t, err)
	for _, p := range why.Plans {
		assert.True(t, parsePlan(t, why, p.Args).cfg.Factors.Attributes(), "why: %s attributes", p.Args)
	}
	assert.False(t, parsePlan(t, why, "-workloads counter -driver h2load").cfg.Factors.Attributes(), "the control")
}

func parsePlan(t *testing.T, s study.Study, args string) command {
	t.Helper()
	engine := study.Runner
	if s.Engine == study.Capacity {
		engine = study.Capacity
	}
	c, err := parseFlagsAs(strings.Fields(args), io.Discard, engine)
	require.NoError(t, err, args)
	return c
}

func powerWarning(c command) string {
	if c.cfg.AllModes {
		c.cfg.Modes = serverCatalog().Names()
	}
	return run.PowerWarning(c.cfg, plan.Layout(c.cfg.Config, serverCatalog(), run.Serves))
}
