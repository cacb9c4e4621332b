package run

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/record"
)

func TestParseProcStat(t *testing.T) {
	// A command name with spaces and parentheses; utime 250, stime 50 ticks.
	line := "4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0 100 1000000 200\n"
	v, err := parseProcStat(line)
	require.NoError(t, err)
	assert.Equal(t, 3.0, v)
	_, err = parseProcStat("4242 no name here")
	assert.Error(t, err)
	_, err = parseProcStat("4242 (x) S 1 2")
	assert.Error(t, err)

	self, err := procCPUSeconds(os.Getpid())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, self, 0.0)
}

func TestWindowUsage(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// One second of connecting (the driver busy, the server idle), then two
	// seconds of load with the server at 100% and the driver at 50%.
	samples := []cpuSample{
		{t: at(0), server: 0, driver: 0}, {t: at(0.5), server: 0, driver: 0.5}, {t: at(1), server: 0, driver: 1},
		{t: at(2), server: 1, driver: 1.5}, {t: at(3), server: 2, driver: 2},
	}
	server, driver := windowUsage(samples, 2)
	assert.InDelta(t, 2, server.WallSeconds, 1e-9)
	assert.InDelta(t, 1.0, server.Cores(), 1e-9, "the window leaves connecting out")
	assert.InDelta(t, 0.5, driver.Cores(), 1e-9)

	// Interpolated between samples: the window starts at 1.5 s.
	server, driver = windowUsage(samples, 1.5)
	assert.InDelta(t, 1.5, server.CPUSeconds, 1e-9)
	assert.InDelta(t, 0.75, driver.CPUSeconds, 1e-9)

	// The control: over the whole life the connecting second dilutes both.
	server, _ = windowUsage(samples, 0)
	assert.InDelta(t, 2.0/3, server.Cores(), 1e-9)
	server, _ = windowUsage(samples, 10)
	assert.InDelta(t, 3, server.WallSeconds, 1e-9, "a window longer than the samples is all of them")
	server, _ = windowUsage(samples[:1], 2)
	assert.Equal(t, record.ProcUsage{}, server)
}

// TestDescendantsCPU: a grandchild process that burns CPU (a shell's busy
// loop under a shell, as a private database under the server) is counted
// under the test process; the control, the same count under the busy loop
// itself, which has no descendants, stays zero.
func TestDescendantsCPU(t *testing.T) {
	fs, err := procfs.NewDefaultFS()
	require.NoError(t, err)
	base := descendantsCPUSeconds(fs, os.Getpid())
	child := exec.Command("sh", "-c", "sh -c 'while :; do :; done' & wait")
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, child.Start())
	defer func() { _ = syscall.Kill(-child.Process.Pid, syscall.SIGKILL); _ = child.Wait() }()
	require.Eventually(t, func() bool { return descendantsCPUSeconds(fs, os.Getpid())-base >= 0.05 },
		30*time.Second, 10*time.Millisecond, "the grandchild's CPU under the test process")
	grand := childrenOf(child.Process.Pid)
	require.Len(t, grand, 1, "the busy loop under the shell")
	assert.Zero(t, descendantsCPUSeconds(fs, grand[0]), "the busy loop has no descendants")
}

// TestReadPieces: the runner's own process, made to sleep (each sleep a
// wake-up) and to write (each write a system call), reads more of both;
// a process that is not there (the control) is an error.
func TestReadPieces(t *testing.T) {
	before, err := readPieces(os.Getpid())
	require.NoError(t, err)
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	defer f.Close()
	for range 50 {
		_, err := f.Write([]byte("x"))
		require.NoError(t, err)
	}
	for range 10 {
		time.Sleep(time.Millisecond)
	}
	after, err := readPieces(os.Getpid())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, after.syscalls-before.syscalls, uint64(50))
	assert.Greater(t, after.wakeups, before.wakeups)
	_, err = readPieces(1 << 30)
	assert.Error(t, err)
}
