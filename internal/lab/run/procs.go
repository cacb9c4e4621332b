package run

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"time"
)

// listenLine is the one line the server prints on start (server/serve).
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

// startServer starts bin with args (which choose the mode and port 0),
// pinned to cpus with gomaxprocs Ps, and waits for its listening line.
func startServer(bin string, args []string, cpus []int, gomaxprocs int, logPath string, env ...string) (*serverProc, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	s := &serverProc{log: log, stderr: newLineWatcher(log), waited: make(chan struct{})}
	argv := pinned(cpus, append([]string{bin}, args...))
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.Env = append(append(os.Environ(), gomaxprocsEnv(gomaxprocs)...), env...)
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
		return nil, fmt.Errorf("server %v exited before listening (%v): %s", args, s.err, s.stderr.lastLines())
	case <-time.After(20 * time.Second):
		s.stop()
		return nil, fmt.Errorf("server %v printed no listening line in 20s: %s", args, s.stderr.lastLines())
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

// pid is the server's process id (taskset execs the server, so it is the
// server's own).
func (s *serverProc) pid() int { return s.cmd.Process.Pid }

func (s *serverProc) address() string { return s.addr }
