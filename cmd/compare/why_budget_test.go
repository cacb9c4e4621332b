package main

import (
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/run"
)

// TestWhyTargetFitsItsBudget reads `make why`'s two plans from the
// Makefile, checks that their flags are good on this machine, that both
// attribute, that each has the blocks its report's tests need, and that
// their runs take the time `make help` states, within half a minute, and
// no more than 5 minutes.
func TestWhyTargetFitsItsBudget(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	planTime := func(extra ...string) time.Duration {
		var total time.Duration
		for _, name := range []string{"WHY_H2LOAD", "WHY_CORES"} {
			m := regexp.MustCompile(`(?m)^` + name + `\s*:=\s*(.+)$`).FindSubmatch(mk)
			require.NotNil(t, m, name)
			cmd, err := parseFlags(append(strings.Fields(string(m[1])), extra...), io.Discard)
			require.NoError(t, err, name)
			assert.True(t, cmd.cfg.Factors.Attributes(), "%s attributes", name)
			specs := plan.Layout(cmd.cfg.Config, serverCatalog(), run.Serves)
			require.NotEmpty(t, specs, name)
			assert.Empty(t, run.PowerWarning(cmd.cfg, specs), "%s has the blocks its tests need", name)
			total += run.PlanDuration(cmd.cfg, specs)
		}
		return total
	}
	total := planTime()
	t.Logf("make why: about %v of runs", total.Round(time.Second))
	help := regexp.MustCompile(`(?m)^why:.*## .*\(~([0-9.]+) min\)$`).FindSubmatch(mk)
	require.NotNil(t, help, "make help states the time")
	stated, err := strconv.ParseFloat(string(help[1]), 64)
	require.NoError(t, err)
	assert.LessOrEqual(t, math.Abs(total.Minutes()-stated), 0.5, "estimated %v", total)
	assert.LessOrEqual(t, total, 5*time.Minute)
	// The control: twice the repetitions would not fit what help states.
	assert.Greater(t, math.Abs(planTime("-reps", "24").Minutes()-stated), 0.5)
}
