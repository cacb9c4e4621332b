package run

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/cgroup"
	"github.com/locklab/locklab/internal/lab/cpuset"
	"github.com/locklab/locklab/internal/lab/duet"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/workload/dbbank/dbinst"
)

// TestDuetForeign: on a set the lab's processes used 0.6 of, interrupts (its
// own loopback traffic) and the runner's own CPU are not foreign; steal
// and another process's time are, and pass the gate (the controls).
func TestDuetForeign(t *testing.T) {
	quiet := cpuset.Usage{User: 0.55, System: 0.05, SoftIRQ: 0.12, IRQ: 0.01, Idle: 0.27}
	assert.InDelta(t, 0, duetForeign(quiet, 0.6, 0), 1e-9, "interrupts are the lab's traffic")
	withRunner := quiet
	withRunner.User += 0.03
	withRunner.Idle -= 0.03
	assert.InDelta(t, 0, duetForeign(withRunner, 0.6, 0.03), 1e-9, "the runner's CPU is the lab's")
	stolen := quiet
	stolen.Steal, stolen.Idle = 0.15, 0.12
	other := quiet
	other.User, other.Idle = 0.75, 0.07
	for name, u := range map[string]cpuset.Usage{"steal": stolen, "another process": other} {
		rd := duet.Round{ServerForeign: duetForeign(u, 0.6, 0)}
		duet.Gate(&rd, 0.1)
		assert.NotEmpty(t, rd.Dropped, name)
	}
}

// TestKnownArgs: the known-answer arm is the baseline's server with the
// known spin in every data call.
func TestKnownArgs(t *testing.T) {
	base := []string{"-mode", "mutex", "-work", "10µs"}
	got := knownArgs(base, 2*time.Microsecond)
	assert.Equal(t, []string{"-mode", "mutex", "-work", "10µs", "-call-work", "2µs"}, got)
	assert.Len(t, base, 4, "the baseline's own flags are left as they were")
}

// TestSchedArgv: under -duet-sched batch a process started as the
// runner starts a server runs SCHED_BATCH (policy 3 in /proc/PID/stat),
// and so do the threads and children it starts after; the control, the
// kernel's default, runs SCHED_OTHER (0).
func TestSchedArgv(t *testing.T) {
	policy := func(pid int) int {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		require.NoError(t, err)
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		p, err := strconv.Atoi(f[38]) // field 41, policy, counted from state (field 3)
		require.NoError(t, err)
		return p
	}
	for sched, want := range map[string]int{SchedBatch: 3, SchedNormal: 0} {
		argv := schedArgv(sched, []string{"sh", "-c", "sleep 5 & wait"})
		cmd := exec.Command(argv[0], argv[1:]...)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		var child int
		require.Eventually(t, func() bool {
			kids := descendants(cmd.Process.Pid)
			if len(kids) == 0 {
				return false
			}
			child = kids[0]
			return true
		}, 5*time.Second, 10*time.Millisecond)
		assert.Equal(t, want, policy(cmd.Process.Pid), sched)
		assert.Equal(t, want, policy(child), "%s: a child inherits it", sched)
	}
	assert.Equal(t, []string{"x"}, schedArgv(SchedNormal, []string{"x"}))
}

// TestResolveSched: a plan over a database keeps the kernel's default
// scheduling where -duet-sched was not given, and its setup says so; the
// controls, a plan without a database and a policy asked for, keep theirs.
func TestResolveSched(t *testing.T) {
	for _, tt := range []struct {
		name     string
		in       Duet
		overDB   bool
		want     string
		withNote bool
	}{
		{"default over a database", Duet{Sched: SchedBatch, SchedFallback: true}, true, SchedNormal, true},
		{"default without one", Duet{Sched: SchedBatch, SchedFallback: true}, false, SchedBatch, false},
		{"batch asked for over a database", Duet{Sched: SchedBatch}, true, SchedBatch, false},
		{"normal asked for", Duet{Sched: SchedNormal}, false, SchedNormal, false},
	} {
		got, note := resolveSched(tt.in, tt.overDB)
		assert.Equal(t, tt.want, got.Sched, tt.name)
		assert.Equal(t, tt.withNote, note != "", tt.name)
	}
}

// TestBeforeBatch: a report whose rounds ran under the kernel's default
// scheduling before batch became the default opens by saying so, and
// WriteMarkdown puts it above the command; the controls, rounds under
// batch, rounds whose setup records their scheduling (every run since)
// and rounds over a database, which keep the kernel's default, do not.
func TestBeforeBatch(t *testing.T) {
	old := duetMeta{Sched: SchedNormal, Setup: []string{"every round: fresh servers"}}
	note := beforeBatch(old)
	require.NotEmpty(t, note)
	var b strings.Builder
	require.NoError(t, duet.WriteMarkdown(&b, duet.Header{Title: "t", Command: "make compare", Before: note}, duet.Result{}))
	assert.Less(t, strings.Index(b.String(), note), strings.Index(b.String(), "Command: `make compare`"), "the note opens the report")
	assert.Empty(t, beforeBatch(duetMeta{Sched: SchedBatch, Setup: old.Setup}), "under batch")
	assert.Empty(t, beforeBatch(duetMeta{Sched: SchedNormal, Setup: []string{setupNormal}}), "asked for since")
	assert.Empty(t, beforeBatch(duetMeta{Sched: SchedNormal, Setup: []string{setupNormalDB}}), "over a database since")
	assert.Empty(t, beforeBatch(duetMeta{Sched: SchedNormal, Setup: []string{setupOverDB + "each arm's server starts a private MariaDB"}}), "over a database before")
}

// TestDuetApplies: the plans side-by-side rounds cannot run say why, and
// run isolated; the control, the default plan, runs side by side.
func TestDuetApplies(t *testing.T) {
	base := Options{Workloads: "counter,bank-A", Modes: "mutex,inputQ", Drivers: "go", Model: "closed", VUs: "10", H2loadVUs: "100",
		Reps: 3, Baseline: "mutex", Duration: time.Second, Warmup: 400 * time.Millisecond, Pin: true, Measure: MeasureDuet,
		Factors: map[string]string{}, Conns: 4, MaxVUs: 100}
	cfg, err := NewConfig(base, 2)
	require.NoError(t, err)
	assert.Empty(t, DuetApplies(cfg), "the control")
	for name, change := range map[string]func(o *Options){
		"k6":          func(o *Options) { o.Drivers = "k6" },
		"open":        func(o *Options) { o.Model, o.Rates, o.VUs = "open", "100", "" },
		"unpinned":    func(o *Options) { o.Pin = false },
		"shared CPUs": func(o *Options) { o.Factors = map[string]string{"server-cpus": "1,2"}; o.ShareCPUs = true },
	} {
		o := base
		o.Factors = map[string]string{}
		change(&o)
		cfg, err := NewConfig(o, 2)
		require.NoError(t, err, name)
		assert.NotEmpty(t, DuetApplies(cfg), name)
	}
	// Several Go releases run side by side, each design against itself
	// built by the first (duetGroups).
	o := base
	o.Factors = map[string]string{"runtime": "go1.26.8,go1.27.3"}
	cfg, err = NewConfig(o, 2)
	require.NoError(t, err)
	assert.Empty(t, DuetApplies(cfg), "runtimes")
	// Over a database the arms' files go on a tmpfs: a plan runs side by
	// side where DBFilesRoot is one, isolated where it is not.
	o = base
	o.Workloads, o.Factors = "bank-A", map[string]string{"backend": "mysql"}
	cfg, err = NewConfig(o, 2)
	require.NoError(t, err)
	require.True(t, isTmpfs(DBFilesRoot), "this machine's %s", DBFilesRoot)
	assert.Empty(t, DuetApplies(cfg), "database, files on a tmpfs")
	root := DBFilesRoot
	t.Cleanup(func() { DBFilesRoot = root })
	DBFilesRoot = t.TempDir()
	if isTmpfs(DBFilesRoot) {
		t.Fatalf("%s is a tmpfs: the control needs a directory that is not", DBFilesRoot)
	}
	assert.Contains(t, DuetApplies(cfg), "is not one", "database, no tmpfs")
}

// TestDBFiles: a runner's database directory holds an installed data
// directory, is removed when the runner is done, and one left by a runner
// that died is removed by the next; a live runner's is left alone (the
// control).
func TestDBFiles(t *testing.T) {
	root := DBFilesRoot
	t.Cleanup(func() { DBFilesRoot = root })
	DBFilesRoot = filepath.Join(root, fmt.Sprintf("locklab-test-%d", os.Getpid()))
	require.NoError(t, os.MkdirAll(DBFilesRoot, 0o700))
	t.Cleanup(func() { _ = os.RemoveAll(DBFilesRoot) })
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	stale := filepath.Join(DBFilesRoot, fmt.Sprintf("%s%d", dbFilesPrefix, dead.Process.Pid))
	live := filepath.Join(DBFilesRoot, fmt.Sprintf("%s%d", dbFilesPrefix, os.Getppid()))
	for _, d := range []string{stale, live} {
		require.NoError(t, os.MkdirAll(d, 0o700))
	}

	f, err := newDBFiles(t.Context())
	require.NoError(t, err)
	assert.NoDirExists(t, stale, "a dead runner's")
	assert.DirExists(t, live, "a live runner's")
	assert.True(t, dbinst.IsData(f.template))
	assert.Equal(t, []string{"TMPDIR=" + f.dir}, f.env())
	require.NoError(t, f.close())
	assert.NoDirExists(t, f.dir)
}

// TestLabCPU: the lab's CPU at one instant is its arms' groups' and
// drivers' CPU, read without a call to any server; an arm without a group
// (the control) leaves the reading to the servers' own figures.
func TestLabCPU(t *testing.T) {
	c, err := cgroup.Open("/sys/fs/cgroup")
	require.NoError(t, err)
	var arms []*duetArm
	var loops []int
	for range 2 {
		g, err := c.NewWeighted()
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Remove() })
		busy := exec.Command("sh", "-c", "while :; do :; done")
		require.NoError(t, busy.Start())
		t.Cleanup(func() { _ = busy.Process.Kill(); _ = busy.Wait() })
		require.NoError(t, g.Add(busy.Process.Pid))
		loops = append(loops, busy.Process.Pid)
		drv := exec.Command("sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 60")
		require.NoError(t, drv.Start())
		t.Cleanup(func() { _ = drv.Process.Kill(); _ = drv.Wait() })
		arms = append(arms, &duetArm{group: g, driver: drv})
	}
	// The loops' own CPU (schedstat, nanoseconds), read around the two
	// readings: the groups hold nothing else.
	ran := func() (sum float64) {
		for _, pid := range loops {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
			require.NoError(t, err)
			var ns int64
			_, err = fmt.Sscan(string(b), &ns)
			require.NoError(t, err)
			sum += float64(ns) / 1e9
		}
		return sum
	}
	r0 := ran()
	t0 := labCPU(arms)
	time.Sleep(300 * time.Millisecond)
	t1 := labCPU(arms)
	r1 := ran()
	require.True(t, t0.ok && t1.ok)
	got := t1.server - t0.server
	assert.Positive(t, got)
	assert.LessOrEqual(t, got, r1-r0+0.005, "no more than the loops ran")
	assert.InDelta(t, r1-r0, got, 0.02+0.1*(r1-r0), "the loops' CPU")
	assert.Positive(t, t1.driver, "the drivers' CPU")

	arms = append(arms, &duetArm{})
	assert.False(t, labCPU(arms).ok, "the control: an arm without a group")
}

// TestProbeFallback: a group whose drivers could not keep up under equal
// weights goes on under quotas, where the plan did not name -duet-cpu; the
// controls: a plan that named weights, a clear probe, a probe the gate
// spoiled throughout, and a group already under quotas are not moved.
func TestProbeFallback(t *testing.T) {
	bound := probeOutcome{kept: 3, slow: []string{"g, mutex: the server used 63% of its 0.2-CPU quota"}}
	assert.True(t, probeFallback(CPUWeight, true, bound))
	assert.False(t, probeFallback(CPUWeight, false, bound), "the control: -duet-cpu weight given")
	assert.False(t, probeFallback(CPUWeight, true, probeOutcome{clear: true, kept: 1}), "the control: the drivers kept up")
	assert.False(t, probeFallback(CPUWeight, true, probeOutcome{spoiled: "steal"}), "the control: no round kept")
	assert.False(t, probeFallback(CPUQuota, true, bound), "the control: already under quotas")

	// Its quota, once moved: the plan's share of the server CPUs, split.
	r := &duetRunner{cfg: Config{Duet: Duet{CPU: CPUWeight, Share: 0.6}}}
	g := duetGroup{arms: make([]duet.Arm, 5), place: plan.Placement{Server: []int{0}}, cpu: CPUWeight}
	assert.InDelta(t, 0.2, r.quota(g), 1e-9, "a fair share under weights")
	g.cpu = CPUQuota
	assert.InDelta(t, 0.12, r.quota(g), 1e-9, "a quota of 60% of one CPU over five arms")
}

// TestEndMarked: the runner writes each end of the window as a line to
// the drivers that mark their window (the Go driver), on a pipe, their
// stdin, and once the window is read closes it, which ends them; h2load,
// which has no marks, gets no pipe and runs out its tail, and so does the
// control, a Go driver the runner did not mark.
func TestEndMarked(t *testing.T) {
	start := func(driver string, marked bool) *duetArm {
		a := &duetArm{job: Job{Spec: plan.Spec{Driver: driver}, Marked: marked, Log: filepath.Join(t.TempDir(), "driver.log")}}
		require.NoError(t, a.start([]string{"cat"}, nil)) // cat copies its stdin to the log, and ends with it
		t.Cleanup(func() { _ = a.driver.Process.Kill(); <-a.waited; a.dlog.Close() })
		return a
	}
	goArm, h2Arm, unmarked := start(goDriver{}.Name(), true), start(h2loadDriver{}.Name(), true), start(goDriver{}.Name(), false)
	arms := []*duetArm{goArm, h2Arm, unmarked, {}}
	markWindow(arms)
	markWindow(arms)
	endMarked(arms)
	select {
	case <-goArm.waited:
	case <-time.After(5 * time.Second):
		t.Fatal("the Go driver was not ended")
	}
	log, err := os.ReadFile(goArm.job.Log)
	require.NoError(t, err)
	assert.Equal(t, "\n\n", string(log), "the two marks, in the driver's stdin")
	assert.Nil(t, h2Arm.stdin, "h2load has no marks")
	assert.Nil(t, unmarked.stdin, "the control: a Go driver the runner did not mark")
}

// TestWindowP99: h2load's per-request log is cut to the calls that ended
// inside the window; the control reads the whole log, whose slow calls
// outside the window set its p99.
func TestWindowP99(t *testing.T) {
	dir := t.TempDir()
	job := Job{Spec: plan.Spec{Driver: h2loadDriver{}.Name()}, Scratch: dir, Warmup: true}
	from := time.Unix(1_000_000, 0)
	to := from.Add(time.Second)
	var b strings.Builder
	for i := range 200 {
		start, us := from.Add(time.Duration(i)*4*time.Millisecond), int64(1000) // inside: 1 ms
		if i%2 == 1 {
			start, us = to.Add(time.Duration(i)*time.Millisecond), 50_000 // after the window: 50 ms
		}
		fmt.Fprintf(&b, "%d\t200\t%d\n", start.UnixMicro(), us)
	}
	require.NoError(t, os.WriteFile(h2loadLogPath(job), []byte(b.String()), 0o644))
	p99, err := windowP99(job, from, to)
	require.NoError(t, err)
	assert.InDelta(t, 1.0, p99, 0.01, "the window's calls only")
	whole, err := windowP99(job, from, to.Add(time.Hour))
	require.NoError(t, err)
	assert.InDelta(t, 50.0, whole, 0.5, "the control: every call")
	_, err = windowP99(job, to.Add(time.Hour), to.Add(2*time.Hour))
	assert.ErrorContains(t, err, "no call")
}

// TestReadProbe: a group whose driver kept a judged arm below its quota
// in every probe round the gate kept is refused, with the figures; one
// kept round with every judged arm at its quota clears it, so a moment
// that stalled the drivers does not refuse the plan (the control); a
// round the gate dropped counts for neither, and the noop ceiling is not
// judged.
func TestReadProbe(t *testing.T) {
	g := duetGroup{name: "counter · go · 100", arms: []duet.Arm{
		{Name: "mutex", Role: duet.RoleBaseline}, {Name: "inputQ", Role: duet.RoleDesign}, {Name: "noop", Role: duet.RoleCeiling},
	}}
	o := duet.DefaultOptions
	round := func(inputQ, noop, busy float64) duet.Round {
		m := func(name string, util float64) duet.Measure {
			return duet.Measure{Arm: name, Requests: 5000, CPU: 0.2 * util, Window: 1, Quota: 0.2}
		}
		return duet.Round{Group: g.name, DriverBusy: busy, Arms: []duet.Measure{m("mutex", 1), m("inputQ", inputQ), m("noop", noop)}}
	}
	slow := round(0.7, 1, 0.95)
	fine := round(1, 1, 0.95)
	dropped := round(0.5, 1, 0.95)
	dropped.Dropped = "steal 20% on the server CPUs"

	p := readProbe(g, []duet.Round{slow, slow, slow}, o)
	assert.False(t, p.clear)
	assert.Equal(t, 3, p.kept)
	require.Len(t, p.slow, 1)
	assert.Contains(t, p.slow[0], "counter · go · 100, inputQ: the server used 70% of its 0.2-CPU quota (5000 calls/s); the drivers' CPUs were 95% busy")

	p = readProbe(g, []duet.Round{slow, fine}, o)
	assert.True(t, p.clear, "the control: one kept round at its quota clears the group")
	assert.True(t, readProbe(g, []duet.Round{dropped, fine}, o).clear)
	p = readProbe(g, []duet.Round{dropped, dropped}, o)
	assert.False(t, p.clear)
	assert.Zero(t, p.kept, "a dropped round is no evidence either way")
	assert.Equal(t, dropped.Dropped, p.spoiled)
	assert.True(t, readProbe(g, []duet.Round{round(1, 0.5, 0.95)}, o).clear, "the ceiling is not judged")
	assert.True(t, readProbe(g, []duet.Round{round(0.7, 1, 0.5)}, o).clear, "below its quota with drivers to spare: the closed loop's pace")
}

// TestDuetWindow: a group takes its driver's window where one is named,
// the plan's -duration otherwise; the plan's estimate and its progress
// line follow each group's.
func TestDuetWindow(t *testing.T) {
	d := Duet{Windows: map[string]time.Duration{"h2load": 2 * time.Second}}
	assert.Equal(t, 2*time.Second, d.window("h2load", time.Second))
	assert.Equal(t, time.Second, d.window("go", time.Second))
	assert.Equal(t, time.Second, Duet{}.window("h2load", time.Second), "the control: no windows named")

	group := func(driver string) duetGroup {
		return duetGroup{arms: []duet.Arm{{Name: "mutex"}}, specs: map[string]plan.Spec{"mutex": {Driver: driver}}}
	}
	cfg := Config{Duration: time.Second, Duet: d}
	assert.Equal(t, "a 1s window, 2s under h2load", windowsText(cfg, []duetGroup{group("go"), group("h2load")}))
	assert.Equal(t, "a 2s window", windowsText(cfg, []duetGroup{group("h2load")}))
	assert.Equal(t, "a 1s window", windowsText(cfg, []duetGroup{group("go")}))
	assert.Equal(t, "a 1s window", windowsText(Config{Duration: time.Second}, []duetGroup{group("go"), group("h2load")}))
}
