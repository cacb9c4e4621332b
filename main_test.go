package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/server"
	"github.com/locklab/locklab/server/serve"
)

// This is the user's command end to end: the binary `go build` makes from
// this package, run as a process. What the command does once its flags are
// parsed is tested beside its code, in server/serve (in-process, and in
// processes for signals, exit statuses and kill -9); here what only the
// real binary has: flag parsing, its exit statuses, its build information
// and its signals.

// serverBin is the binary, built once by TestMain.
var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "locklab-main-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "main_test:", err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "locklab")
	if err := buildServer(serverBin); err != nil {
		fmt.Fprintln(os.Stderr, "main_test: building the server:", err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		_ = os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// buildServer builds this package into out; under `go test -race` with
// -race too, so that a race in the server's goroutines makes it exit 66.
func buildServer(out string) error {
	args := []string{"build", "-o", out}
	if raceEnabled() {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, ".")...) // go test puts its own go first in PATH
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// runBinary runs the binary to completion and returns its exit status, its
// stdout and its stderr. A binary that does not exit within a minute is
// killed and fails the test: these invocations must not hang.
func runBinary(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, serverBin, args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "locklab %q did not exit; stderr:\n%s", args, errOut.String())
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), out.String(), errOut.String()
	}
	require.NoError(t, err)
	return 0, out.String(), errOut.String()
}

var listeningRE = regexp.MustCompile(`^locklab: mode=(\S+) listening on (\S+)$`)

// TestCommand runs the binary as a user does.
func TestCommand(t *testing.T) {
	modes := "modes: " + server.ModeNames()
	t.Run("bad command lines exit 2", func(t *testing.T) {
		tests := []struct {
			name string
			args []string
			want []string // in stderr
		}{
			// flag's own errors print the usage, which lists the modes.
			{"unknown flag", []string{"-mode", "mutex", "-nosuch"}, []string{"flag provided but not defined: -nosuch", "modes:", "inputQ", "noop"}},
			{"bad flag value", []string{"-mode", "mutex", "-accounts", "many"}, []string{`invalid value "many" for flag -accounts`, "modes:"}},
			{"max inflight not a number", []string{"-mode", "mutex", "-max-inflight", "lots"}, []string{`invalid value "lots" for flag -max-inflight`, "modes:"}},
			{"max inflight a fraction", []string{"-mode", "inputQ", "-max-inflight", "1.5"}, []string{`invalid value "1.5" for flag -max-inflight`}},
			{"max calls not a number", []string{"-mode", "inputQ", "-max-calls", "few"}, []string{`invalid value "few" for flag -max-calls`}},
			{"negative max calls", []string{"-mode", "mutex", "-max-calls", "-2"}, []string{"-max-calls -2: want a count >= 0"}},
			{"negative call work", []string{"-mode", "mutex", "-call-work", "-2us"}, []string{"-call-work -2µs: want >= 0"}},
			{"require key not a header", []string{"-mode", "mutex", "-require-key", "x key"}, []string{`-require-key "x key": want a header name`}},
			{"extra argument", []string{"-mode", "mutex", "extra"}, []string{`unexpected arguments ["extra"]`, modes}},
			// The checks past parsing (server/serve) reach the user too.
			{"no mode", nil, []string{"no mode given", modes}},
			{"bad scenario", []string{"-mode", "mutex", "-scenario", "Z"}, []string{`-scenario "Z": want A, B or C`}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				code, stdout, stderr := runBinary(t, tt.args...)
				assert.Equal(t, 2, code, "exit status; stderr:\n%s", stderr)
				for _, w := range tt.want {
					assert.Contains(t, stderr, w)
				}
				assert.Empty(t, stdout)
				assert.NotContains(t, stderr, "listening on", "a bad command line must not start a server")
			})
		}
	})
	t.Run("help", func(t *testing.T) {
		// Every option has its flag: as many flags in -help as fields in
		// serve.Options.
		options := reflect.TypeFor[serve.Options]().NumField()
		for _, arg := range []string{"-h", "-help", "--help"} {
			code, _, stderr := runBinary(t, arg)
			assert.Equal(t, 0, code, "exit status; stderr:\n%s", stderr)
			var head strings.Builder
			serve.PrintUsage(&head)
			assert.True(t, strings.HasPrefix(stderr, head.String()), "the modes, then the flags:\n%s", stderr)
			flags := regexp.MustCompile(`(?m)^  -[a-z-]+`).FindAllString(stderr, -1)
			assert.Len(t, flags, options, "flags in -help:\n%s", stderr)
		}
	})
	t.Run("version", func(t *testing.T) {
		for _, args := range [][]string{{"-version"}, {"-version", "-mode", "nosuch"}} {
			code, stdout, stderr := runBinary(t, args...)
			require.Equal(t, 0, code, "stderr: %s", stderr)
			assert.Regexp(t, `^locklab \S+ .*go1\.\d+.*\n$`, stdout)
			assert.Empty(t, stderr)
		}
	})
	t.Run("list modes", func(t *testing.T) {
		code, stdout, stderr := runBinary(t, "-list-modes")
		require.Equal(t, 0, code, stderr)
		var want strings.Builder
		serve.ListModes(&want, server.DurabilityNone, server.BackendMemory)
		assert.Equal(t, want.String(), stdout)
	})
	t.Run("list modes over a database", func(t *testing.T) {
		code, stdout, stderr := runBinary(t, "-list-modes", "-backend", "mysql")
		require.Equal(t, 0, code, stderr)
		var want strings.Builder
		serve.ListModes(&want, server.DurabilityNone, server.BackendMySQL)
		assert.Equal(t, want.String(), stdout)
		assert.Contains(t, stdout, "db-rowlock bank\n")
	})
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run("serves until "+sig.String(), func(t *testing.T) { serveUntil(t, sig) })
	}
}

// serveUntil starts the binary on a free port, finds it from its listening
// line, makes a call, sends sig, and requires status 0 within the grace,
// with nothing printed but the listening and stopped lines.
func serveUntil(t *testing.T, sig syscall.Signal) {
	const mode = "inputQ"
	cmd := exec.Command(serverBin, "-mode", mode, "-addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	var lines []string
	listening := make(chan string, 1)
	go func() { // joined through exited
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				listening <- m[2]
			}
		}
		exited <- cmd.Wait() // after the reads, as exec requires
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // harmless once it has exited
	})
	var addr string
	select {
	case addr = <-listening:
	case err := <-exited:
		t.Fatalf("exited before listening: %v; stderr:\n%s", err, strings.Join(lines, "\n"))
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("no listening line; stderr:\n%s", strings.Join(lines, "\n"))
	}

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := pb.NewCounterServiceClient(conn).Increment(ctx, &pb.IncrementRequest{Delta: 5})
	require.NoError(t, err)
	assert.Equal(t, int64(5), r.GetValue())
	require.NoError(t, conn.Close())

	require.NoError(t, cmd.Process.Signal(sig))
	select {
	case err := <-exited:
		require.NoError(t, err, "exit status after %v; stderr:\n%s", sig, strings.Join(lines, "\n"))
	case <-time.After(serve.Defaults().Grace + 5*time.Second):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("no exit after %v; stderr:\n%s", sig, strings.Join(lines, "\n"))
	}
	assert.Equal(t, []string{
		fmt.Sprintf("locklab: mode=%s listening on %s", mode, addr),
		fmt.Sprintf("locklab: mode=%s stopped", mode),
	}, lines)
}
