package run

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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

// TestSliceKept: a kernel from 6.12 on (EEVDF's custom slices) keeps a
// slice within its bounds, and the probe says so; an older one keeps
// none, and the probe says that. The control, a slice under the kernel's
// least, which a newer kernel rounds up, is not kept on either. The
// probe's thread ends with it: the test's own thread keeps the kernel's
// slice.
func TestSliceKept(t *testing.T) {
	var u unix.Utsname
	require.NoError(t, unix.Uname(&u))
	release := unix.ByteSliceToString(u.Release[:])
	var major, minor int
	_, err := fmt.Sscanf(release, "%d.%d", &major, &minor)
	require.NoError(t, err, release)
	kept, err := sliceKept(DefaultSlice)
	require.NoError(t, err)
	assert.Equal(t, major > 6 || major == 6 && minor >= 12, kept, "Linux %s", release)
	kept, err = sliceKept(MinSlice / 2)
	require.NoError(t, err)
	assert.False(t, kept, "the control: a slice the kernel rounds up to its least")
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	a, err := unix.SchedGetAttr(0, 0)
	require.NoError(t, err)
	assert.NotEqual(t, DefaultSlice, time.Duration(a.Runtime), "the probe's slice stayed on its own thread")
}

// TestResolveSlice: a slice the kernel does not keep gives way to the
// kernel's own where it was the default, and says so; asked for, it is
// refused; the control, a kernel that keeps it, keeps it. Over a
// database the default is the kernel's own.
func TestResolveSlice(t *testing.T) {
	keeps := func(time.Duration) (bool, error) { return true, nil }
	keepsNone := func(time.Duration) (bool, error) { return false, nil }
	fails := func(time.Duration) (bool, error) { return false, unix.EPERM }
	asked := Duet{Slice: 12 * time.Millisecond}
	dflt := Duet{Slice: DefaultSlice, SliceFallback: true}

	d, note, err := resolveSlice(dflt, false, keeps)
	require.NoError(t, err)
	assert.Equal(t, DefaultSlice, d.Slice, "the control: the kernel keeps it")
	assert.Empty(t, note)

	for _, kept := range []func(time.Duration) (bool, error){keepsNone, fails} {
		d, note, err = resolveSlice(dflt, false, kept)
		require.NoError(t, err)
		assert.Zero(t, d.Slice, "the default gives way to the kernel's own")
		assert.Contains(t, note, "kernel's own scheduler slice")
		_, _, err = resolveSlice(asked, false, kept)
		require.Error(t, err, "a slice asked for is refused")
		assert.Contains(t, err.Error(), "-duet-slice 12ms")
	}
	_, _, err = resolveSlice(asked, false, keepsNone)
	assert.ErrorIs(t, err, ErrNoSlice)

	// Over a database the default is the kernel's own, with no probe;
	// a slice asked for is kept to.
	probed := false
	probe := func(time.Duration) (bool, error) { probed = true; return true, nil }
	d, note, err = resolveSlice(dflt, true, probe)
	require.NoError(t, err)
	assert.Zero(t, d.Slice, "over a database, the kernel's own by default")
	assert.Contains(t, note, "over a database")
	assert.False(t, probed)
	d, note, err = resolveSlice(asked, true, probe)
	require.NoError(t, err)
	assert.Equal(t, 12*time.Millisecond, d.Slice, "the control: a slice asked for over a database")
	assert.Empty(t, note)
	assert.True(t, probed)

	d, note, err = resolveSlice(Duet{}, false, keepsNone)
	require.NoError(t, err)
	assert.Zero(t, d.Slice, "the kernel's own asked for: nothing to probe")
	assert.Empty(t, note)
}
