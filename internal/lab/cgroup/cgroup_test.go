package cgroup

import (
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
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeV1 lays out a directory as a v1 cpu hierarchy's root.
func fakeV1(t *testing.T) string {
	mount := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(mount, "cpu"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(mount, "cpu", "cpu.cfs_quota_us"), []byte("-1\n"), 0o644))
	return mount
}

func read(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

func TestQuotaFiles(t *testing.T) {
	t.Run("v1", func(t *testing.T) {
		c, err := open(fakeV1(t))
		require.NoError(t, err)
		require.Equal(t, V1, c.Version)
		g, err := c.New(0.25)
		require.NoError(t, err)
		assert.Equal(t, "10000", read(t, filepath.Join(g.Path, "cpu.cfs_period_us")))
		assert.Equal(t, "2500", read(t, filepath.Join(g.Path, "cpu.cfs_quota_us")))
		require.NoError(t, g.Remove())
		require.NoError(t, g.Remove(), "twice")
		assert.NoDirExists(t, g.Path)
	})
	t.Run("a small quota gets a longer period", func(t *testing.T) {
		c, err := open(fakeV1(t))
		require.NoError(t, err)
		g, err := c.New(1.0 / 15)
		require.NoError(t, err)
		assert.Equal(t, "15000", read(t, filepath.Join(g.Path, "cpu.cfs_period_us")))
		assert.Equal(t, "1000", read(t, filepath.Join(g.Path, "cpu.cfs_quota_us")))
		assert.Equal(t, Period, PeriodFor(0.1), "the control: 1 ms in 10 ms keeps the period")
	})
	t.Run("v2", func(t *testing.T) {
		mount := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(mount, "cgroup.controllers"), []byte("cpuset cpu io memory\n"), 0o644))
		c, err := open(mount)
		require.NoError(t, err)
		require.Equal(t, V2, c.Version)
		assert.Equal(t, "+cpu", read(t, filepath.Join(mount, "cgroup.subtree_control")), "the controller is enabled for children")
		g, err := c.New(3)
		require.NoError(t, err)
		assert.Equal(t, "30000 10000", read(t, filepath.Join(g.Path, "cpu.max")))
	})
	t.Run("no cpu controller", func(t *testing.T) {
		mount := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(mount, "cgroup.controllers"), []byte("memory io\n"), 0o644))
		_, err := open(mount)
		assert.ErrorIs(t, err, ErrUnavailable)
		_, err = open(t.TempDir())
		assert.ErrorIs(t, err, ErrUnavailable)
	})
	t.Run("quota below the kernel's floor", func(t *testing.T) {
		c, err := open(fakeV1(t))
		require.NoError(t, err)
		for _, cpus := range []float64{0, -1, 0.0005} {
			_, err := c.New(cpus)
			assert.Error(t, err, "%v CPUs", cpus)
		}
		assert.Empty(t, c.Leftovers(), "a refused group leaves nothing")
	})
}

// TestSweepRemovesTheDeadOnly: a group of a process that is gone is removed
// by the next Open; one of a live process stays. The control is the live
// one: a sweep that removed everything would fail it.
func TestSweepRemovesTheDeadOnly(t *testing.T) {
	mount := fakeV1(t)
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	root := filepath.Join(mount, "cpu")
	deadGroup := filepath.Join(root, prefix+strconv.Itoa(dead.Process.Pid)+"-1")
	liveGroup := filepath.Join(root, prefix+strconv.Itoa(os.Getpid())+"-99")
	other := filepath.Join(root, "someone-else")
	for _, d := range []string{deadGroup, liveGroup, other} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	c, err := open(mount)
	require.NoError(t, err)
	assert.NoDirExists(t, deadGroup)
	assert.DirExists(t, liveGroup)
	assert.DirExists(t, other, "not the lab's")
	assert.Equal(t, []string{liveGroup}, c.Leftovers())
}

// TestRealQuotaThrottles runs a busy loop in a real group of a tenth of a
// CPU and checks that the kernel held it to about that, and that nothing is
// left behind. The control is the same loop outside the group, which runs
// far more.
func TestRealQuotaThrottles(t *testing.T) {
	c, err := Open("/sys/fs/cgroup")
	if err != nil {
		t.Fatalf("this machine must offer a CPU controller to the lab: %v", err)
	}
	spin := func(g *Group) time.Duration {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		require.NoError(t, cmd.Start())
		if g != nil {
			require.NoError(t, g.Add(cmd.Process.Pid))
		}
		time.Sleep(500 * time.Millisecond)
		stat := read(t, "/proc/"+strconv.Itoa(cmd.Process.Pid)+"/schedstat")
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		ns, err := strconv.ParseInt(strings.Fields(stat)[0], 10, 64)
		require.NoError(t, err)
		return time.Duration(ns)
	}
	g, err := c.New(0.1)
	require.NoError(t, err)
	defer g.Remove()
	before, err := g.Stat()
	require.NoError(t, err)
	inside := spin(g)
	after, err := g.Stat()
	require.NoError(t, err)
	// The control competes for the CPUs with whatever else runs (make test
	// runs packages in parallel on two CPUs): one of a few tries has a CPU
	// for a good part of its half second.
	var outside time.Duration
	for range 5 {
		if outside = max(outside, spin(nil)); outside > 2*inside {
			break
		}
	}
	t.Logf("CPU in 0.5 s: %v in a group of 0.1 CPU, %v outside; throttled %d periods", inside, outside, after.Sub(before).Throttled)
	assert.Less(t, inside, 100*time.Millisecond, "held to about 50 ms")
	assert.Greater(t, outside, 2*inside, "the control runs unthrottled")
	assert.Positive(t, after.Sub(before).Throttled)
	used, err := g.Usage()
	require.NoError(t, err)
	// The loop ran a moment before it joined the group, which the group
	// does not count; the rest of its CPU is the group's.
	assert.LessOrEqual(t, used, inside+time.Millisecond, "the group's account holds no more than the loop's CPU")
	assert.Greater(t, used, 30*time.Millisecond, "and most of it: 0.1 CPU over 0.5 s is 50 ms")
	require.NoError(t, g.Remove())
	assert.NoDirExists(t, g.Path)
	assert.NotContains(t, c.Leftovers(), g.Path)
	for _, l := range c.Leftovers() {
		assert.NotContains(t, l, filepath.Base(g.Path), "nor in cpuacct")
	}
}

// TestWeightedGroupsSplitTheCPU: two weighted groups on one CPU, one with
// three busy loops and one with one, each get about half of it; the
// control, the same four loops without groups, gives the three 3/4.
func TestWeightedGroupsSplitTheCPU(t *testing.T) {
	c, err := Open("/sys/fs/cgroup")
	require.NoError(t, err)
	loops := func(n int, g *Group) []*exec.Cmd {
		var out []*exec.Cmd
		for range n {
			cmd := exec.Command("taskset", "-c", "0", "sh", "-c", "while :; do :; done")
			require.NoError(t, cmd.Start())
			if g != nil {
				require.NoError(t, g.Add(cmd.Process.Pid))
			}
			out = append(out, cmd)
		}
		return out
	}
	share := func(three, one []*exec.Cmd) float64 {
		cpu := func(cmds []*exec.Cmd) (sum time.Duration) {
			for _, c := range cmds {
				f := strings.Fields(read(t, "/proc/"+strconv.Itoa(c.Process.Pid)+"/schedstat"))
				ns, _ := strconv.ParseInt(f[0], 10, 64)
				sum += time.Duration(ns)
			}
			return sum
		}
		// Every loop running first: on a busy machine one that is still
		// starting (fork, exec) would lose its group some of the window.
		time.Sleep(200 * time.Millisecond)
		a0, b0 := cpu(three), cpu(one)
		time.Sleep(time.Second)
		a, b := cpu(three)-a0, cpu(one)-b0
		for _, c := range append(three, one...) {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		return a.Seconds() / (a + b).Seconds()
	}
	g3, err := c.NewWeighted()
	require.NoError(t, err)
	defer g3.Remove()
	g1, err := c.NewWeighted()
	require.NoError(t, err)
	defer g1.Remove()
	grouped := share(loops(3, g3), loops(1, g1))
	plain := share(loops(3, nil), loops(1, nil))
	t.Logf("three loops' share of the CPU: %.2f in equal groups, %.2f without", grouped, plain)
	assert.InDelta(t, 0.5, grouped, 0.1)
	assert.InDelta(t, 0.75, plain, 0.1, "the control")
	used, err := g3.Usage()
	require.NoError(t, err)
	assert.Positive(t, used)
}

// TestProcsFiles: a PID written to each of a group's ProcsFiles is what Add
// writes: v1's cpu and cpuacct twins, v2's one file. The control: a v1
// hierarchy without cpuacct has one file.
func TestProcsFiles(t *testing.T) {
	mount := fakeV1(t)
	require.NoError(t, os.MkdirAll(filepath.Join(mount, "cpuacct"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(mount, "cpuacct", "cpuacct.usage"), []byte("0\n"), 0o644))
	c, err := open(mount)
	require.NoError(t, err)
	g, err := c.New(0.5)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, g.Remove()) })
	files := g.ProcsFiles()
	require.Len(t, files, 2)
	require.NoError(t, g.Add(4242))
	for _, f := range files {
		assert.Equal(t, "4242", read(t, f), f)
	}

	c, err = open(fakeV1(t))
	require.NoError(t, err)
	g, err = c.New(0.5)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, g.Remove()) })
	assert.Len(t, g.ProcsFiles(), 1, "the control")
}

// TestTwoControllersOfOneProcess: two controllers over one hierarchy in
// one process make groups of different names. The control: the name the
// second would have taken first is the first's.
func TestTwoControllersOfOneProcess(t *testing.T) {
	mount := fakeV1(t)
	a, err := open(mount)
	require.NoError(t, err)
	b, err := open(mount)
	require.NoError(t, err)
	ga, err := a.New(0.5)
	require.NoError(t, err)
	gb, err := b.New(0.5)
	require.NoError(t, err)
	assert.NotEqual(t, ga.Path, gb.Path)
	assert.Equal(t, ga.Path, filepath.Join(b.Root, fmt.Sprintf("%s%d-%d", prefix, os.Getpid(), 1)), "the control")
	require.NoError(t, ga.Remove())
	require.NoError(t, gb.Remove())
}
