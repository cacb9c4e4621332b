//go:build linux

package attrib

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The counts are the kernel's: n writes to /dev/null add at least n.
func TestReadIOCountsWrites(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	before, err := ReadIO(os.Getpid())
	require.NoError(t, err)
	const n = 100
	for range n {
		_, err := f.Write([]byte("x"))
		require.NoError(t, err)
	}
	after, err := ReadIO(os.Getpid())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, after.Writes-before.Writes, int64(n))
	assert.Less(t, after.Writes-before.Writes, int64(2*n), "the test's own writes dominate")
	assert.GreaterOrEqual(t, after.Reads, before.Reads+1, "reading /proc/PID/io is a read")

	reads, writes, err := after.PerCall(before, n)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, writes, 1.0)
	assert.Positive(t, reads)
}

func TestReadIORefuses(t *testing.T) {
	for _, pid := range []int{0, -1} {
		_, err := ReadIO(pid)
		assert.ErrorContains(t, err, "pid", "pid %d", pid)
	}
	_, err := ReadIO(1 << 30) // above any pid_max
	assert.ErrorIs(t, err, os.ErrNotExist)
}
