//go:build linux

package store

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests that look at the owner's OS thread through /proc.

// tidMachine records the thread each Apply runs on: the owner's.
type tidMachine struct{ tids []int }

func (m *tidMachine) Apply(c testCmd) (int, error) {
	m.tids = append(m.tids, syscall.Gettid())
	return c.n, nil
}

func threadExists(tid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid))
	return err == nil
}

// threadCPU is the CPU time thread tid has used, in clock ticks (user and
// system, proc(5)'s utime and stime).
func threadCPU(tid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/stat", tid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses, start at
	// the third: utime is the 14th, stime the 15th.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	utime, err := strconv.ParseInt(f[14-3], 10, 64)
	if err != nil {
		return 0, err
	}
	stime, err := strconv.ParseInt(f[15-3], 10, 64)
	return utime + stime, err
}

// TestSpinOwnerThread: the owner keeps one OS thread, parked or awake, for
// its whole life, and the thread ends with it (unless it is the main thread,
// which the runtime parks for good instead). The control: inputQ's owner,
// not locked, leaves its last thread to the runtime, which keeps it.
func TestSpinOwnerThread(t *testing.T) {
	atLeastTwoProcs(t)
	m := &tidMachine{}
	s, e := newSpin(t, Machine[testCmd, int](m), Config{SpinBudget: time.Microsecond})
	for range 20 {
		// Parked between commands, an owner that was not locked could
		// wake on any thread.
		parkedAfterDo(t, s, e)
	}
	require.NoError(t, s.Close())
	require.NotEmpty(t, m.tids)
	for _, tid := range m.tids {
		assert.Equal(t, m.tids[0], tid, "the owner changed threads")
	}
	if m.tids[0] != os.Getpid() {
		waitFor(t, func() bool { return !threadExists(m.tids[0]) }, "the owner's thread %d outlived the store", m.tids[0])
	} else {
		// The owner ran on the process's main thread, which the runtime
		// never ends (the process would become a zombie); it parks it for
		// good instead, a thread no goroutine will run on again.
		t.Log("the owner's thread was the main thread: parked by the runtime, not ended")
	}

	c := &tidMachine{}
	q, err := New("inputQ", Machine[testCmd, int](c), Config{})
	require.NoError(t, err)
	_, err = q.Do(context.Background(), testCmd{n: 1})
	require.NoError(t, err)
	require.NoError(t, q.Close())
	assert.True(t, threadExists(c.tids[0]), "the control: an unlocked owner's thread stays with the runtime")
}

// TestSpinIdleThreadCPU: once parked, the owner's thread uses no CPU while
// the store is idle (at most one tick, caught as it went to sleep); the
// control, an owner that never parks, uses CPU all the while.
func TestSpinIdleThreadCPU(t *testing.T) {
	atLeastTwoProcs(t)
	t.Run("budget", func(t *testing.T) {
		m := &tidMachine{}
		s, e := newSpin(t, Machine[testCmd, int](m), Config{SpinBudget: 200 * time.Microsecond})
		defer s.Close()
		parkedAfterDo(t, s, e)
		tid := m.tids[0]
		cpu, err := threadCPU(tid)
		require.NoError(t, err)
		time.Sleep(4 * idleWindow)
		after, err := threadCPU(tid)
		require.NoError(t, err)
		assert.LessOrEqual(t, after-cpu, int64(1), "the parked owner's thread used CPU")
		require.NoError(t, s.Close())
	})
	t.Run("forever (control)", func(t *testing.T) {
		m := &tidMachine{}
		s, _ := newSpin(t, Machine[testCmd, int](m), Config{SpinBudget: SpinForever})
		defer s.Close()
		_, err := s.Do(context.Background(), testCmd{n: 1})
		require.NoError(t, err)
		tid := m.tids[0]
		cpu, err := threadCPU(tid)
		require.NoError(t, err)
		waitFor(t, func() bool {
			now, err := threadCPU(tid)
			return err == nil && now-cpu > 1
		}, "the polling owner's thread used no CPU")
		require.NoError(t, s.Close())
	})
}
