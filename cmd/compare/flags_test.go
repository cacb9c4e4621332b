package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/capacity"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/run"
)

func TestParseFlags(t *testing.T) {
	cmd, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, []string{"mutex", "inputQ", "noop"}, cmd.cfg.Modes)
	assert.Equal(t, []plan.Point{plan.DefaultPoint()}, cmd.cfg.Factors.Points(), "every factor at its default")

	// Every factor of the table has its flag, and its values reach the plan.
	for _, f := range plan.Factors {
		v, err := f.Parse(f.Default)
		require.NoError(t, err)
		cmd, err := parseFlags([]string{"-" + f.Name, f.Default}, io.Discard)
		require.NoError(t, err, f.Name)
		assert.Equal(t, []string{v}, cmd.cfg.Factors.Values(f.Name))
	}
	cmd, err = parseFlags([]string{"-work", "0,10us", "-rerender", "dir"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, []string{"0s", "10µs"}, cmd.cfg.Factors.Values("work"))
	assert.Equal(t, "dir", cmd.rerender)
	cmd, err = parseFlags([]string{"-measure", "isolated", "-call-work", "0,2us"}, io.Discard)
	require.NoError(t, err, "isolated, the known answer is a factor's arm")
	assert.Equal(t, []string{"0", "2µs"}, cmd.cfg.Factors.Values(plan.CallWork))
	// Side by side, equal weights by default, with quotas to fall back on
	// where the drivers cannot keep up; a -duet-cpu given is kept to.
	cmd, err = parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, run.CPUWeight, cmd.cfg.Duet.CPU)
	assert.True(t, cmd.cfg.Duet.Fallback)
	cmd, err = parseFlags([]string{"-duet-cpu", "weight"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, run.CPUWeight, cmd.cfg.Duet.CPU)
	assert.False(t, cmd.cfg.Duet.Fallback, "the control: weights asked for")
	// The servers' slice: 12 ms by default, giving way to the kernel's
	// own where the kernel keeps none; a slice given is kept to, and
	// kernel (or 0) is the kernel's own.
	for _, tt := range []struct {
		args     []string
		want     time.Duration
		fallback bool
	}{
		{nil, run.DefaultSlice, true},
		{[]string{"-duet-slice", "12ms"}, 12 * time.Millisecond, false},
		{[]string{"-duet-slice", "3ms"}, 3 * time.Millisecond, false},
		{[]string{"-duet-slice", "kernel"}, 0, false},
		{[]string{"-duet-slice", "0"}, 0, false},
	} {
		cmd, err = parseFlags(tt.args, io.Discard)
		require.NoError(t, err, tt.args)
		assert.Equal(t, tt.want, cmd.cfg.Duet.Slice, tt.args)
		assert.Equal(t, tt.fallback, cmd.cfg.Duet.SliceFallback, tt.args)
	}
	// The servers' scheduling: batch by default, giving way to the
	// kernel's default over a database; a policy given is kept to.
	for _, tt := range []struct {
		args     []string
		want     string
		fallback bool
	}{
		{nil, run.SchedBatch, true},
		{[]string{"-duet-sched", "batch"}, run.SchedBatch, false},
		{[]string{"-duet-sched", "normal"}, run.SchedNormal, false},
	} {
		cmd, err = parseFlags(tt.args, io.Discard)
		require.NoError(t, err, tt.args)
		assert.Equal(t, tt.want, cmd.cfg.Duet.Sched, tt.args)
		assert.Equal(t, tt.fallback, cmd.cfg.Duet.SchedFallback, tt.args)
	}
	// The rounds' budget is what the job's start leaves of its whole
	// budget, at most the rounds' own and at least a second; a budget
	// given is kept to.
	for _, tt := range []struct {
		args []string
		want time.Duration
	}{
		{nil, duetBudget},
		{[]string{"-started", fmt.Sprint(time.Now().Add(-3 * time.Minute).Unix())}, duetJobBudget - 3*time.Minute},
		{[]string{"-started", fmt.Sprint(time.Now().Add(-30 * time.Second).Unix())}, duetBudget},
		{[]string{"-started", fmt.Sprint(time.Now().Add(-20 * time.Minute).Unix())}, time.Second},
		{[]string{"-started", fmt.Sprint(time.Now().Add(-3 * time.Minute).Unix()), "-time-budget", "9m"}, 9 * time.Minute},
		{[]string{"-started", fmt.Sprint(time.Now().Add(-3 * time.Minute).Unix()), "-measure", "isolated"}, 0},
	} {
		cmd, err := parseFlags(tt.args, io.Discard)
		require.NoError(t, err, tt.args)
		assert.InDelta(t, tt.want.Seconds(), cmd.cfg.TimeBudget.Seconds(), 2, tt.args)
	}
	cmd, err = parseFlags([]string{"-pack", "docs/results/x"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "docs/results/x", cmd.pack)

	for _, tt := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"-started", "-5"}, "-started -5: want the job's start in Unix seconds, not in the future"},
		{[]string{"-started", fmt.Sprint(time.Now().Add(time.Hour).Unix())}, "not in the future"},
		{[]string{"-rerender", "a", "-pack", "a"}, "-rerender, -diff and -pack each run alone: give one"},
		{[]string{"-diff", "a,b", "-rerender", "a"}, "each run alone"},
		{[]string{"-nosuch"}, "flag provided but not defined"},
		{[]string{"-work", "fast"}, `-work: "fast" is not a duration`},
		{[]string{"-reps", "0"}, "-reps 0: want 1..100"},
		{[]string{"-baseline", "sharded"}, "-baseline sharded is not among -modes (mutex,inputQ,noop): the baseline must run"},
		{[]string{"-modes", "inputQ,noop"}, "-baseline mutex is not among -modes (inputQ,noop)"},
		{[]string{"-baseline", "noop"}, "-baseline noop: noop keeps no state"},
		// Checked against this machine before anything runs (main exits 2).
		{[]string{"-server-cpus", "1," + strconv.Itoa(runtime.NumCPU()+1), "-share-cpus"}, "needs CPU " + strconv.Itoa(runtime.NumCPU())},
		{[]string{"-server-cpus", strconv.Itoa(runtime.NumCPU())}, "leaves the driver no CPU of its own"},
		{[]string{"-server-cpus", "two"}, `-server-cpus: "two" is not a CPU count`},
		{[]string{"-max-foreign", "much"}, `-max-foreign "much": want a percentage`},
		{[]string{"-max-foreign", "0"}, "-max-foreign 0%: every run would be spoiled"},
		{[]string{"-precision", "-1%"}, `-precision "-1%": want 0% to 50%`},
		{[]string{"-margin", "0"}, "-margin 0%: no interval can lie within ±0%"},
		{[]string{"-margin", "x%"}, `-margin "x%": want a percentage`},
		{[]string{"-reruns", "-2"}, "-reruns -2: want 0..10"},
		{[]string{"-precision", "2%", "-max-blocks", "3"}, "-max-blocks 3: want"},
		{[]string{"-call-work", "2ms"}, `-call-work: "2ms" is not a duration in 0..1ms`},
		{[]string{"-call-work", "0,2us"}, "-call-work 0,2µs: side by side the known-answer arm is -known's (2µs); -call-work is for -measure isolated"},
	} {
		_, err := parseFlags(tt.args, io.Discard)
		require.Error(t, err, tt.args)
		assert.Contains(t, err.Error(), tt.wantErr)
	}
	cmd, err = parseFlags([]string{"-modes", "inputQ,sharded", "-baseline", "sharded", "-seed", "12345"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "sharded", cmd.cfg.Baseline)
	assert.Equal(t, 12345, cmd.cfg.Seed, "a given seed is kept")
	cmd, err = parseFlags([]string{"-seed", "0"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 0, cmd.cfg.Seed, "zero is a seed like any other")
	cmd, err = parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Positive(t, cmd.cfg.Seed, "no -seed: one drawn from the clock")

	if runtime.NumCPU() >= 2 {
		cmd, err = parseFlags([]string{"-server-cpus", "1," + strconv.Itoa(runtime.NumCPU()), "-share-cpus"}, io.Discard)
		require.NoError(t, err, "every CPU for the server, the driver on them too: asked for")
		assert.True(t, cmd.cfg.ShareCPUs)
	}
	_, err = parseFlags([]string{"-h"}, io.Discard)
	assert.ErrorIs(t, err, flag.ErrHelp)
}

// TestCapacityFlags: -study capacity takes the study's defaults where a
// flag was not given, and a bad objective, ladder or study is a clear error
// (main exits 2 on any).
func TestCapacityFlags(t *testing.T) {
	cmd, err := capacityPlan([]string{"-study", "capacity"})
	require.NoError(t, err)
	require.NotNil(t, cmd.capacity)
	assert.Equal(t, "open", cmd.cfg.Model)
	assert.Equal(t, []string{"mutex", "inputQ", "inputQ-batch", "combining", "sharded", "noop"}, cmd.cfg.Modes)
	assert.Equal(t, float64(capacity.DefaultFloorMultiple), cmd.capacity.FloorMultiple, "the objective from the floor by default")
	assert.Zero(t, cmd.capacity.SLO, "set once the floor is measured")

	cmd, err = capacityPlan([]string{"-study", "capacity", "-modes", "mutex,inputQ", "-rates", "1000,2000", "-slo", "p99.9<=5ms"})
	require.NoError(t, err)
	assert.Equal(t, []string{"mutex", "inputQ"}, cmd.cfg.Modes, "a given flag is kept")
	assert.Equal(t, []int{1000, 2000}, cmd.capacity.Rates)

	cmd, err = parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Nil(t, cmd.capacity, "the comparison by default")
	assert.Nil(t, cmd.study, "the comparison by default")

	for _, tt := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"-study", "soak"}, `-study "soak": want list, index or one of the studies`},
		{[]string{"-study", "capacity", "-slo", "p99<1ms"}, `-slo "p99<1ms"`},
		{[]string{"-study", "capacity", "-rates", "5000,1000"}, "-rates"},
		{[]string{"-study", "capacity", "-steps", "10,,20"}, "-steps"},
		{[]string{"-study", "capacity", "-floor-multiple", "1"}, "-floor-multiple 1: want a multiple of the floor in (1, 100]"},
		{[]string{"-study", "capacity", "-floor-multiple", "2", "-slo", "p99<=5ms"}, "-slo and -floor-multiple: give one"},
	} {
		_, err := parseFlags(tt.args, io.Discard)
		require.Error(t, err, tt.args)
		assert.Contains(t, err.Error(), tt.wantErr)
	}
}

// capacityPlan is the one plan of the capacity study that args (-study
// capacity and more) ask for.
func capacityPlan(args []string) (command, error) {
	cmd, err := parseFlags(args, io.Discard)
	if err != nil {
		return command{}, err
	}
	if cmd.study == nil || len(cmd.study.plans) != 1 {
		return command{}, fmt.Errorf("%v: not one plan of a study", args)
	}
	return cmd.study.plans[0], nil
}
