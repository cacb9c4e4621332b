package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/load"
	"github.com/locklab/locklab/server"
	"github.com/locklab/locklab/summary"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The driver collects garbage at load.GCPercent, unless GOGC says
// otherwise (the control: the target stays).
func TestSetGC(t *testing.T) {
	restore := debug.SetGCPercent(100)
	defer debug.SetGCPercent(restore)
	setGC(func(string) (string, bool) { return "", false })
	assert.Equal(t, load.GCPercent, debug.SetGCPercent(100))
	setGC(func(k string) (string, bool) { return "50", k == "GOGC" })
	assert.Equal(t, 100, debug.SetGCPercent(100), "GOGC set: left to the runtime")
}

func TestBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"-workload", "queue"}, `workload "queue"`},
		{[]string{"-model", "half"}, `model "half"`},
		{[]string{"-callers", "0"}, "callers 0"},
		{[]string{"-skew", "1.2"}, "skew 1.2"},
		{[]string{"-read-ratio", "2"}, "read ratio 2"},
		{[]string{"-scenario", "D"}, `scenario "D"`},
		{[]string{"-workload", "bank", "-mix", "transfer:1", "-read-ratio", "0.5"}, "give one"},
		{[]string{"-model", "open", "-rate", "0"}, "rate 0"},
		{[]string{"-duration", "soon"}, "invalid value"},
		{[]string{"-nosuch"}, "not defined"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-window-stdin", "-model", "open"}, "marked window"},
		{[]string{"-window-stdin", "-timeline", "100ms"}, "marked window"},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		err := run(t.Context(), tt.args, nil, &bytes.Buffer{}, &stderr)
		assert.ErrorIs(t, err, errUsage, "%v", tt.args)
		assert.Contains(t, stderr.String(), tt.want, "%v", tt.args)
	}
	var stderr bytes.Buffer
	assert.ErrorIs(t, run(t.Context(), []string{"-h"}, nil, &bytes.Buffer{}, &stderr), flag.ErrHelp)
	assert.Contains(t, stderr.String(), "-read-ratio")
}

func startServer(t *testing.T) string {
	t.Helper()
	srv, err := server.New(server.Config{Mode: "mutex"})
	require.NoError(t, err)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		srv.Stop(ctx)
		assert.NoError(t, <-served)
	})
	return lis.Addr().String()
}

func TestRunWritesSummary(t *testing.T) {
	addr := startServer(t)
	out := filepath.Join(t.TempDir(), "bank.json")
	short := []string{"-addr", addr, "-callers", "2", "-warmup", "50ms", "-duration", "300ms"}

	var stderr bytes.Buffer
	err := run(t.Context(), append(short, "-workload", "bank", "-scenario", "B", "-reset", "-out", out), nil, &bytes.Buffer{}, &stderr)
	require.NoError(t, err, stderr.String())
	s, err := summary.Read(out)
	require.NoError(t, err)
	assert.Equal(t, "B", s.Scenario)
	assert.Positive(t, s.Calls)
	assert.Contains(t, stderr.String(), "calls/s")

	// Without -out the summary goes to stdout.
	var stdout bytes.Buffer
	require.NoError(t, run(t.Context(), append(short, "-workload", "counter", "-model", "open", "-rate", "200"), nil, &stdout, &bytes.Buffer{}))
	s, err = summary.Parse(stdout.Bytes())
	require.NoError(t, err)
	assert.Equal(t, "open", s.Model)

	// The bank is still in scenario B; a run that expects A (no refusal
	// allowed) counts the refusals as unexpected, writes its summary and
	// fails.
	err = run(t.Context(), append(short, "-workload", "bank", "-mix", "transfer:1", "-scenario", "A", "-out", out), nil, &bytes.Buffer{}, &bytes.Buffer{})
	require.ErrorIs(t, err, errUnexpected)
	assert.False(t, errors.Is(err, errUsage), "a run that happened exits 1, not 2")
	s, err = summary.Read(out)
	require.NoError(t, err)
	assert.Positive(t, s.UnexpectedErrors)
}

// Interrupted (as by SIGINT), a run still writes the summary of what ran and
// fails.
func TestRunInterruptedWritesSummary(t *testing.T) {
	addr := startServer(t)
	out := filepath.Join(t.TempDir(), "s.json")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stop := time.AfterFunc(500*time.Millisecond, cancel)
	defer stop.Stop()
	err := run(ctx, []string{"-addr", addr, "-callers", "2", "-warmup", "0s", "-duration", "10s", "-out", out}, nil, &bytes.Buffer{}, &bytes.Buffer{})
	require.ErrorIs(t, err, load.ErrInterrupted)
	s, err := summary.Read(out)
	require.NoError(t, err)
	assert.Positive(t, s.Calls)
	assert.Less(t, s.DurationS, 1.0)
	assert.Zero(t, s.UnexpectedErrors)
}

// marksPipe is a driver's stdin as the runner gives it: a pipe, with the
// kernel's buffer. Both ends close when the test ends.
func marksPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func mark(t *testing.T, w *os.File) {
	t.Helper()
	_, err := w.WriteString("\n")
	require.NoError(t, err)
}

// runMarked runs a marked window of up to 30 s (1500 ms if short) on stdin.
func runMarked(ctx context.Context, addr string, stdin *os.File, out string, short bool) <-chan error {
	bound := "30s"
	if short {
		bound = "1500ms"
	}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", addr, "-callers", "2", "-warmup", "0s", "-duration", bound, "-window-stdin", "-out", out}, stdin, &bytes.Buffer{}, &bytes.Buffer{})
	}()
	return done
}

// -window-stdin: two lines mark the window; the summary covers the time
// between them, not -duration. The first is written before the run reads
// its input, as a runner whose driver is slow to start writes it: the
// pipe keeps it (a signal sent before the driver listened was lost).
//
// The window is read against the test's own instants, not the time slept
// between the marks: the run reads the first mark once it has started,
// which on a loaded machine may be well after it was written.
func TestWindowStdin(t *testing.T) {
	addr := startServer(t)
	out := filepath.Join(t.TempDir(), "s.json")
	r, w := marksPipe(t)
	first := time.Now()
	mark(t, w)
	done := runMarked(t.Context(), addr, r, out, true)
	time.Sleep(400 * time.Millisecond)
	mark(t, w)
	require.NoError(t, <-done)
	took := time.Since(first)
	s, err := summary.Read(out)
	require.NoError(t, err)
	assert.Positive(t, s.DurationS)
	assert.LessOrEqual(t, s.DurationS, took.Seconds(), "the window lies between the marks")
	assert.Less(t, s.DurationS, 1.0, "the window is the marks', not the run's 1500 ms")
	assert.Positive(t, s.Calls)
}

// -window-stdin, its input closed right after the second mark, as the
// runner ends its drivers: the second mark is the run's before the end
// is, every time, and the run succeeds.
func TestWindowStdinThenEnd(t *testing.T) {
	addr := startServer(t)
	for i := range 15 {
		out := filepath.Join(t.TempDir(), "s.json")
		r, w := marksPipe(t)
		done := runMarked(t.Context(), addr, r, out, false)
		first := time.Now()
		mark(t, w)
		time.Sleep(50 * time.Millisecond)
		mark(t, w)
		require.NoError(t, w.Close())
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("run %d: the end of stdin did not stop the run", i)
		}
		require.NoError(t, err, "run %d", i)
		s, err := summary.Read(out)
		require.NoError(t, err)
		assert.Positive(t, s.DurationS, "run %d", i)
		assert.Less(t, s.DurationS, time.Since(first).Seconds(), "run %d: the window lies between the marks", i)
	}
}

// -window-stdin, interrupted (or its input ended) once both marks came:
// the run stops at once, its summary covers the marked window, and it
// succeeds; interrupted or ended between the marks (the controls), it
// fails, with no window measured, and says why.
func TestWindowStdinThenInterrupt(t *testing.T) {
	addr := startServer(t)
	for _, tt := range []struct {
		marks int
		end   bool // close stdin rather than interrupt
		want  string
	}{{2, false, ""}, {2, true, ""}, {1, false, "context canceled"}, {1, true, "stdin"}} {
		out := filepath.Join(t.TempDir(), "s.json")
		ctx, cancel := context.WithCancel(t.Context())
		r, w := marksPipe(t)
		done := runMarked(ctx, addr, r, out, false)
		first := time.Now()
		for i := range tt.marks {
			if i > 0 {
				time.Sleep(400 * time.Millisecond)
			}
			mark(t, w)
		}
		time.Sleep(100 * time.Millisecond)
		if tt.end {
			require.NoError(t, w.Close())
		} else {
			cancel()
		}
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%+v: the run did not stop", tt)
		}
		cancel()
		if tt.marks == 1 {
			require.ErrorIs(t, err, load.ErrUnmarked, "the control: ended between the marks")
			assert.ErrorContains(t, err, tt.want)
			continue
		}
		require.NoError(t, err, "%+v", tt)
		s, err := summary.Read(out)
		require.NoError(t, err)
		// The test's own instants bound the window (the time slept
		// between the marks does not: the run reads the first mark once
		// it has started, on a loaded machine well after it was written).
		assert.Positive(t, s.DurationS, "%+v", tt)
		assert.Less(t, s.DurationS, time.Since(first).Seconds(), "%+v: the window lies between the marks", tt)
		assert.Positive(t, s.Calls)
	}
}
