package run

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/locklab/locklab/internal/lab/plan"
)

// CPUSets decides the CPUs of the server and of the driver. With pinning on a
// machine of n ≥ 2 CPUs the server gets the first half (CPU 0 of 2) and the
// driver the rest, unless the flags say otherwise; the two sets must not
// overlap, or the driver would take the server's CPU and the measurement
// would be of both. With one CPU, or -pin=false, nothing is pinned (nil, nil).
func CPUSets(pin bool, server, driver string, n int) ([]int, []int, error) {
	if !pin || n < 2 {
		if server != "" || driver != "" {
			if !pin {
				return nil, nil, errors.New("-server-cpus and -driver-cpus go with -pin")
			}
			return nil, nil, fmt.Errorf("-server-cpus, -driver-cpus: this machine has %d CPU, nothing to split", n)
		}
		return nil, nil, nil
	}
	var s, d []int
	var err error
	if server == "" {
		for c := range n / 2 {
			s = append(s, c)
		}
	} else if s, err = parseCPUList(server, "-server-cpus", n); err != nil {
		return nil, nil, err
	}
	if driver == "" {
		for c := range n {
			if !slices.Contains(s, c) {
				d = append(d, c)
			}
		}
	} else if d, err = parseCPUList(driver, "-driver-cpus", n); err != nil {
		return nil, nil, err
	}
	for _, c := range s {
		if slices.Contains(d, c) {
			return nil, nil, fmt.Errorf("-server-cpus and -driver-cpus share CPU %d: the sets must be disjoint", c)
		}
	}
	if len(d) == 0 {
		return nil, nil, errors.New("-server-cpus leaves the driver no CPU")
	}
	return s, d, nil
}

// parseCPUList reads taskset's list syntax: "0", "0,2", "0-3".
func parseCPUList(s, flagName string, n int) ([]int, error) {
	items, err := plan.ParseList(s, flagName)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, it := range items {
		lo, hi, isRange := strings.Cut(it, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a || b >= n {
			return nil, fmt.Errorf("%s: %q is not a CPU or range of CPUs in 0..%d", flagName, it, n-1)
		}
		for c := a; c <= b; c++ {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// pinned wraps a command line so that the process starts on cpus: taskset
// sets the affinity and then execs the program, so every thread the program
// ever starts inherits it (setting it on a running Go process would miss
// the threads already started) and the pid is the program's. nil: unpinned.
func pinned(cpus []int, argv []string) []string {
	if len(cpus) == 0 {
		return argv
	}
	return append([]string{"taskset", "-c", plan.CPUList(cpus)}, argv...)
}

// gomaxprocsEnv is the environment entry that gives a Go child as many Ps as
// it has CPUs; empty when unpinned (the runtime's default is right then).
func gomaxprocsEnv(cpus []int) []string {
	if len(cpus) == 0 {
		return nil
	}
	return []string{"GOMAXPROCS=" + strconv.Itoa(len(cpus))}
}

// clockTicks is the kernel's USER_HZ, the unit of utime and stime in
// /proc/PID/stat: 100 on every Linux architecture Go supports.
const clockTicks = 100

// procCPUSeconds reads a process's CPU time so far (user + system, all its
// threads) from /proc/PID/stat.
func procCPUSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseProcStat(string(b))
}

// parseProcStat takes utime and stime (fields 14 and 15) from a stat line.
// The command name (field 2) may hold spaces and parentheses, so the fields
// are counted from the last ')'.
func parseProcStat(line string) (float64, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat %q: no command name", line)
	}
	f := strings.Fields(line[i+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat %q: %d fields", line, len(f)+2)
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc stat %q: utime %q, stime %q", line, f[11], f[12])
	}
	return float64(ut+st) / clockTicks, nil
}
