package main

import (
	"fmt"
	"io"
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

// TestCompareHelpMatchesTheDefaults: `make help`'s line for compare agrees
// with the plan the runner lays out when given no flags. It names no
// figure of that plan (callers, repetitions, blocks: `go run ./cmd/compare
// -h` states them, from the code), says "A/A control" exactly when the
// default plan runs one, and its time bound holds the default plan's runs
// (planEstimate, the estimate the runner prints). The controls: the line
// the target once had, naming callers and repetitions the runner no longer
// uses, and the current line against a plan without the A/A control or
// too long for its bound, are each caught.
func TestCompareHelpMatchesTheDefaults(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^compare:.*## (.*)$`).FindSubmatch(mk)
	require.NotNil(t, m, "the Makefile has a compare target with a ## help text")
	help := string(m[1])

	cfg, took := defaultPlan(t)
	t.Logf("the default plan: %d blocks, A/A control %q, about %v of runs", cfg.Reps, cfg.Twin, took.Round(time.Second))
	assert.Empty(t, helpProblems(help, cfg, took), "make help: compare: %s", help)

	old := "the main job: Go driver (+ h2load on the counter), pinned CPUs, mutex/inputQ/noop × 10/100/1000 callers × 5 reps → results/<timestamp>/ (< 8 min)"
	assert.NotEmpty(t, helpProblems(old, cfg, took), "the control: the old line states the runner's figures")
	noAA, tookNoAA := defaultPlan(t, "-aa=false")
	assert.NotEmpty(t, helpProblems(help, noAA, tookNoAA), "the control: the line claims an A/A control the plan does not run")
	long, tookLong := defaultPlan(t, "-reps", strconv.Itoa(3*cfg.Reps))
	assert.NotEmpty(t, helpProblems(help, long, tookLong), "the control: %v of runs exceeds the line's bound", tookLong)
}

// defaultPlan is the runner's plan for args (none: its defaults), and how
// long its runs take: the estimate the runner prints for it, side by side
// or isolated (planEstimate).
func defaultPlan(t *testing.T, args ...string) (run.Config, time.Duration) {
	t.Helper()
	cmd, err := parseFlags(args, io.Discard)
	require.NoError(t, err)
	specs := plan.Layout(cmd.cfg.Config, serverCatalog(), run.Serves)
	require.NotEmpty(t, specs)
	return cmd.cfg, planEstimate(cmd)
}

// planFigure is a count the runner's flags own, stated in a help text.
var planFigure = regexp.MustCompile(`[0-9][0-9/,]*\s*(callers|VUs|vus|reps|repetitions|blocks|runs)\b`)

// helpProblems checks compare's help text against the plan cfg, whose runs
// take took.
func helpProblems(help string, cfg run.Config, took time.Duration) []string {
	var probs []string
	if f := planFigure.FindString(help); f != "" {
		probs = append(probs, fmt.Sprintf("states %q, which the runner's flags own: point to go run ./cmd/compare -h instead", f))
	}
	if says, runs := strings.Contains(help, "A/A control"), cfg.Twin != ""; says != runs {
		probs = append(probs, fmt.Sprintf("says an A/A control runs: %v; the default plan runs one: %v", says, runs))
	}
	bound := regexp.MustCompile(`\(< ([0-9.]+) min\)$`).FindStringSubmatch(help)
	if bound == nil {
		return append(probs, "states no time bound: end it with (< N min)")
	}
	minutes, err := strconv.ParseFloat(bound[1], 64)
	if err != nil {
		return append(probs, err.Error())
	}
	if took > time.Duration(minutes*float64(time.Minute)) {
		probs = append(probs, fmt.Sprintf("the default plan's runs take about %v, more than the %s min stated", took.Round(time.Second), bound[1]))
	}
	return probs
}
