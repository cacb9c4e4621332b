package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOwned: the folders named prefix+PID (with or without a suffix after
// "-") are listed with their owners; a file, another prefix and a name
// whose PID is not a number (the controls) are not.
func TestOwned(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"lab-12", "lab-34-7", "lab-x-1", "other-56"} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, d), 0o700))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "lab-78"), nil, 0o600))
	assert.Equal(t, map[string]int{filepath.Join(dir, "lab-12"): 12, filepath.Join(dir, "lab-34-7"): 34}, Owned(dir, "lab-"))
	assert.Empty(t, Owned(filepath.Join(dir, "missing"), "lab-"))
}

// TestAlive: this process is alive, a child that has exited and been
// reaped is not (the control).
func TestAlive(t *testing.T) {
	assert.True(t, Alive(os.Getpid()))
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	assert.False(t, Alive(cmd.Process.Pid), "pid "+strconv.Itoa(cmd.Process.Pid))
}
