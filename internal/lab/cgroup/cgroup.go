// Package cgroup gives a process a fixed share of CPU time through the
// kernel's CPU controller: a CFS bandwidth quota, in cgroup v1 (the cpu
// hierarchy's cpu.cfs_quota_us and cpu.cfs_period_us) or v2 (cpu.max).
//
// The runner's side-by-side ("duet") rounds run several servers on the same
// CPUs at the same moment. Without a quota the design that wakes more takes
// more of the shared CPU and looks faster for it; with an equal quota each
// server has the same CPU time to spend, and what differs between them is
// what each design does with it.
//
// The lab creates its groups and removes them. Every group's name carries
// the creating process's id, so that a later Open removes the groups of a
// runner that died (kill -9) before it could.
package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/locklab/locklab/internal/lab/proc"
)

// ErrUnavailable is returned by Open when the machine offers no CPU
// controller the lab can write to: not root, no cgroup file system, or no
// cpu controller in it.
var ErrUnavailable = errors.New("cgroup: no writable CPU controller (cgroup v1 cpu or v2 cpu.max); run as root on Linux, or use -measure isolated")

// Period is the CFS period a group gets: the quota is spent in slices of
// it. 10 ms throttles in steps short enough for one-second rounds. A group
// whose quota in it would be under the kernel's least (MinQuota) gets a
// longer period instead (PeriodFor).
const Period = 10 * time.Millisecond

// MinQuota and MaxPeriod are the kernel's bounds on a CFS quota and period.
const (
	MinQuota  = time.Millisecond
	MaxPeriod = time.Second
)

// PeriodFor is the period of a group of cpus CPUs: Period, or the shortest
// in whole milliseconds in which its quota reaches MinQuota.
func PeriodFor(cpus float64) time.Duration {
	if !(cpus > 0) || cpus*float64(Period) >= float64(MinQuota) {
		return Period
	}
	return time.Duration(math.Ceil(float64(MinQuota)/cpus/float64(time.Millisecond))) * time.Millisecond
}

// prefix starts the name of every group the lab makes.
const prefix = "locklab-"

// Version is the kind of hierarchy a Controller writes to.
type Version int

const (
	V1 Version = 1
	V2 Version = 2
)

// Controller makes groups under one directory of a CPU controller.
type Controller struct {
	// Root is the directory new groups go into: /sys/fs/cgroup/cpu (v1)
	// or /sys/fs/cgroup (v2).
	Root    string
	Version Version
	// Acct is v1's cpuacct hierarchy, where a group's CPU time is read
	// ("" on v2, whose cpu.stat has it, or where v1 has none).
	Acct string
	seq  int
}

// Open finds the machine's CPU controller under mount (normally
// /sys/fs/cgroup) and removes groups left by lab processes that are gone.
func Open(mount string) (*Controller, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w (running as uid %d)", ErrUnavailable, os.Geteuid())
	}
	return open(mount)
}

// open is Open without the root check: tests point it at a directory laid
// out like a hierarchy.
func open(mount string) (*Controller, error) {
	var c *Controller
	switch {
	case exists(filepath.Join(mount, "cpu", "cpu.cfs_quota_us")):
		c = &Controller{Root: filepath.Join(mount, "cpu"), Version: V1}
		if exists(filepath.Join(mount, "cpuacct", "cpuacct.usage")) {
			c.Acct = filepath.Join(mount, "cpuacct")
		}
	case exists(filepath.Join(mount, "cgroup.controllers")):
		ctl, err := os.ReadFile(filepath.Join(mount, "cgroup.controllers"))
		if err != nil || !hasWord(string(ctl), "cpu") {
			return nil, fmt.Errorf("%w: %s lists no cpu controller", ErrUnavailable, mount)
		}
		sub, _ := os.ReadFile(filepath.Join(mount, "cgroup.subtree_control"))
		if !hasWord(string(sub), "cpu") {
			if err := os.WriteFile(filepath.Join(mount, "cgroup.subtree_control"), []byte("+cpu"), 0o644); err != nil {
				return nil, fmt.Errorf("%w: enabling cpu in %s: %v", ErrUnavailable, mount, err)
			}
		}
		c = &Controller{Root: mount, Version: V2}
	default:
		return nil, fmt.Errorf("%w: neither %s/cpu (v1) nor %s/cgroup.controllers (v2)", ErrUnavailable, mount, mount)
	}
	c.sweep()
	return c, nil
}

// sweep removes the groups of lab processes that no longer run.
func (c *Controller) sweep() {
	for _, root := range []string{c.Root, c.Acct} {
		if root == "" {
			continue
		}
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			if pid, ok := ownerPID(e.Name()); e.IsDir() && ok && !proc.Alive(pid) {
				_ = removeDir(filepath.Join(root, e.Name()), root)
			}
		}
	}
}

// Leftovers lists the paths of the lab's groups under the controller (and
// its cpuacct hierarchy), of any process.
func (c *Controller) Leftovers() []string {
	var out []string
	for _, root := range []string{c.Root, c.Acct} {
		if root == "" {
			continue
		}
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			if _, ok := ownerPID(e.Name()); e.IsDir() && ok {
				out = append(out, filepath.Join(root, e.Name()))
			}
		}
	}
	return out
}

// ownerPID reads the creator's id from a group name: locklab-PID-N.
func ownerPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	p, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	return pid, err == nil && pid > 0
}

// Group is one CPU group with its quota.
type Group struct {
	c    *Controller
	Path string
	acct string // v1: the same group in the cpuacct hierarchy
	// CPUs is the quota in CPUs: the group's processes together run at
	// most CPUs × Period in every Period.
	CPUs   float64
	Period time.Duration
}

// New makes a group whose processes together get at most cpus CPUs of
// time (0.5: half of one CPU; 3: three CPUs), enforced every Period.
func (c *Controller) New(cpus float64) (*Group, error) {
	period := PeriodFor(cpus)
	quota := time.Duration(math.Round(cpus * float64(period)))
	if !(cpus > 0) || quota < MinQuota || period > MaxPeriod {
		return nil, fmt.Errorf("cgroup: a quota of %v CPUs needs %v in a period of at most %v; the kernel takes %v at least", cpus, quota, MaxPeriod, MinQuota)
	}
	g, err := c.make()
	if err != nil {
		return nil, err
	}
	g.CPUs, g.Period = cpus, period
	switch c.Version {
	case V1:
		err = g.write("cpu.cfs_period_us", strconv.FormatInt(period.Microseconds(), 10))
		if err == nil {
			err = g.write("cpu.cfs_quota_us", strconv.FormatInt(quota.Microseconds(), 10))
		}
	case V2:
		err = g.write("cpu.max", fmt.Sprintf("%d %d", quota.Microseconds(), period.Microseconds()))
	}
	if err != nil {
		_ = g.Remove()
		return nil, err
	}
	return g, nil
}

// make creates a new group of the lab's, in the cpuacct hierarchy too
// where v1 keeps one, with no settings yet.
func (c *Controller) make() (*Group, error) {
	var g *Group
	for {
		c.seq++
		g = &Group{c: c, Path: filepath.Join(c.Root, fmt.Sprintf("%s%d-%d", prefix, os.Getpid(), c.seq))}
		err := os.Mkdir(g.Path, 0o755)
		if errors.Is(err, os.ErrExist) {
			continue // another Controller of this process made it
		}
		if err != nil {
			return nil, fmt.Errorf("cgroup: %w", err)
		}
		break
	}
	if c.Acct != "" {
		g.acct = filepath.Join(c.Acct, filepath.Base(g.Path))
		if err := os.Mkdir(g.acct, 0o755); err != nil {
			_ = g.Remove()
			return nil, fmt.Errorf("cgroup: %w", err)
		}
	}
	return g, nil
}

// NewWeighted makes a group with the default CPU weight and no quota
// (v1 cpu.shares 1024, v2 cpu.weight 100): groups that all want the CPU
// split it equally, however many threads each runs, with no throttling;
// a group that leaves some idle leaves it to the others.
func (c *Controller) NewWeighted() (*Group, error) {
	g, err := c.make()
	if err != nil {
		return nil, err
	}
	switch c.Version {
	case V1:
		err = g.write("cpu.shares", "1024")
	case V2:
		err = g.write("cpu.weight", "100")
	}
	if err != nil {
		_ = g.Remove()
		return nil, err
	}
	return g, nil
}

// Add moves a process, with every thread it has and will have, into the
// group.
func (g *Group) Add(pid int) error {
	if err := g.write("cgroup.procs", strconv.Itoa(pid)); err != nil {
		return err
	}
	if g.acct != "" {
		p := filepath.Join(g.acct, "cgroup.procs")
		if err := os.WriteFile(p, []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("cgroup: %s = %d: %w", p, pid, err)
		}
	}
	return nil
}

// ProcsFiles are the files Add writes a PID to: the group's cgroup.procs,
// and its twin's in v1's cpuacct hierarchy. A process that writes its own
// PID to each before it execs a program runs that program, and every
// process it forks, in the group from its first instruction.
func (g *Group) ProcsFiles() []string {
	out := []string{filepath.Join(g.Path, "cgroup.procs")}
	if g.acct != "" {
		out = append(out, filepath.Join(g.acct, "cgroup.procs"))
	}
	return out
}

// Usage is the CPU time the group's processes have used since it was made:
// v1's cpuacct.usage, v2's cpu.stat usage_usec. Unlike a process's own
// figure it holds every process in the group, children included.
func (g *Group) Usage() (time.Duration, error) {
	if g.acct != "" {
		b, err := os.ReadFile(filepath.Join(g.acct, "cpuacct.usage"))
		if err != nil {
			return 0, err
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return time.Duration(ns), err
	}
	if g.c.Version == V1 {
		return 0, fmt.Errorf("cgroup: %s has no cpuacct hierarchy to read usage from", g.c.Root)
	}
	st, err := g.Stat()
	return st.Usage, err
}

// Stat is the group's throttling so far (cpu.stat).
type Stat struct {
	Periods, Throttled int64         // periods with runnable tasks; those that hit the quota
	ThrottledTime      time.Duration // time the group's tasks were held back
	Usage              time.Duration // v2: CPU time used (usage_usec); v1 keeps it in cpuacct
}

// Stat reads cpu.stat.
func (g *Group) Stat() (Stat, error) {
	f, err := os.Open(filepath.Join(g.Path, "cpu.stat"))
	if err != nil {
		return Stat{}, err
	}
	defer f.Close()
	var s Stat
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "nr_periods":
			s.Periods = n
		case "nr_throttled":
			s.Throttled = n
		case "throttled_time": // v1, ns
			s.ThrottledTime = time.Duration(n)
		case "throttled_usec": // v2
			s.ThrottledTime = time.Duration(n) * time.Microsecond
		case "usage_usec": // v2
			s.Usage = time.Duration(n) * time.Microsecond
		}
	}
	return s, sc.Err()
}

// Sub is s − a, field by field.
func (s Stat) Sub(a Stat) Stat {
	return Stat{Periods: s.Periods - a.Periods, Throttled: s.Throttled - a.Throttled, ThrottledTime: s.ThrottledTime - a.ThrottledTime, Usage: s.Usage - a.Usage}
}

// Remove moves any process still in the group to its parent and removes
// the group. It is safe to call twice.
func (g *Group) Remove() error {
	if g.acct != "" {
		if err := removeDir(g.acct, g.c.Acct); err != nil {
			return err
		}
	}
	return removeDir(g.Path, g.c.Root)
}

// removeDir moves any process still in the group dir to parent's and
// removes dir.
func removeDir(dir, parent string) error {
	if !exists(dir) {
		return nil
	}
	if procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err == nil {
		for _, p := range strings.Fields(string(procs)) {
			_ = os.WriteFile(filepath.Join(parent, "cgroup.procs"), []byte(p), 0o644)
		}
	}
	err := syscall.Rmdir(dir)
	if errors.Is(err, syscall.ENOENT) {
		return nil
	}
	if err != nil && !isCgroupFS(dir) {
		return os.RemoveAll(dir) // a test's directory, not a kernel group
	}
	if err != nil {
		return fmt.Errorf("cgroup: remove %s: %w", dir, err)
	}
	return nil
}

// isCgroupFS reports whether dir lives in a cgroup file system.
func isCgroupFS(dir string) bool {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return false
	}
	const cgroupMagic, cgroup2Magic = 0x27e0eb, 0x63677270
	return st.Type == cgroupMagic || st.Type == cgroup2Magic
}

func (g *Group) write(file, value string) error {
	if err := os.WriteFile(filepath.Join(g.Path, file), []byte(value), 0o644); err != nil {
		return fmt.Errorf("cgroup: %s = %s: %w", filepath.Join(g.Path, file), value, err)
	}
	return nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}
