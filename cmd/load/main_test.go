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
	"syscall"
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
		{[]string{"-window-signal", "-model", "open"}, "marked window"},
		{[]string{"-window-signal", "-timeline", "100ms"}, "marked window"},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		err := run(t.Context(), tt.args, &bytes.Buffer{}, &stderr)
		assert.ErrorIs(t, err, errUsage, "%v", tt.args)
		assert.Contains(t, stderr.String(), tt.want, "%v", tt.args)
	}
	var stderr bytes.Buffer
	assert.ErrorIs(t, run(t.Context(), []string{"-h"}, &bytes.Buffer{}, &stderr), flag.ErrHelp)
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
	err := run(t.Context(), append(short, "-workload", "bank", "-scenario", "B", "-reset", "-out", out), &bytes.Buffer{}, &stderr)
	require.NoError(t, err, stderr.String())
	s, err := summary.Read(out)
	require.NoError(t, err)
	assert.Equal(t, "B", s.Scenario)
	assert.Positive(t, s.Calls)
	assert.Contains(t, stderr.String(), "calls/s")

	// Without -out the summary goes to stdout.
	var stdout bytes.Buffer
	require.NoError(t, run(t.Context(), append(short, "-workload", "counter", "-model", "open", "-rate", "200"), &stdout, &bytes.Buffer{}))
	s, err = summary.Parse(stdout.Bytes())
	require.NoError(t, err)
	assert.Equal(t, "open", s.Model)

	// The bank is still in scenario B; a run that expects A (no refusal
	// allowed) counts the refusals as unexpected, writes its summary and
	// fails.
	err = run(t.Context(), append(short, "-workload", "bank", "-mix", "transfer:1", "-scenario", "A", "-out", out), &bytes.Buffer{}, &bytes.Buffer{})
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
	err := run(ctx, []string{"-addr", addr, "-callers", "2", "-warmup", "0s", "-duration", "10s", "-out", out}, &bytes.Buffer{}, &bytes.Buffer{})
	require.ErrorIs(t, err, load.ErrInterrupted)
	s, err := summary.Read(out)
	require.NoError(t, err)
	assert.Positive(t, s.Calls)
	assert.Less(t, s.DurationS, 1.0)
	assert.Zero(t, s.UnexpectedErrors)
}

// -window-signal: two SIGUSR1s mark the window; the summary covers the time
// between them, not -duration.
func TestWindowSignal(t *testing.T) {
	addr := startServer(t)
	out := filepath.Join(t.TempDir(), "s.json")
	done := make(chan error, 1)
	go func() {
		done <- run(t.Context(), []string{"-addr", addr, "-callers", "2", "-warmup", "0s", "-duration", "1500ms", "-window-signal", "-out", out}, &bytes.Buffer{}, &bytes.Buffer{})
	}()
	time.Sleep(400 * time.Millisecond) // run catches SIGUSR1 from its first line
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGUSR1))
	time.Sleep(400 * time.Millisecond)
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGUSR1))
	require.NoError(t, <-done)
	s, err := summary.Read(out)
	require.NoError(t, err)
	assert.InDelta(t, 0.4, s.DurationS, 0.05)
	assert.Positive(t, s.Calls)
}

// -window-signal, ended by SIGTERM right after the second SIGUSR1, as the
// runner ends its drivers: the second mark is the run's before the
// interruption is, every time, and the run succeeds.
func TestWindowSignalThenTerm(t *testing.T) {
	addr := startServer(t)
	for i := range 15 {
		out := filepath.Join(t.TempDir(), "s.json")
		done := make(chan error, 1)
		go func() {
			done <- run(t.Context(), []string{"-addr", addr, "-callers", "2", "-warmup", "0s", "-duration", "30s", "-window-signal", "-out", out}, &bytes.Buffer{}, &bytes.Buffer{})
		}()
		time.Sleep(300 * time.Millisecond) // run catches its signals from its first line
		first := time.Now()
		require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGUSR1))
		time.Sleep(50 * time.Millisecond)
		require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGUSR1))
		require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("run %d: SIGTERM did not stop the run", i)
		}
		require.NoError(t, err, "run %d", i)
		s, err := summary.Read(out)
		require.NoError(t, err)
		assert.Positive(t, s.DurationS, "run %d", i)
		assert.Less(t, s.DurationS, time.Since(first).Seconds(), "run %d: the window lies between the marks", i)
	}
}

// -window-signal, interrupted once both marks came (the runner ends its
// drivers so once it has read the window): the run stops at once, its
// summary covers the marked window, and it succeeds; interrupted between
// the marks (the control), it fails, with no window measured.
func TestWindowSignalThenInterrupt(t *testing.T) {
	addr := startServer(t)
	for _, after := range []int{2, 1} {
		out := filepath.Join(t.TempDir(), "s.json")
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, []string{"-addr", addr, "-callers", "2", "-warmup", "0s", "-duration", "30s", "-window-signal", "-out", out}, &bytes.Buffer{}, &bytes.Buffer{})
		}()
		time.Sleep(400 * time.Millisecond) // run catches SIGUSR1 from its first line
		for i := range after {
			if i > 0 {
				time.Sleep(400 * time.Millisecond)
			}
			require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGUSR1))
		}
		time.Sleep(100 * time.Millisecond)
		cancel()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("after %d marks: the interrupted run did not stop", after)
		}
		if after == 1 {
			assert.ErrorIs(t, err, load.ErrUnmarked, "the control: interrupted between the marks")
			continue
		}
		require.NoError(t, err)
		s, err := summary.Read(out)
		require.NoError(t, err)
		assert.InDelta(t, 0.4, s.DurationS, 0.05)
		assert.Positive(t, s.Calls)
	}
}
