package proc

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStartServer: a real server on port 0 is found listening at the
// address it printed, and stops cleanly, twice.
func TestStartServer(t *testing.T) {
	s, err := StartServer(exec.Command(bin, "-mode", "mutex", "-addr", "127.0.0.1:0"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Stop() })
	assert.Equal(t, "mutex", s.Mode)
	c, err := net.Dial("tcp", s.Addr)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	assert.NoError(t, s.Stop())
	assert.NoError(t, s.Stop(), "a second Stop")
	_, err = net.DialTimeout("tcp", s.Addr, time.Second)
	assert.Error(t, err, "stopped")
}

// TestStartServerThatExits: a server that refuses its flags is an error
// that carries its message, at once rather than after the timeout.
func TestStartServerThatExits(t *testing.T) {
	start := time.Now()
	_, err := StartServer(exec.Command(bin, "-mode", "nosuch", "-addr", "127.0.0.1:0"))
	require.ErrorIs(t, err, ErrExited)
	assert.ErrorContains(t, err, "nosuch")
	assert.Less(t, time.Since(start), ServerStartTimeout/2)
}

// TestWaitLineTimesOut: a process that never prints the line is an error
// after the timeout, with the lines it did print.
func TestWaitLineTimesOut(t *testing.T) {
	p, err := Start(exec.Command("sh", "-c", "echo not yet >&2; exec sleep 60"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Stop() })
	_, err = p.WaitLine(regexp.MustCompile("ready"), 200*time.Millisecond)
	assert.ErrorContains(t, err, "no line matching")
	assert.ErrorContains(t, err, "not yet")
	assert.NoError(t, p.Stop(), "SIGTERM ends sleep")
}

// TestWaitDial: a port that accepts is ready; a process that exits first
// is ErrExited.
func TestWaitDial(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	p, err := Start(exec.Command("sleep", "60"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Stop() })
	assert.NoError(t, p.WaitDial(ln.Addr().String(), time.Second))

	free := ln.Addr().String()
	require.NoError(t, ln.Close())
	q, err := Start(exec.Command("sh", "-c", "echo bye >&2; exit 3"))
	require.NoError(t, err)
	err = q.WaitDial(free, 5*time.Second)
	assert.ErrorIs(t, err, ErrExited)
	assert.ErrorContains(t, err, "bye")
	assert.ErrorContains(t, q.Stop(), "exit status 3", "Stop reports an exit that was not its own")
}

// TestStopKillsWhatIgnoresTerm: a process group that ignores SIGTERM is
// killed after the grace, children included, and Stop says so.
func TestStopKillsWhatIgnoresTerm(t *testing.T) {
	p, err := Start(exec.Command("sh", "-c", `trap "" TERM; sleep 60 & echo child $! >&2; wait`))
	require.NoError(t, err)
	p.grace = 200 * time.Millisecond
	m, err := p.WaitLine(regexp.MustCompile(`child (\d+)`), 5*time.Second)
	require.NoError(t, err)
	err = p.Stop()
	assert.ErrorContains(t, err, "killed after")
	var child int
	_, _ = fmt.Sscan(m[1], &child)
	assert.Eventually(t, func() bool { return gone(child) }, 2*time.Second, 10*time.Millisecond, "the child is gone too")
}

// TestChildrenDieWithTheRunner: a runner killed by SIGKILL, which cannot
// run any cleanup, takes the processes it started with Start along; a
// process started plainly (the control) outlives it.
func TestChildrenDieWithTheRunner(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), parentEnv+"=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var started, plain int
	_, err = fmt.Fscan(out, &started, &plain)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(plain, syscall.SIGKILL) })
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	assert.Eventually(t, func() bool { return gone(started) }, 5*time.Second, 10*time.Millisecond, "Start's child outlived its runner")
	assert.False(t, gone(plain), "the control: a plain child outlives its runner")
}

// gone says whether pid has ended (a zombie that no one reaped counts).
func gone(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return strings.HasPrefix(after, "Z")
}
