package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/server"
)

// exitBudget is how long the server may take to exit after SIGINT/SIGTERM
// (docs/design.md §the-server: GracefulStop with a deadline, then exit 0).
const exitBudget = 10 * time.Second

// serverBin is the server binary, built once by TestMain for the tests that
// run it as a process (exit statuses and signals only exist there).
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

// buildServer builds this package into out. Under `go test -race` the server
// is built with -race too, so that the load tests also check the server's
// own goroutines (a race there makes it exit 66, which the tests see).
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

// runBinary runs the server to completion and returns its exit status and
// everything it printed. A server that does not exit within a minute is
// killed and fails the test: these invocations must not hang.
func runBinary(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, serverBin, args...).CombinedOutput()
	require.NoError(t, ctx.Err(), "locklab %q did not exit; output:\n%s", args, out)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err)
	}
	if exit != nil {
		return exit.ExitCode(), string(out)
	}
	return 0, string(out)
}

func TestUsageErrors(t *testing.T) {
	modes := "modes: " + server.ModeNames()
	for _, seed := range []string{"mutex", "inputQ", "noop"} { // the seed's two designs and the ceiling stay
		require.Contains(t, modes, seed)
	}
	tests := []struct {
		name string
		args []string
		want []string // in the output
	}{
		{"no mode", nil, []string{"no mode given", modes}},
		{"unknown mode", []string{"-mode", "nosuch"}, []string{`unknown mode "nosuch"`, modes}},
		{"question mark", []string{"-mode", "?"}, []string{`unknown mode "?"`, modes}},
		{"mode in wrong case", []string{"-mode", "inputq"}, []string{`unknown mode "inputq"`, modes}},
		{"extra argument", []string{"-mode", "mutex", "extra"}, []string{`unexpected arguments ["extra"]`, modes}},
		// The mode is checked first, so a bad flag without -mode still
		// names the modes...
		{"bad scenario, no mode", []string{"-scenario", "Z"}, []string{modes}},
		{"zero accounts, no mode", []string{"-accounts", "0"}, []string{modes}},
		// ...and with a good mode the message names the flag at fault.
		{"bad scenario", []string{"-mode", "mutex", "-scenario", "Z"}, []string{`-scenario "Z": want A, B or C`}},
		{"zero accounts", []string{"-mode", "inputQ", "-accounts", "0"}, []string{"-accounts 0: want 1..1000000"}},
		{"too many accounts", []string{"-mode", "inputQ", "-accounts", "1000001"}, []string{"-accounts 1000001: want 1..1000000"}},
		{"zero balance", []string{"-mode", "mutex", "-balance", "0"}, []string{"-balance 0: want > 0"}},
		{"sample not a power of two", []string{"-mode", "mutex", "-sample-every", "3"}, []string{"power of two"}},
		// flag's own errors print the usage, which lists the modes.
		{"unknown flag", []string{"-mode", "mutex", "-nosuch"}, []string{"flag provided but not defined: -nosuch", "modes:", "inputQ", "noop"}},
		{"bad flag value", []string{"-mode", "mutex", "-accounts", "many"}, []string{`invalid value "many" for flag -accounts`, "modes:"}},
		{"negative queue size", []string{"-mode", "inputQ", "-queue-size", "-1"}, []string{"-queue-size -1: want >= 0"}},
		{"negative shards", []string{"-mode", "sharded", "-shards", "-2"}, []string{"-shards -2: want >= 0"}},
		{"negative batch limit", []string{"-mode", "inputQ-batch", "-batch-limit", "-3"}, []string{"-batch-limit -3: want >= 0"}},
		{"negative max inflight", []string{"-mode", "mutex", "-max-inflight", "-1"}, []string{"-max-inflight -1: want a count >= 0 (0: no bound)"}},
		{"max inflight not a number", []string{"-mode", "mutex", "-max-inflight", "lots"}, []string{`invalid value "lots" for flag -max-inflight`, "modes:"}},
		{"max inflight a fraction", []string{"-mode", "inputQ", "-max-inflight", "1.5"}, []string{`invalid value "1.5" for flag -max-inflight`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := runBinary(t, tt.args...)
			assert.Equal(t, 2, code, "exit status; output:\n%s", out)
			for _, w := range tt.want {
				assert.Contains(t, out, w)
			}
			assert.NotContains(t, out, "listening on", "a bad command line must not start a server")
		})
	}
}

func TestHelp(t *testing.T) {
	for _, arg := range []string{"-h", "-help", "--help"} {
		t.Run(arg, func(t *testing.T) {
			code, out := runBinary(t, arg)
			assert.Equal(t, 0, code, "exit status; output:\n%s", out)
			assert.Contains(t, out, "usage: locklab -mode MODE")
			require.NotEmpty(t, server.Modes())
			for _, m := range server.Modes() {
				assert.Regexp(t, `(?m)^\s+`+regexp.QuoteMeta(m.Name)+`\s+`+regexp.QuoteMeta(m.Doc)+`$`, out, "mode %s and its doc", m.Name)
			}
			for _, f := range []string{"-mode", "-addr", "-accounts", "-balance", "-scenario", "-grace", "-queue-size", "-batch-limit", "-shards", "-list-modes"} {
				assert.Contains(t, out, f)
			}
		})
	}
}

// serverProc is a server binary running in the background.
type serverProc struct {
	cmd  *exec.Cmd
	addr string // where it listens, from its stderr

	exited  chan struct{} // closed once stderr is drained and the process reaped
	waitErr error         // set before exited closes

	mu    sync.Mutex // guards lines
	lines []string   // stderr, one entry per line
}

var listeningRE = regexp.MustCompile(`^locklab: mode=(\S+) listening on (\S+)$`)

// startServer starts the binary with args and waits for its listening line.
// The test's cleanup kills it if it still runs.
func startServer(t *testing.T, mode string, args ...string) *serverProc {
	t.Helper()
	p := &serverProc{
		cmd:    exec.Command(serverBin, append([]string{"-mode", mode}, args...)...),
		exited: make(chan struct{}),
	}
	stderr, err := p.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	listening := make(chan string, 1)
	go func() { // owned by p: joined through exited (the cleanup waits)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.lines = append(p.lines, line)
			p.mu.Unlock()
			// Recovery may report a torn tail it cut before the server listens.
			if m := listeningRE.FindStringSubmatch(line); m != nil && m[1] == mode {
				listening <- m[2]
			}
		}
		p.waitErr = p.cmd.Wait() // after the reads, as exec requires
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	select {
	case p.addr = <-listening:
	case <-p.exited:
		t.Fatalf("locklab -mode %s exited before listening (%v); stderr:\n%s", mode, p.waitErr, p.stderr())
	case <-time.After(time.Minute):
		t.Fatalf("locklab -mode %s printed no listening line; stderr:\n%s", mode, p.stderr())
	}
	return p
}

func (p *serverProc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

func (p *serverProc) stderrLines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.lines)
}

// stop sends sig and requires the process to exit with status 0 within
// exitBudget. It returns how long the exit took.
func (p *serverProc) stop(t *testing.T, sig os.Signal) time.Duration {
	t.Helper()
	start := time.Now()
	require.NoError(t, p.cmd.Process.Signal(sig))
	select {
	case <-p.exited:
	case <-time.After(exitBudget):
		t.Fatalf("no exit within %v of %v; stderr:\n%s", exitBudget, sig, p.stderr())
	}
	took := time.Since(start)
	require.NoError(t, p.waitErr, "exit status after %v; stderr:\n%s", sig, p.stderr())
	require.Equal(t, 0, p.cmd.ProcessState.ExitCode())
	return took
}

func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func TestSignalStopsServer(t *testing.T) {
	tests := []struct {
		mode string
		sig  syscall.Signal
	}{
		{"inputQ", syscall.SIGTERM},
		{"mutex", syscall.SIGTERM},
		{"noop", syscall.SIGTERM},
		{"inputQ", syscall.SIGINT},
		{"mutex", syscall.SIGINT},
	}
	for _, tt := range tests {
		t.Run(tt.mode+"/"+tt.sig.String(), func(t *testing.T) {
			p := startServer(t, tt.mode, "-addr", "127.0.0.1:0")
			conn := dial(t, p.addr)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			stats, err := pb.NewAdminServiceClient(conn).GetStats(ctx, &pb.GetStatsRequest{})
			require.NoError(t, err)
			assert.Equal(t, tt.mode, stats.GetMode())
			assert.Equal(t, tt.mode != "noop", stats.GetStoreBacked())
			_, err = pb.NewCounterServiceClient(conn).Increment(ctx, &pb.IncrementRequest{Delta: 1})
			require.NoError(t, err)
			require.NoError(t, conn.Close())

			took := p.stop(t, tt.sig)
			t.Logf("exited %v after %v", tt.sig, took)
			assert.Equal(t, []string{
				fmt.Sprintf("locklab: mode=%s listening on %s", tt.mode, p.addr),
				fmt.Sprintf("locklab: mode=%s stopped", tt.mode),
			}, p.stderrLines())
		})
	}
}

// loadResult is what one load goroutine saw.
type loadResult struct {
	values    []int64 // counter values returned by acknowledged Increment(1)s
	transfers int     // acknowledged transfers
	end       error   // the error that ended the loop
	endCode   codes.Code
}

// hammer alternates Increment(1) and TransferMoney on its own connection
// until a call fails for a reason other than insufficient funds (the server
// going away). It calls ready after its first call, so that the caller
// sends the signal only once every client is connected.
func hammer(ctx context.Context, conn *grpc.ClientConn, seed uint64, ready func()) loadResult {
	counter, bank := pb.NewCounterServiceClient(conn), pb.NewBankServiceClient(conn)
	rng := rand.New(rand.NewPCG(seed, 1))
	var res loadResult
	for i := 0; ; i++ {
		var err error
		if i%2 == 0 {
			var r *pb.IncrementResponse
			if r, err = counter.Increment(ctx, &pb.IncrementRequest{Delta: 1}); err == nil {
				res.values = append(res.values, r.GetValue())
			}
		} else {
			from := 1 + rng.Uint32N(1000)
			to := 1 + (from+rng.Uint32N(999))%1000 // never from
			if _, err = bank.TransferMoney(ctx, &pb.TransferMoneyRequest{FromAccount: from, ToAccount: to, Amount: 1000}); err == nil {
				res.transfers++
			} else if status.Code(err) == codes.FailedPrecondition {
				err = nil
			}
		}
		if i == 0 {
			ready()
		}
		if err != nil {
			res.end, res.endCode = err, status.Code(err)
			return res
		}
	}
}

// TestSIGTERMUnderLoad: a server busy with 64 clients still exits 0 within
// the budget, its clients all see it go and stop, nothing is printed per
// request, and no acknowledged increment was lost or duplicated.
func TestSIGTERMUnderLoad(t *testing.T) {
	const clients = 64
	for _, mode := range storeModesServingAll() {
		t.Run(mode, func(t *testing.T) {
			p := startServer(t, mode, "-addr", "127.0.0.1:0")
			// The workers' safety net: cancelled at the end, so none can
			// outlive the test even if the server never answers.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()

			var (
				ready   sync.WaitGroup
				workers sync.WaitGroup
				results = make([]loadResult, clients)
			)
			ready.Add(clients)
			for i := range clients {
				conn := dial(t, p.addr)
				workers.Add(1)
				go func() { // joined by workers.Wait below
					defer workers.Done()
					results[i] = hammer(ctx, conn, uint64(i), ready.Done)
				}()
			}
			waitTimeout(t, &ready, time.Minute, "the load goroutines' first calls")
			time.Sleep(500 * time.Millisecond)

			took := p.stop(t, syscall.SIGTERM)
			t.Logf("exited %v after SIGTERM under load", took)
			assert.Less(t, took, exitBudget)
			waitTimeout(t, &workers, exitBudget, "the load goroutines to see the server gone")

			var values []int64
			transfers := 0
			for i, r := range results {
				values = append(values, r.values...)
				transfers += r.transfers
				assert.Equal(t, codes.Unavailable, r.endCode, "client %d ended with %v", i, r.end)
			}
			t.Logf("%d acknowledged increments, %d transfers", len(values), transfers)
			require.NotEmpty(t, values, "the load ran")
			assert.Positive(t, transfers, "the load ran")
			// Every acknowledged Increment(1) returns its own value: a
			// repeated value is a lost update.
			slices.Sort(values)
			assert.Equal(t, len(values), len(slices.Compact(values)), "acknowledged increments returned duplicate values")
			assert.GreaterOrEqual(t, values[len(values)-1], int64(len(values)))

			assert.Equal(t, []string{
				fmt.Sprintf("locklab: mode=%s listening on %s", mode, p.addr),
				fmt.Sprintf("locklab: mode=%s stopped", mode),
			}, p.stderrLines(), "stderr holds only the listening and stopped lines")
		})
	}
}

func waitTimeout(t *testing.T, wg *sync.WaitGroup, d time.Duration, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }() // ends with wg; the test fails if that takes too long
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
}

func TestAddrInUse(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer lis.Close()

	code, out := runBinary(t, "-mode", "mutex", "-addr", lis.Addr().String())
	assert.Equal(t, 1, code, "exit status; output:\n%s", out)
	assert.Contains(t, out, "locklab: listen tcp "+lis.Addr().String())
	assert.Contains(t, out, "address already in use")
	assert.NotContains(t, out, "listening on")
}

// lockedBuffer is a bytes.Buffer that run writes to while the test reads.
type lockedBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestRun runs the server in this process: once ctx ends run must return nil
// having stopped every goroutine it started (goleak checks at the end).
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr lockedBuffer
	returned := make(chan error, 1)
	go func() {
		returned <- run(ctx, []string{"-mode", "inputQ", "-addr", "127.0.0.1:0", "-scenario", "b"}, io.Discard, &stderr)
	}()

	var addr string
	require.Eventually(t, func() bool {
		line, _, _ := strings.Cut(stderr.String(), "\n")
		if m := listeningRE.FindStringSubmatch(line); m != nil {
			addr = m[2]
			return true
		}
		return false
	}, time.Minute, 10*time.Millisecond, "no listening line; stderr:\n%s", &stderr)

	conn := dial(t, addr)
	callCtx, callCancel := context.WithTimeout(ctx, 30*time.Second)
	defer callCancel()
	_, err := pb.NewCounterServiceClient(conn).Increment(callCtx, &pb.IncrementRequest{Delta: 7})
	require.NoError(t, err)
	stats, err := pb.NewAdminServiceClient(conn).GetStats(callCtx, &pb.GetStatsRequest{})
	require.NoError(t, err)
	assert.Equal(t, "inputQ", stats.GetMode())
	assert.Equal(t, int64(7), stats.GetCounterValue())
	assert.Equal(t, int64(500*20_000_000), stats.GetTotalBalance(), "-scenario b: odd accounts funded")
	assert.Equal(t, int64(0), stats.GetMinBalance())
	require.NoError(t, conn.Close())

	cancel()
	select {
	case err := <-returned:
		require.NoError(t, err)
	case <-time.After(exitBudget):
		t.Fatalf("run did not return within %v of its context ending", exitBudget)
	}
	assert.Equal(t, fmt.Sprintf("locklab: mode=inputQ listening on %s\nlocklab: mode=inputQ stopped\n", addr), stderr.String())
}

// TestRunUsage checks the errors main turns into exit statuses.
func TestRunUsage(t *testing.T) {
	var stderr lockedBuffer
	err := run(context.Background(), []string{"-mode", "nosuch"}, io.Discard, &stderr)
	assert.ErrorIs(t, err, errUsage)
	err = run(context.Background(), []string{"-h"}, io.Discard, &stderr)
	assert.ErrorIs(t, err, flag.ErrHelp)
}

// TestListModes: -list-modes prints every mode, one per line in the server's
// order, with the workloads it serves, for scripts (make e2e) to range over;
// the lists come from the registry.
func TestListModes(t *testing.T) {
	code, out := runBinary(t, "-list-modes")
	require.Equal(t, 0, code, out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, len(server.Modes()))
	for i, m := range server.Modes() {
		f := strings.Fields(lines[i])
		require.NotEmpty(t, f)
		assert.Equal(t, m.Name, f[0])
		for _, wl := range server.Workloads() {
			assert.Equal(t, m.Serves(wl), slices.Contains(f[1:], wl), "%s serves %s", m.Name, wl)
		}
	}
}

// TestListModesUnderDurability: -list-modes answers for the flags given, so
// a runner asks the binary which modes can keep a write-ahead log; the
// control is that some mode (noop, which keeps no state) is left out.
func TestListModesUnderDurability(t *testing.T) {
	code, out := runBinary(t, "-list-modes", "-durability", server.DurabilityWAL)
	require.Equal(t, 0, code, out)
	var listed []string
	for line := range strings.Lines(out) {
		listed = append(listed, strings.Fields(line)[0])
	}
	for _, m := range server.Modes() {
		assert.Equal(t, m.CanRun(server.DurabilityWAL) == nil, slices.Contains(listed, m.Name), m.Name)
	}
	assert.NotContains(t, listed, "noop")
}

// storeModes are the server's modes that keep state and serve every named
// workload, from the registry: a new design is tested here without an edit.
func storeModes(workloads ...string) []string {
	var names []string
	for _, m := range server.Modes() {
		ok := m.StoreBacked()
		for _, wl := range workloads {
			ok = ok && m.Serves(wl)
		}
		if ok {
			names = append(names, m.Name)
		}
	}
	return names
}

// storeModesServingAll is storeModes of every workload.
func storeModesServingAll() []string { return storeModes(server.Workloads()...) }
