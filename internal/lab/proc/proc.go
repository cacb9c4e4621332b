// Package proc runs the lab's helper processes — locklab replicas, load
// balancers — for as long as a study or a test needs them: it starts one,
// waits until it is ready (a line on stderr, or a port that accepts), keeps
// the last lines of its stderr for error messages, and stops it with SIGTERM
// and a timed fallback to SIGKILL.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// StopGrace is how long Stop waits after SIGTERM before it kills; the
// locklab server promises a graceful stop within 10 s.
const StopGrace = 15 * time.Second

// tailLines is how many of the last stderr lines a Proc shows in errors;
// keptLines how many it keeps for WaitLine.
const (
	tailLines = 20
	keptLines = 1000
)

// ErrExited is returned by the waits when the process ended first.
var ErrExited = errors.New("proc: exited before it was ready")

// Proc is one running process. Its owner calls Stop.
type Proc struct {
	cmd    *exec.Cmd
	stderr *tail
	waited chan struct{} // closed once cmd.Wait has returned
	err    error         // cmd.Wait's result, valid after waited

	grace    time.Duration // StopGrace; shorter in tests
	stopOnce sync.Once
	stopErr  error
}

// Start starts cmd with its stderr captured (cmd.Stderr, if set, gets a copy)
// in a process group of its own, so that Stop also reaches its children.
// The process is killed if the thread that started it ends first (Linux's
// parent-death signal), which in practice means if this process dies.
func Start(cmd *exec.Cmd) (*Proc, error) {
	p := &Proc{cmd: cmd, stderr: &tail{copy: cmd.Stderr}, waited: make(chan struct{}), grace: StopGrace}
	cmd.Stderr = p.stderr
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	// A runner that dies without Stop (a test's timeout, kill -9) takes
	// its helpers with it rather than leave them holding ports.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("proc: start %s: %w", cmd.Path, err)
	}
	go func() { // owned by p; ends when the process does
		p.err = cmd.Wait()
		close(p.waited)
	}()
	return p, nil
}

// PID is the process's id.
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// Exited is closed when the process has ended.
func (p *Proc) Exited() <-chan struct{} { return p.waited }

// Tail returns the last lines the process wrote to stderr.
func (p *Proc) Tail() string { return p.stderr.String() }

// WaitLine waits until the process writes a line matching re to stderr and
// returns the match and its groups. It fails if the process exits first or
// nothing matches within timeout.
func (p *Proc) WaitLine(re *regexp.Regexp, timeout time.Duration) ([]string, error) {
	deadline := time.After(timeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if m := p.stderr.find(re); m != nil {
			return m, nil
		}
		select {
		case <-p.waited:
			if m := p.stderr.find(re); m != nil {
				return m, nil
			}
			return nil, p.exitedErr()
		case <-deadline:
			return nil, fmt.Errorf("proc: %s wrote no line matching %q in %v: %s", p.cmd.Path, re, timeout, p.Tail())
		case <-tick.C:
		}
	}
}

// WaitDial waits until addr accepts a TCP connection. It fails if the
// process exits first or addr does not accept within timeout.
func (p *Proc) WaitDial(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			return c.Close()
		}
		select {
		case <-p.waited:
			return p.exitedErr()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("proc: %s did not accept on %s in %v (%v): %s", p.cmd.Path, addr, timeout, err, p.Tail())
		}
	}
}

func (p *Proc) exitedErr() error {
	return fmt.Errorf("%w: %s (%v): %s", ErrExited, strings.Join(p.cmd.Args, " "), p.err, p.Tail())
}

// Stop sends SIGTERM to the process group, waits up to StopGrace, then
// kills it. It returns nil when the process ended by the signal or exited
// 0, and is safe to call twice (the second call returns the first's result).
func (p *Proc) Stop() error {
	p.stopOnce.Do(func() {
		select {
		case <-p.waited:
			p.stopErr = p.exitErr()
			return
		default:
		}
		_ = syscall.Kill(-p.PID(), syscall.SIGTERM)
		select {
		case <-p.waited:
			p.stopErr = p.exitErr()
		case <-time.After(p.grace):
			_ = syscall.Kill(-p.PID(), syscall.SIGKILL)
			<-p.waited
			p.stopErr = fmt.Errorf("proc: %s killed after %v without stopping: %s", p.cmd.Path, p.grace, p.Tail())
		}
	})
	return p.stopErr
}

// exitErr is nil for an exit 0 or an end by SIGTERM (what Stop asks for).
func (p *Proc) exitErr() error {
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return nil
		}
	}
	if p.err != nil {
		return fmt.Errorf("proc: %s: %w: %s", p.cmd.Path, p.err, p.Tail())
	}
	return nil
}

// tail is a process's stderr: it keeps the last keptLines lines for find
// and String. exec's copying goroutine is its only writer; the mutex is for
// the readers.
type tail struct {
	copy interface{ Write([]byte) (int, error) }

	mu      sync.Mutex // protects partial and lines
	partial []byte
	lines   []string
}

func (t *tail) Write(b []byte) (int, error) {
	if t.copy != nil {
		if _, err := t.copy.Write(b); err != nil {
			return 0, err
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, b...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			return len(b), nil
		}
		t.lines = append(t.lines, string(t.partial[:i]))
		if len(t.lines) > keptLines {
			t.lines = t.lines[len(t.lines)-keptLines:]
		}
		t.partial = t.partial[i+1:]
	}
}

func (t *tail) find(re *regexp.Regexp) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, l := range t.lines {
		if m := re.FindStringSubmatch(l); m != nil {
			return m
		}
	}
	return nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	last := t.lines[max(0, len(t.lines)-tailLines):]
	return strings.Join(append(last, string(t.partial)), "\n")
}
