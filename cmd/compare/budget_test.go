package main

import (
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/run"
	"github.com/locklab/locklab/server"
	"github.com/locklab/locklab/server/serve"
)

// TestStudyTargetsFitTheirBudgets reads the plans of the Makefile's study
// targets, checks that their flags are good on this machine (two CPUs at
// least: the plans put the server on 2), that each plan has the blocks its
// report's tests need where it says so, and that their runs take the time
// `make help` states, within half a minute, and no more than the target's
// budget. The control: many more repetitions would not fit what help
// states, so the check can fail.
func TestStudyTargetsFitTheirBudgets(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	tests := []struct {
		target    string
		plans     []string
		budget    time.Duration
		attribute bool // every plan profiles its runs
		powered   bool // every plan has the blocks its tests need
	}{
		{"cores", []string{"CORES_CHECK", "CORES_DEMANDS"}, 6 * time.Minute, false, false},
		{"crossover", []string{"CROSSOVER"}, 10 * time.Minute, false, false},
		{"why", []string{"WHY_H2LOAD", "WHY_CORES"}, 5 * time.Minute, true, true},
		{"runtimes", []string{"RUNTIMES_DEFAULT", "RUNTIMES_CORES"}, 25 * time.Minute, false, true},
		{"ledger", []string{"LEDGER_DEFAULT", "LEDGER_CORES"}, 12 * time.Minute, false, true},
		{"bank-db", []string{"BANK_DB"}, 40 * time.Minute, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			planTime := func(extra ...string) time.Duration {
				var total time.Duration
				for _, name := range tt.plans {
					m := regexp.MustCompile(`(?m)^` + name + `\s*:=\s*(.+)$`).FindSubmatch(mk)
					require.NotNil(t, m, name)
					cmd, err := parseFlags(append(strings.Fields(string(m[1])), extra...), io.Discard)
					require.NoError(t, err, name)
					if cmd.cfg.AllModes {
						cmd.cfg.Modes = serverCatalog().Names() // as Compare does
					}
					if tt.attribute {
						assert.True(t, cmd.cfg.Factors.Attributes(), "%s attributes", name)
					}
					specs := plan.Layout(cmd.cfg.Config, serverCatalog(), run.Serves)
					require.NotEmpty(t, specs, name)
					if tt.powered {
						assert.Empty(t, run.PowerWarning(cmd.cfg, specs), "%s has the blocks its tests need", name)
					}
					total += run.PlanDuration(cmd.cfg, specs)
				}
				return total
			}
			total := planTime()
			t.Logf("make %s: about %v of runs", tt.target, total.Round(time.Second))
			help := regexp.MustCompile(`(?m)^` + tt.target + `:.*## .*\(~([0-9.]+) min\)$`).FindSubmatch(mk)
			require.NotNil(t, help, "make help states the time")
			stated, err := strconv.ParseFloat(string(help[1]), 64)
			require.NoError(t, err)
			assert.LessOrEqual(t, math.Abs(total.Minutes()-stated), 0.5, "estimated %v", total)
			assert.LessOrEqual(t, total, tt.budget)
			assert.Greater(t, math.Abs(planTime("-reps", "24").Minutes()-stated), 0.5, "the control")
		})
	}
}

// TestCapacityFitsItsBudget: make capacity's run, as the Makefile gives it,
// takes the time `make help` states by the runner's estimate (within half a
// minute), within its 10-minute budget, with the blocks the paired
// analysis judges and the overload phase in every block. The control: many
// more blocks would not fit what help states.
func TestCapacityFitsItsBudget(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	plans := newMakefile(string(mk)).runnerArgs("capacity")
	require.Len(t, plans, 1, "make capacity runs the runner once")
	estimate := func(extra ...string) time.Duration {
		cmd, err := parseFlags(append(slices.Clone(plans[0]), extra...), io.Discard)
		require.NoError(t, err)
		require.NotNil(t, cmd.capacity, "make capacity runs -study capacity")
		return run.CapacityEstimate(cmd.cfg, *cmd.capacity)
	}
	cmd, err := parseFlags(plans[0], io.Discard)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, cmd.cfg.Reps, paired.MinBlocksRobust, "blocks enough for a verdict on the latency at fixed rates")
	assert.Positive(t, cmd.capacity.OverloadFor, "the overload phase runs")
	total := estimate()
	t.Logf("make capacity: about %v of runs", total.Round(time.Second))
	help := regexp.MustCompile(`(?m)^capacity:.*## .*\(~([0-9.]+) min\)$`).FindSubmatch(mk)
	require.NotNil(t, help, "make help states the time")
	stated, err := strconv.ParseFloat(string(help[1]), 64)
	require.NoError(t, err)
	assert.LessOrEqual(t, math.Abs(total.Minutes()-stated), 0.5, "estimated %v", total)
	assert.LessOrEqual(t, total, 10*time.Minute)
	assert.Greater(t, math.Abs(estimate("-reps", "24").Minutes()-stated), 0.5, "the control")
}
