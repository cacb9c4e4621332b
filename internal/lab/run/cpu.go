package run

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"

	"github.com/locklab/locklab/internal/lab/plan"
)

// CPUSets decides the comparison's base CPUs of the server and of the
// driver. With pinning on a machine of n ≥ 2 CPUs the server gets the first
// half (CPU 0 of 2) and the driver the rest, or the CPUs -driver-cpus names;
// -server-cpus, a factor, moves the server per run (Config.placement). With
// one CPU, or -pin=false, nothing is pinned by default (nil, nil).
func CPUSets(pin bool, driver string, n int) ([]int, []int, error) {
	if !pin {
		if driver != "" {
			return nil, nil, errors.New("-driver-cpus goes with -pin")
		}
		return nil, nil, nil
	}
	var s, d []int
	for c := range n / 2 {
		s = append(s, c)
	}
	if driver != "" {
		var err error
		if d, err = parseCPUList(driver, "-driver-cpus", n); err != nil {
			return nil, nil, err
		}
		return s, d, nil
	}
	if n < 2 {
		return nil, nil, nil
	}
	return s, rest(s, n), nil
}

// rest is the machine's CPUs outside set.
func rest(set []int, n int) []int {
	var out []int
	for c := range n {
		if !slices.Contains(set, c) {
			out = append(out, c)
		}
	}
	return out
}

// placement is a run's CPUs at pt: the factors move the server's set
// (plan.Factor.Place), the driver gets the CPUs the server leaves (or the
// ones -driver-cpus names), and where that leaves the driver none of its
// own, it runs on the server's CPUs only when -share-cpus allows; the run
// then says so (Placement.Shared). NewConfig tries every swept value, so
// that a bad one fails before anything runs.
func (cfg Config) placement(pt plan.Point) (plan.Placement, error) {
	p := pt.Place(cfg.base())
	if len(p.Server) == 0 {
		return p, nil // unpinned
	}
	v := pt.Get(plan.ServerCPUs)
	for _, c := range p.Server {
		if c >= cfg.NumCPU {
			return p, fmt.Errorf("-server-cpus %s needs CPU %d; this machine has %d CPUs (0..%d)", v, c, cfg.NumCPU, cfg.NumCPU-1)
		}
	}
	if !cfg.driverGiven {
		p.Driver = rest(p.Server, cfg.NumCPU)
	}
	if len(p.Driver) == 0 {
		if !cfg.ShareCPUs {
			return p, fmt.Errorf("-server-cpus %s leaves the driver no CPU of its own on this %d-CPU machine: "+
				"add -share-cpus to run the driver on the server's CPUs (throughput is then shared-CPU throughput), or give the server fewer CPUs",
				v, cfg.NumCPU)
		}
		p.Driver, p.Shared = slices.Clone(p.Server), true
		return p, nil
	}
	for _, c := range p.Server {
		if slices.Contains(p.Driver, c) {
			if !cfg.ShareCPUs {
				return p, fmt.Errorf("-server-cpus %s and -driver-cpus %s share CPU %d: the sets must be disjoint, or add -share-cpus",
					v, plan.CPUList(p.Driver), c)
			}
			p.Shared = true
		}
	}
	return p, nil
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

// gomaxprocs is the GOMAXPROCS of a process the lab starts on cpus: as many
// Ps as it has CPUs, and unpinned the machine's count. It is always given,
// never left to the runtime, whose default has moved between releases (a
// container's CPU limit counts since Go 1.25) and differs between the
// runtimes a comparison may build (-runtime); every run's record has it.
func (cfg Config) gomaxprocs(cpus []int) int {
	if len(cpus) > 0 {
		return len(cpus)
	}
	return cmp.Or(cfg.NumCPU, runtime.NumCPU())
}

// gomaxprocsEnv is the environment entry that gives a Go child n Ps.
func gomaxprocsEnv(n int) []string { return []string{"GOMAXPROCS=" + strconv.Itoa(n)} }

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

// descendantsCPUSeconds is the CPU time so far of every process descended
// from pid, pid itself left out: a private database or cache the server
// started (-backend mysql without -db-dsn) works for the server, on its
// CPUs, and is the lab's own CPU there, not something else's. It follows
// the kernel's /proc/PID/task/TID/children lists, a few small reads, so
// that sampling it often costs the runner next to nothing. Processes that
// cannot be read (gone between the listing and the read) count 0.
func descendantsCPUSeconds(fs procfs.FS, pid int) float64 {
	var sum float64
	for _, c := range descendants(pid) {
		if p, err := fs.Proc(c); err == nil {
			if st, err := p.Stat(); err == nil {
				sum += float64(st.UTime+st.STime) / clockTicks
			}
		}
	}
	return sum
}

// descendants lists every process descended from pid, pid itself left
// out, from the kernel's children lists: at most 4096, each once.
func descendants(pid int) []int {
	var out []int
	seen := map[int]bool{pid: true}
	queue := childrenOf(pid)
	for len(queue) > 0 && len(seen) < 4096 {
		c := queue[0]
		queue = queue[1:]
		if seen[c] {
			continue
		}
		seen[c] = true
		out = append(out, c)
		queue = append(queue, childrenOf(c)...)
	}
	return out
}

// childrenOf lists pid's child processes from every thread's children file.
func childrenOf(pid int) []int {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// procPieces is how a process's work has been split so far: the times its
// threads were put on a CPU (each thread's run timeslices from
// /proc/PID/task/TID/schedstat, summed) and its read and write system
// calls (/proc/PID/io). A thread that exited takes its timeslices with it;
// a Go server's threads live as long as it does.
type procPieces struct {
	wakeups, syscalls uint64
}

// readPieces reads a process's procPieces.
func readPieces(pid int) (procPieces, error) {
	var out procPieces
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return out, err
	}
	threads, err := fs.AllThreads(pid)
	if err != nil {
		return out, err
	}
	for _, t := range threads {
		if st, err := t.Schedstat(); err == nil {
			out.wakeups += st.RunTimeslices
		}
	}
	p, err := fs.Proc(pid)
	if err != nil {
		return out, err
	}
	io, err := p.IO()
	if err != nil {
		return out, err
	}
	out.syscalls = io.SyscR + io.SyscW
	return out, nil
}
