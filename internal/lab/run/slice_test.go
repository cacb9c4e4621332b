package run

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestSetSlice: -duet-slice's setSlice gives a running process and its
// children the slice, and a process the process starts afterwards has it
// too; the control, a process it was not given to, keeps the kernel's
// own. Under batch the policy is SCHED_BATCH as well.
func TestSetSlice(t *testing.T) {
	// The shell starts a child, waits for the file go (its test is a
	// builtin: no child), then starts another.
	goFile := filepath.Join(t.TempDir(), "go")
	start := func() *exec.Cmd {
		cmd := exec.Command("sh", "-c", `sleep 5 & while [ ! -e "$1" ]; do :; done; sleep 5 & wait`, "sh", goFile)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		require.Eventually(t, func() bool { return len(descendants(cmd.Process.Pid)) == 1 }, 5*time.Second, 5*time.Millisecond)
		return cmd
	}
	slice := func(pid int) time.Duration {
		a, err := unix.SchedGetAttr(pid, 0)
		require.NoError(t, err)
		return time.Duration(a.Runtime)
	}
	const want = 12 * time.Millisecond
	for _, sched := range DuetScheds {
		cmd := start()
		pid := cmd.Process.Pid
		require.NoError(t, setSlice(append([]int{pid}, descendants(pid)...), want, sched))
		assert.Equal(t, want, slice(pid), sched)
		assert.Equal(t, want, slice(descendants(pid)[0]), "%s: a child running when it was set", sched)
		require.NoError(t, os.WriteFile(goFile, nil, 0o644))
		require.Eventually(t, func() bool { return len(descendants(pid)) == 2 }, 5*time.Second, 5*time.Millisecond)
		require.NoError(t, os.Remove(goFile))
		for _, c := range descendants(pid) {
			assert.Equal(t, want, slice(c), "%s: every child, the one started after it was set too", sched)
			a, err := unix.SchedGetAttr(c, 0)
			require.NoError(t, err)
			wantPolicy := uint32(unix.SCHED_NORMAL)
			if sched == SchedBatch {
				wantPolicy = unix.SCHED_BATCH
			}
			assert.Equal(t, wantPolicy, a.Policy, sched)
		}
	}
	other := start()
	assert.NotEqual(t, want, slice(other.Process.Pid), "the control: a process not given the slice")
}
