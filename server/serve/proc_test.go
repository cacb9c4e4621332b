package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/locklab/locklab/server"
)

// exitBudget is how long the server may take to exit after SIGINT/SIGTERM
// (docs/design.md §the-server: GracefulStop with a deadline, then exit 0).
const exitBudget = 10 * time.Second

// options are the defaults for mode on any free loopback port.
func options(mode string) Options {
	o := Defaults()
	o.Mode, o.Addr = mode, "127.0.0.1:0"
	return o
}

// command is this test binary run as the command with o (childEnv).
func command(t *testing.T, bin string, o Options) *exec.Cmd {
	t.Helper()
	b, err := json.Marshal(o)
	require.NoError(t, err)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), childEnv+"="+string(b))
	return cmd
}

// runProcess runs the command with o to completion and returns its exit
// status and everything it printed. A process that does not exit within a
// minute is killed and fails the test: these invocations must not hang.
func runProcess(t *testing.T, o Options) (int, string) {
	t.Helper()
	return runCmd(t, command(t, os.Args[0], o))
}

func runCmd(t *testing.T, cmd *exec.Cmd) (int, string) {
	t.Helper()
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }() // ends with the process, killed below if need be
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%v did not exit; output:\n%s", cmd.Args, out.String())
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), out.String()
	}
	require.NoError(t, err, "output:\n%s", out.String())
	return 0, out.String()
}

// serverProc is the command running in the background.
type serverProc struct {
	cmd  *exec.Cmd
	addr string // where it listens, from its stderr

	exited  chan struct{} // closed once stderr is drained and the process reaped
	waitErr error         // set before exited closes

	mu    sync.Mutex // guards lines
	lines []string   // stderr, one entry per line
}

var listeningRE = regexp.MustCompile(`^locklab: mode=(\S+) listening on (\S+)$`)

// startServer starts the command with o in a process and waits for its
// listening line. The test's cleanup kills it if it still runs.
func startServer(t *testing.T, o Options) *serverProc {
	t.Helper()
	p := &serverProc{cmd: command(t, os.Args[0], o), exited: make(chan struct{})}
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
			if m := listeningRE.FindStringSubmatch(line); m != nil && m[1] == o.Mode {
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
		t.Fatalf("-mode %s exited before listening (%v); stderr:\n%s", o.Mode, p.waitErr, p.stderr())
	case <-time.After(time.Minute):
		t.Fatalf("-mode %s printed no listening line; stderr:\n%s", o.Mode, p.stderr())
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

// running is Run in this process, in a goroutine, until its context ends.
type running struct {
	addr     string
	stderr   *lockedBuffer
	cancel   context.CancelFunc
	returned chan error
}

// startRun runs Run(o) in this process and waits for its listening line;
// stop (or the cleanup) ends it.
func startRun(t *testing.T, o Options) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{stderr: &lockedBuffer{}, cancel: cancel, returned: make(chan error, 1)}
	go func() { r.returned <- Run(ctx, o, io.Discard, r.stderr) }() // joined by stop
	t.Cleanup(func() {
		cancel()
		<-r.returned
	})
	require.Eventually(t, func() bool {
		select {
		case err := <-r.returned:
			r.returned <- err
			return true // fails below: no address
		default:
		}
		for line := range strings.Lines(r.stderr.String()) {
			if m := listeningRE.FindStringSubmatch(strings.TrimSuffix(line, "\n")); m != nil {
				r.addr = m[2]
				return true
			}
		}
		return false
	}, time.Minute, 10*time.Millisecond, "no listening line; stderr:\n%s", r.stderr)
	require.NotEmpty(t, r.addr, "Run returned before listening; stderr:\n%s", r.stderr)
	return r
}

// stop ends Run's context and requires it to return nil within exitBudget.
func (r *running) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.returned:
		r.returned <- err // for the cleanup
		require.NoError(t, err)
	case <-time.After(exitBudget):
		t.Fatalf("Run did not return within %v of its context ending", exitBudget)
	}
}

// lockedBuffer is a buffer one goroutine writes while the test reads.
type lockedBuffer struct {
	mu  sync.Mutex // guards buf
	buf strings.Builder
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

func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
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
