package attrib

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// IO is a process's count of read and write system calls so far, from
// Linux's /proc/PID/io (syscr, syscw). The kernel counts every read(2),
// readv(2), write(2), writev(2) and their positioned forms, on sockets,
// pipes and files alike, for all the process's threads, exited ones
// included. Go writes a TCP connection with write(2), so syscw counts
// gRPC's socket writes; it also counts a few the runtime makes for itself
// (waking the network poller), which is why the count per call is a ceiling
// on the socket writes, not an exact count. sendmsg(2) and recvmsg(2) are not
// counted.
type IO struct {
	Reads  int64 // syscr
	Writes int64 // syscw
}

// ReadIO reads the counts of process pid. Reading another user's process
// needs the right to trace it.
func ReadIO(pid int) (IO, error) {
	if pid <= 0 {
		return IO{}, fmt.Errorf("attrib: pid %d: want > 0", pid)
	}
	path := fmt.Sprintf("/proc/%d/io", pid)
	f, err := os.Open(path)
	if err != nil {
		return IO{}, fmt.Errorf("attrib: %w", err)
	}
	defer f.Close()
	io, err := parseIO(f)
	if err != nil {
		return IO{}, fmt.Errorf("attrib: %s: %w", path, err)
	}
	return io, nil
}

// parseIO reads the "key: value" lines of /proc/PID/io; both syscr and syscw
// must be there.
func parseIO(r io.Reader) (IO, error) {
	var out IO
	var seen int
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			return IO{}, fmt.Errorf("line %q: want key: value", sc.Text())
		}
		var dst *int64
		switch key {
		case "syscr":
			dst = &out.Reads
		case "syscw":
			dst = &out.Writes
		default:
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		if err != nil || n < 0 {
			return IO{}, fmt.Errorf("%s: %q is not a count", key, strings.TrimSpace(val))
		}
		*dst = n
		seen++
	}
	if err := sc.Err(); err != nil {
		return IO{}, err
	}
	if seen != 2 {
		return IO{}, fmt.Errorf("want both syscr and syscw")
	}
	return out, nil
}

// PerCall is the read and write calls per call served between two readings
// of the same process: before, then after. calls must be positive and the
// counts must not go backwards (which they only do if the readings are of
// different processes).
func (after IO) PerCall(before IO, calls int64) (reads, writes float64, err error) {
	if calls <= 0 {
		return 0, 0, fmt.Errorf("attrib: %d calls: want > 0", calls)
	}
	if after.Reads < before.Reads || after.Writes < before.Writes {
		return 0, 0, fmt.Errorf("attrib: syscall counts went backwards (%+v then %+v): not one process", before, after)
	}
	return float64(after.Reads-before.Reads) / float64(calls),
		float64(after.Writes-before.Writes) / float64(calls), nil
}
