package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"time"
)

// listenLine is the one line the server prints on start (main.go).
var listenLine = regexp.MustCompile(`locklab: mode=(\S+) listening on (\S+)`)

// stopGrace bounds a server's graceful stop; the server itself promises 10 s.
const stopGrace = 15 * time.Second

// lineWatcher is the server's stderr: it copies everything to a log and
// reports the listening address once. exec's copying goroutine is its only
// writer; the mutex is for the reader of tail.
type lineWatcher struct {
	log   io.Writer
	found chan string // capacity 1: receives the address once

	mu      sync.Mutex // protects partial and tail
	partial []byte
	tail    []string // the last lines, for error messages
	sent    bool
}

func newLineWatcher(log io.Writer) *lineWatcher {
	return &lineWatcher{log: log, found: make(chan string, 1)}
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	if _, err := w.log.Write(p); err != nil {
		return 0, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(w.partial[:i])
		w.partial = w.partial[i+1:]
		w.tail = append(w.tail, line)
		if len(w.tail) > 10 {
			w.tail = w.tail[1:]
		}
		if m := listenLine.FindStringSubmatch(line); m != nil && !w.sent {
			w.sent = true
			w.found <- m[2]
		}
	}
}

func (w *lineWatcher) lastLines() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprint(w.tail)
}

// serverProc is one running locklab server. Its owner must call stop.
type serverProc struct {
	cmd    *exec.Cmd
	addr   string
	log    *os.File
	stderr *lineWatcher
	waited chan struct{} // closed once cmd.Wait has returned
	err    error         // cmd.Wait's result, valid after waited
}

// startServer starts bin in mode on a free loopback port and waits for its
// listening line.
func startServer(bin, mode, logPath string) (*serverProc, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	s := &serverProc{log: log, stderr: newLineWatcher(log), waited: make(chan struct{})}
	s.cmd = exec.Command(bin, "-mode", mode, "-addr", "127.0.0.1:0")
	s.cmd.Stdout = log
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start server: %w", err)
	}
	go func() { // owned by s; ends when the process does
		s.err = s.cmd.Wait()
		close(s.waited)
	}()
	select {
	case s.addr = <-s.stderr.found:
		return s, nil
	case <-s.waited:
		log.Close()
		return nil, fmt.Errorf("server -mode %s exited before listening (%v): %s", mode, s.err, s.stderr.lastLines())
	case <-time.After(20 * time.Second):
		s.stop()
		return nil, fmt.Errorf("server -mode %s printed no listening line in 20s: %s", mode, s.stderr.lastLines())
	}
}

// stop sends SIGTERM, waits for a graceful exit, kills after stopGrace, and
// returns the exit code (-1 if it had to be killed).
func (s *serverProc) stop() (int, time.Duration) {
	defer s.log.Close()
	start := time.Now()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.waited:
	case <-time.After(stopGrace):
		_ = s.cmd.Process.Kill()
		<-s.waited
		return -1, time.Since(start)
	}
	return s.cmd.ProcessState.ExitCode(), time.Since(start)
}

// k6Result is what the runner records of one k6 process.
type k6Result struct {
	ExitCode    int     `json:"exit_code"`
	WallSeconds float64 `json:"wall_seconds"`
	CPUSeconds  float64 `json:"cpu_seconds"` // user + system, from the process's rusage
	Cores       float64 `json:"cores"`       // CPUSeconds / WallSeconds
}

// runK6 runs one k6 process to completion; ctx cancellation stops it with
// SIGINT, which k6 treats as an early end of the test.
func runK6(ctx context.Context, bin, script string, env []string, logPath string) (k6Result, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return k6Result{}, err
	}
	defer log.Close()
	args := []string{"run", "--no-color", "--quiet", "--no-usage-report"}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	args = append(args, script)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	cmd.Stdout, cmd.Stderr = log, log
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start).Seconds()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return k6Result{}, fmt.Errorf("k6: %w", err)
	}
	ps := cmd.ProcessState
	cpu := (ps.UserTime() + ps.SystemTime()).Seconds()
	return k6Result{ExitCode: ps.ExitCode(), WallSeconds: wall, CPUSeconds: cpu, Cores: cpu / wall}, ctx.Err()
}
