package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/cgroup"
	"github.com/locklab/locklab/internal/lab/duet"
	"github.com/locklab/locklab/internal/lab/run"
)

// duetTestWarmup is the side-by-side tests' warm-up: the Go driver takes
// its first mark at the warm-up's end, and a driver not yet reading its
// stdin then takes it late (its window starts after the servers'); on a
// CI machine crowded by every package's tests a driver took longer than
// 200 ms to start reading.
const duetTestWarmup = "1s"

// TestDuetEndToEnd runs a small side-by-side comparison for real: two
// groups (the Go driver and h2load on the counter), each round four fresh
// servers (mutex, its A/A twin, the known-answer arm, inputQ) in CPU groups
// of their own, and checks what every round recorded, that the report says
// what it measured, that -rerender rebuilds it from the rounds, and that
// no CPU group is left behind.
func TestDuetEndToEnd(t *testing.T) {
	server, k6, loadBin := binaries(t)
	out := t.TempDir()
	cmd, err := parseFlags([]string{
		"-measure", "duet", "-driver", "go,h2load", "-workloads", "counter", "-modes", "mutex,inputQ", "-vus", "3", "-h2load-vus", "8",
		"-warmup", duetTestWarmup, "-reps", "3", "-precision", "0", "-seed", "5", "-duet-metrics", "calls/s,CPU/call,p99",
		"-max-foreign", "100%", // tests run beside each other; the gate's own tests are the duet package's
		"-server", server, "-k6", k6, "-load", loadBin, "-h2load", h2loadBinary(t), "-scripts", "../../k6", "-out", out,
	}, os.Stderr)
	require.NoError(t, err)
	assert.Equal(t, duetWindow, cmd.cfg.Duration, "a round's window is duetWindow unless -duration")
	cmd.cfg.Command = "compare (duet test)"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var progress strings.Builder
	require.NoError(t, cmd.run(ctx, &progress, &progress), progress.String())
	p := progress.String()
	assert.Contains(t, p, "side by side: 2 groups of 4 to 4 arms")
	assert.Contains(t, p, "round 3 · counter · h2load · 8:")

	f, err := os.Open(filepath.Join(out, "rounds.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	var rounds []duet.Round
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rd duet.Round
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rd))
		rounds = append(rounds, rd)
	}
	require.Len(t, rounds, 6, "3 rounds of 2 groups")
	for _, rd := range rounds {
		require.Len(t, rd.Arms, 4, rd.Group)
		window := duetWindow.Seconds()
		if strings.Contains(rd.Group, "· h2load ·") {
			window = duetH2loadWindow.Seconds()
		}
		assert.ElementsMatch(t, []string{"mutex", "mutex (A/A)", "mutex +2µs", "inputQ"}, rd.Order)
		for _, m := range rd.Arms {
			assert.Empty(t, m.Failed, "%s round %d %s", rd.Group, rd.Index, m.Arm)
			assert.Positive(t, m.Requests, m.Arm)
			assert.Equal(t, m.Requests, m.Writes, "every Increment may change state: %s", m.Arm)
			// Equal weights, a fair share of one CPU over 4 arms; or, where
			// the probe found the group's drivers could not keep up under
			// weights (a slow machine), the fallback's equal quotas.
			share := 0.25
			if strings.Contains(p, "probe, "+rd.Group+": its drivers could not keep up under equal weights") {
				share = run.DefaultShare / 4
			}
			assert.InDelta(t, share, m.Quota, 1e-9, "%s: each arm's share of the server CPU", rd.Group)
			// The runner sleeps the group's window between its two
			// readings: the servers' clocks can see no less, and more only
			// when the runner was slow to read them (a busy machine).
			assert.GreaterOrEqual(t, m.Window, window-0.05, "the servers' own clocks measured the window")
			assert.Less(t, m.Window, window+2, "the servers' own clocks measured the window")
			assert.Positive(t, m.CPU, m.Arm)
			assert.LessOrEqual(t, m.Util(), 1.5, "the weights held: %s used %.2f of its fair share", m.Arm, m.Util())
			assert.Positive(t, m.DriverCPU, m.Arm)
			assert.Positive(t, m.Wakeups, "the server's threads ran: %s", m.Arm)
			assert.Positive(t, m.Syscalls, "the server read and wrote its connections: %s", m.Arm)
			assert.Positive(t, m.P99, "its callers' p99 over the window: %s", m.Arm)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(out, "forest.svg"))
	for _, want := range []string{"Measured side by side (duet)", "](forest.svg)", "## Calibration", "| counter · go · 3 |", "| counter · h2load · 8 |", "mutex +2µs", "too few blocks for a verdict (n=3)", "## How a call's CPU was spent",
		"| A/A p99 |", "on the callers' p99 latency", "| inputQ | p99 |"} {
		assert.Contains(t, string(md), want)
	}
	// The rounds table: every round kept, and what a round took.
	assert.Regexp(t, `\| counter · h2load · 8 \| 3 \| \d+\.\d\d s \| 0 \|`, string(md))
	// The setup names the machine: the same plan can answer differently on
	// another CPU model.
	release, err := os.ReadFile("/proc/sys/kernel/osrelease")
	require.NoError(t, err)
	assert.Regexp(t, regexp.QuoteMeta("- the machine: ")+`[^\n]+`+regexp.QuoteMeta(fmt.Sprintf(", %d CPUs, Linux %s (", runtime.NumCPU(), strings.TrimSpace(string(release)))), string(md))
	assert.Contains(t, string(md), "scheduled SCHED_BATCH", "the servers run under batch by default, and the setup says so")
	require.NoError(t, os.Remove(filepath.Join(out, "report.md")))
	again, err := parseFlags([]string{"-rerender", out}, os.Stderr)
	require.NoError(t, err)
	require.NoError(t, again.run(ctx, io.Discard, io.Discard))
	re, err := os.ReadFile(filepath.Join(out, "report.md"))
	require.NoError(t, err)
	assert.Equal(t, string(md), string(re), "-rerender rebuilds the report from the rounds")

	noGroupLeft(t)
}

func itoa(n int) string { return strconv.Itoa(n) }

// noGroupLeft checks that no CPU group this test process's runner made is
// left behind.
func noGroupLeft(t *testing.T) {
	t.Helper()
	c, err := cgroup.Open("/sys/fs/cgroup")
	require.NoError(t, err)
	for _, g := range c.Leftovers() {
		assert.NotContains(t, g, "-"+itoa(os.Getpid())+"-", "no CPU group of this runner is left")
	}
}

// TestDuetTurnsEndToEnd runs a small comparison with the arms taking the
// server CPU in turns: every arm held it for about its share of the
// window and its rates are per second of its own turns, the report's
// setup says so, and no server is left stopped or CPU group behind.
func TestDuetTurnsEndToEnd(t *testing.T) {
	server, k6, loadBin := binaries(t)
	out := t.TempDir()
	runCompare(t,
		"-measure", "duet", "-duet-cpu", "turns", "-duet-turn", "2ms", "-driver", "go", "-workloads", "counter", "-modes", "mutex", "-vus", "3",
		"-warmup", duetTestWarmup, "-reps", "2", "-precision", "0", "-seed", "5", "-max-foreign", "100%",
		"-server", server, "-k6", k6, "-load", loadBin, "-scripts", "../../k6", "-out", out,
	)
	b, err := os.ReadFile(filepath.Join(out, "rounds.jsonl"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 2)
	for _, l := range lines {
		var rd duet.Round
		require.NoError(t, json.Unmarshal([]byte(l), &rd))
		require.Len(t, rd.Arms, 3, "mutex, its twin, the known arm")
		for _, m := range rd.Arms {
			assert.Empty(t, m.Failed, m.Arm)
			// Three arms in turns over a window of about duetWindow.
			assert.Greater(t, m.Held, 0.15, "%s held the CPU for its turns", m.Arm)
			assert.Less(t, m.Held, 0.6*m.Window, "%s held it only in its turns", m.Arm)
			assert.InDelta(t, float64(m.Requests)/m.Held, m.CallsPerSec(), 1e-6, "per second of its turns")
			assert.GreaterOrEqual(t, m.Quota, 1.0, "the whole set, for the time it held it")
			assert.Zero(t, m.P99, "no tail is judged under turns")
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "in turns of 2ms")
	assert.Contains(t, string(md), "at the start of its own turn")
	noGroupLeft(t)
}

// TestDuetFlagsExitTwo: a bad -measure, quota share, known spin, CPU
// sharing, turn, scheduling, slice, round length or precision stops the runner with a
// message and exit status 2, before anything runs; the control is a good
// line, which parses.
func TestDuetFlagsExitTwo(t *testing.T) {
	_, err := parseFlags([]string{"-measure", "duet"}, io.Discard)
	require.NoError(t, err, "the control")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-measure", "both"}, "-measure"},
		{[]string{"-server-share", "0"}, "-server-share"},
		{[]string{"-server-share", "1.5"}, "-server-share"},
		{[]string{"-known", "-1us"}, "-known"},
		{[]string{"-duet-cpu", "shares"}, "-duet-cpu"},
		{[]string{"-duet-sched", "fifo"}, "-duet-sched"},
		{[]string{"-duet-slice", "50us"}, "-duet-slice"},
		{[]string{"-duet-slice", "1s"}, "-duet-slice"},
		{[]string{"-duet-slice", "long"}, "-duet-slice"},
		{[]string{"-duet-slice", "-1ms"}, "-duet-slice"},
		{[]string{"-duration", "100ms"}, "-duration"},
		{[]string{"-measure", "isolated", "-duration", "500ms"}, "-duration"},
		{[]string{"-precision", "80%"}, "-precision"},
		{[]string{"-duet-metrics", "calls/s,p98"}, "-duet-metrics"},
		{[]string{"-duet-cpu", "turns", "-duet-turn", "100us"}, "-duet-turn"},
		{[]string{"-duet-cpu", "turns", "-duet-turn", "1s"}, "-duet-turn"},
		{[]string{"-duet-turn", "2ms"}, "-duet-turn"},
		{[]string{"-duet-cpu", "turns", "-duet-metrics", "calls/s,p99"}, "judge p99 with -duet-cpu weight"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := parseFlags(tt.args, io.Discard)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	cmd := exec.Command(os.Args[0], "-measure", "both")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	outb, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", outb)
	assert.Equal(t, 2, ee.ExitCode())
	assert.Contains(t, string(outb), `-measure "both"`)
	assert.Equal(t, run.MeasureDuet, run.Measures[0], "duet is the default where it applies")
}

// TestDuetPrecisionLooksAgain: side by side, -precision adds rounds and
// looks again after they ran, as far as -max-blocks: with a target no 3
// rounds reach, the runner asks after 3 rounds and again after the rounds
// it added, and stops at the most.
func TestDuetPrecisionLooksAgain(t *testing.T) {
	server, _, loadBin := binaries(t)
	out := t.TempDir()
	progress := runCompare(t,
		"-measure", "duet", "-driver", "go", "-workloads", "counter", "-modes", "mutex,inputQ", "-vus", "2",
		"-warmup", duetTestWarmup, "-duration", "250ms", "-reps", "3", "-precision", "0.1%", "-max-blocks", "5", "-aa=false", "-known", "0",
		"-max-foreign", "100%", "-server", server, "-load", loadBin, "-out", out,
	)
	assert.Contains(t, progress, "precision: counter · go · 2 after 3 rounds")
	assert.Contains(t, progress, "precision: counter · go · 2 after 5 rounds")
	assert.Contains(t, progress, "round 5 · counter · go · 2:")
	assert.NotContains(t, progress, "round 6 ·", "-max-blocks bounds the rounds")
}

// TestDuetWindowByDriver: side by side, a group h2load drives measures a
// longer window than one the Go driver drives, unless -duration sets every
// group's; isolated runs keep -duration's meaning.
func TestDuetWindowByDriver(t *testing.T) {
	cmd, err := parseFlags([]string{"-measure", "duet"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, duetWindow, cmd.cfg.Duration)
	assert.Equal(t, map[string]time.Duration{"h2load": duetH2loadWindow}, cmd.cfg.Duet.Windows)
	assert.Greater(t, duetH2loadWindow, duetWindow)

	cmd, err = parseFlags([]string{"-measure", "duet", "-duration", "3s"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 3*time.Second, cmd.cfg.Duration)
	assert.Nil(t, cmd.cfg.Duet.Windows, "-duration given: every group's window")

	cmd, err = parseFlags([]string{"-measure", "isolated"}, io.Discard)
	require.NoError(t, err)
	assert.Nil(t, cmd.cfg.Duet.Windows, "isolated: -duration is every run's")
}
