package proc

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Alive says whether a process with this PID exists (signal 0 checks
// without sending; EPERM means it exists but is not ours).
func Alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Owned lists the folders in dir whose names are prefix, then the PID of
// the process that made them, then nothing or "-" and more: each path with
// its owner's PID. The lab names what a run leaves on the machine so, and
// the next run removes those of an owner no longer Alive.
func Owned(dir, prefix string) map[string]int {
	out := map[string]int{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		p, _, _ := strings.Cut(rest, "-")
		if owner, err := strconv.Atoi(p); err == nil && owner > 0 {
			out[filepath.Join(dir, e.Name())] = owner
		}
	}
	return out
}
