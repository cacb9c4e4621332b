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
	"github.com/locklab/locklab/server"
)

// TestCoresTargetFitsItsBudget reads `make cores`' two plans from the
// Makefile, checks that their flags are good on this machine (two CPUs at
// least: the plan puts the server on 2), and that their runs take the time
// `make help` states, within half a minute, and no more than 6 minutes.
func TestCoresTargetFitsItsBudget(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	planTime := func(extra ...string) time.Duration {
		var total time.Duration
		for _, name := range []string{"CORES_CHECK", "CORES_DEMANDS"} {
			m := regexp.MustCompile(`(?m)^` + name + `\s*:=\s*(.+)$`).FindSubmatch(mk)
			require.NotNil(t, m, name)
			cmd, err := parseFlags(append(strings.Fields(string(m[1])), extra...), io.Discard)
			require.NoError(t, err, name)
			cat := serverCatalog()
			if cmd.cfg.AllModes {
				cmd.cfg.Modes = cat.Base.Names() // as Compare does
			}
			specs := plan.Layout(cmd.cfg.Config, cat, run.Serves)
			require.NotEmpty(t, specs, name)
			total += run.PlanDuration(cmd.cfg, specs)
		}
		return total
	}
	total := planTime()
	help := regexp.MustCompile(`(?m)^cores:.*## .*\(~([0-9.]+) min\)$`).FindSubmatch(mk)
	require.NotNil(t, help, "make help states the time")
	stated, err := strconv.ParseFloat(string(help[1]), 64)
	require.NoError(t, err)
	assert.LessOrEqual(t, math.Abs(total.Minutes()-stated), 0.5, "estimated %v", total)
	assert.LessOrEqual(t, total, 6*time.Minute)
	// The control: 24 repetitions of each plan would not fit what help states.
	assert.Greater(t, math.Abs(planTime("-reps", "24").Minutes()-stated), 0.5)
}

// serverCatalog is what the server binary's -list-modes says, taken from
// the registry it prints.
func serverCatalog() plan.Catalog {
	var b strings.Builder
	for _, m := range server.Modes() {
		b.WriteString(m.Name)
		for _, wl := range server.Workloads() {
			if m.Serves(wl) {
				b.WriteString(" " + wl)
			}
		}
		b.WriteString("\n")
	}
	ml := plan.ParseModeList(b.String())
	return plan.Catalog{Base: ml, Under: map[string]plan.ModeList{}}
}
