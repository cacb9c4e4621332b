package run

import (
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// echoChild, set in its environment, makes the test binary the other end
// of BenchmarkProcessSwitch.
const echoChild = "LOCKLAB_ECHO_CHILD"

// echo pins itself to CPU 0 and writes back every byte it reads on its
// standard input, until it closes.
func echo() {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(0)
	_ = unix.SchedSetaffinity(0, &set)
	b := make([]byte, 1)
	for {
		if n, err := unix.Read(0, b); n <= 0 || err != nil {
			return
		}
		if _, err := unix.Write(1, b); err != nil {
			return
		}
	}
}

// BenchmarkProcessSwitch prices what a server pays each time it is put
// back on a CPU it shares with other processes: two processes pinned to
// one CPU hand a byte back and forth over blocking pipes, so that each
// hand-off is a switch from one process to the other. An op is a round
// trip: two context switches and four system calls. The duet report reads
// a wake-up's cost from the A/A pair; this is the machine's own figure
// beside it (docs/methodology.md, "Where the A/A floor comes from").
func BenchmarkProcessSwitch(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set, was unix.CPUSet
	require.NoError(b, unix.SchedGetaffinity(0, &was))
	set.Set(0)
	require.NoError(b, unix.SchedSetaffinity(0, &set))
	defer func() { _ = unix.SchedSetaffinity(0, &was) }()

	var toChild, fromChild [2]int
	require.NoError(b, unix.Pipe2(toChild[:], unix.O_CLOEXEC))
	require.NoError(b, unix.Pipe2(fromChild[:], unix.O_CLOEXEC))
	in, out := os.NewFile(uintptr(toChild[0]), "in"), os.NewFile(uintptr(fromChild[1]), "out")
	exe, err := os.Executable()
	require.NoError(b, err)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), echoChild+"=1")
	cmd.Stdin, cmd.Stdout = in, out
	require.NoError(b, cmd.Start())
	in.Close()
	out.Close()
	defer func() {
		unix.Close(toChild[1])
		unix.Close(fromChild[0])
		_ = cmd.Wait()
	}()

	p := []byte{1}
	// One round trip first, so that the child is running and pinned.
	_, err = unix.Write(toChild[1], p)
	require.NoError(b, err)
	_, err = unix.Read(fromChild[0], p)
	require.NoError(b, err)
	for b.Loop() {
		if _, err := unix.Write(toChild[1], p); err != nil {
			b.Fatal(err)
		}
		if n, err := unix.Read(fromChild[0], p); n != 1 || err != nil {
			b.Fatal(n, err)
		}
	}
}
