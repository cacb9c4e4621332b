package hosts

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/proc"
)

// started makes hosts for a test and removes them when it ends, even if it
// fails.
func started(t *testing.T, opts Options) *Set {
	t.Helper()
	s, err := Start(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

// left is the leak check: the namespaces and links of runner pid that
// exist now.
func left(t *testing.T, pid int) []string {
	t.Helper()
	names, err := Made(context.Background())
	require.NoError(t, err)
	var out []string
	for _, n := range names {
		if n.PID == pid {
			out = append(out, n.Name)
		}
	}
	return out
}

// liveOwner is a PID that stays alive for the test (a sleeping process, not
// this one), so that Sweep leaves its names alone.
func liveOwner(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd.Process.Pid
}

// leaveBehind makes the hosts of a runner that died without closing them:
// it holds the lock from their making through f, so that no other runner's
// Start or Sweep removes them first.
func leaveBehind(t *testing.T, dead, hosts int, f func()) {
	t.Helper()
	unlock, err := lock()
	require.NoError(t, err)
	defer unlock()
	_, err = start(context.Background(), Options{Hosts: hosts, Net: DefaultNet, pid: dead})
	require.NoError(t, err)
	require.Len(t, left(t, dead), 2*hosts)
	f()
}

// deadOwner is the PID of a process that has exited: a runner killed
// without closing its hosts.
func deadOwner(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	require.False(t, proc.Alive(cmd.Process.Pid), "the PID was reused at once")
	return cmd.Process.Pid
}

// nsIdentity is what /proc/self/ns/net reads inside the namespace.
func nsIdentity(t *testing.T, namespace string) string {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat("/run/netns/"+namespace, &st))
	return fmt.Sprintf("net:[%d]", st.Ino)
}

// TestHostsAreReachable starts a TCP server inside each host, bound to the
// host's address (which exists only inside its namespace), and dials it from
// the root namespace: the answer names the host's namespace. After Close
// nothing of the runner is left and the addresses are gone. (It does not dial
// a closed host: with no link, the address would route out of the machine.)
func TestHostsAreReachable(t *testing.T) {
	require.NoError(t, Supported())
	s, err := Start(context.Background(), Options{Hosts: 2})
	require.NoError(t, err)
	closed := false
	t.Cleanup(func() {
		if !closed {
			assert.NoError(t, s.Close())
		}
	})
	require.Len(t, s.Hosts(), 2)
	a, b := s.Hosts()[0], s.Hosts()[1]
	assert.NotEqual(t, a.Addr, b.Addr)
	assert.NotEqual(t, a.Namespace, b.Namespace)
	assert.ElementsMatch(t, []string{a.Namespace, a.Link, b.Namespace, b.Link}, left(t, os.Getpid()))

	for _, h := range s.Hosts() {
		addr := netip.AddrPortFrom(h.Addr, 7000).String()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := h.Command(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), listenEnv+"="+addr)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		t.Cleanup(func() {
			cancel()
			_ = cmd.Wait()
		})
		var line string
		require.Eventually(t, func() bool {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				return false
			}
			defer c.Close()
			line, err = bufio.NewReader(c).ReadString('\n')
			return err == nil
		}, 5*time.Second, 20*time.Millisecond, "no answer from %s: %s", addr, &stderr)
		assert.Equal(t, nsIdentity(t, h.Namespace), strings.TrimSpace(line), "the server ran in %s", h.Namespace)
		require.NoError(t, cmd.Wait())
	}

	require.NoError(t, s.Close())
	closed = true
	assert.Empty(t, left(t, os.Getpid()))
	assert.NoError(t, s.Close(), "a second Close")
	out, err := ipOut(context.Background(), "-o", "addr", "show")
	require.NoError(t, err)
	assert.NotContains(t, out, a.Gateway.String()+"/", "the link's address is gone")
}

// TestHostsOfTwoSetsDoNotOverlap: a second Set takes /30s the first does
// not hold.
func TestHostsOfTwoSetsDoNotOverlap(t *testing.T) {
	a := started(t, Options{Hosts: 2})
	b := started(t, Options{Hosts: 2, pid: liveOwner(t)})
	for _, x := range a.Hosts() {
		for _, y := range b.Hosts() {
			assert.False(t, netip.PrefixFrom(x.Addr, 30).Masked().Overlaps(netip.PrefixFrom(y.Addr, 30).Masked()), "%s and %s", x.Addr, y.Addr)
		}
	}
}

// TestFailedStartRemovesWhatItMade: the second of three hosts cannot be made
// (a namespace of its name is there already); Start fails, removes the first
// host and leaves the namespace it did not make.
func TestFailedStartRemovesWhatItMade(t *testing.T) {
	pid := liveOwner(t)
	taken := fmt.Sprintf("%s-%d-1", Prefix, pid)
	require.NoError(t, ip(context.Background(), "netns", "add", taken))
	t.Cleanup(func() { _ = ip(context.Background(), "netns", "del", taken) })

	s, err := Start(context.Background(), Options{Hosts: 3, pid: pid})
	require.Error(t, err)
	assert.Nil(t, s)
	assert.Contains(t, err.Error(), taken)
	assert.Equal(t, []string{taken}, left(t, pid))
}

// TestSweepRemovesLeftoversOfDeadRunners: hosts of a runner that died
// without Close are swept; those of a live runner stay.
func TestSweepRemovesLeftoversOfDeadRunners(t *testing.T) {
	dead, live := deadOwner(t), liveOwner(t)
	kept := started(t, Options{Hosts: 1, pid: live})
	var swept []Name
	leaveBehind(t, dead, 2, func() {
		var err error
		swept, err = sweep(context.Background())
		require.NoError(t, err)
	})
	var names []string
	for _, n := range swept {
		assert.Equal(t, dead, n.PID)
		names = append(names, n.Name)
	}
	assert.ElementsMatch(t, []string{
		fmt.Sprintf("%s-%d-0", Prefix, dead), fmt.Sprintf("%s-%d-1", Prefix, dead),
		fmt.Sprintf("%s%dv0", Prefix, dead), fmt.Sprintf("%s%dv1", Prefix, dead),
	}, names)
	assert.Empty(t, left(t, dead))
	assert.ElementsMatch(t, []string{kept.Hosts()[0].Namespace, kept.Hosts()[0].Link}, left(t, live))
}

// TestStartSweepsFirst: a new runner's Start removes a dead runner's
// leftovers.
func TestStartSweepsFirst(t *testing.T) {
	dead := deadOwner(t)
	leaveBehind(t, dead, 1, func() {
		s, err := start(context.Background(), Options{Hosts: 1, Net: DefaultNet, pid: os.Getpid()})
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, s.Close()) })
		assert.Empty(t, left(t, dead))
	})
}

// TestLeakCheckFindsALeftover is the control of the leak checks above: a
// namespace deliberately left behind is found.
func TestLeakCheckFindsALeftover(t *testing.T) {
	pid := liveOwner(t)
	s := started(t, Options{Hosts: 2, pid: pid})
	h := s.Hosts()[1]
	s.hosts = s.hosts[:1] // Close forgets the second host
	require.NoError(t, s.Close())
	t.Cleanup(func() { assert.NoError(t, remove(h)) })
	assert.ElementsMatch(t, []string{h.Namespace, h.Link}, left(t, pid))
}

// TestUnsupported: without the ip command Start says so with ErrUnsupported
// and makes nothing.
func TestUnsupported(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	s, err := Start(context.Background(), Options{})
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "no ip command")
	assert.Nil(t, s)
}

// TestBadOptions: a bad option is an error that names it, and nothing is
// made.
func TestBadOptions(t *testing.T) {
	tests := []struct {
		opts Options
		want string
	}{
		{Options{Hosts: -1}, "-1 hosts"},
		{Options{Hosts: MaxHosts + 1}, fmt.Sprintf("%d hosts", MaxHosts+1)},
		{Options{Net: netip.MustParsePrefix("10.213.0.0/31")}, "10.213.0.0/31"},
		{Options{Net: netip.MustParsePrefix("fd00::/64")}, "fd00::/64"},
		{Options{Net: netip.MustParsePrefix("10.213.7.0/30"), Hosts: 2}, "1 free /30s, 2 wanted"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			s, err := Start(context.Background(), tt.opts)
			assert.ErrorContains(t, err, tt.want)
			assert.Nil(t, s)
			assert.Empty(t, left(t, os.Getpid()))
		})
	}
}

func TestParseName(t *testing.T) {
	tests := []struct {
		s         string
		namespace bool
		pid       int
	}{
		{"llh-123-0", true, 123},
		{"llh123v4", false, 123},
		{"llh-123-0", false, 0},
		{"llh123v4", true, 0},
		{"llh-x-0", true, 0},
		{"llh-0-0", true, 0},
		{"llh-12", true, 0},
		{"eth0", false, 0},
		{"llh12v", false, 0},
	}
	for _, tt := range tests {
		n, ok := parseName(tt.s, tt.namespace)
		assert.Equal(t, tt.pid != 0, ok, tt.s)
		assert.Equal(t, tt.pid, n.PID, tt.s)
	}
}

func TestPickNetsSkipsUsed(t *testing.T) {
	used := []netip.Prefix{netip.MustParsePrefix("10.213.0.1/30"), netip.MustParsePrefix("10.213.0.9/24")}
	got, err := pickNets(netip.MustParsePrefix("10.213.0.0/16"), used, 2)
	require.NoError(t, err)
	assert.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.213.1.0/30"), netip.MustParsePrefix("10.213.1.4/30")}, got)
}

// TestSetsOfOneRunner: one runner holds two sets at once, under names of
// their own; a set closed frees its names for the next. The control: sets
// made for another PID take the same names, and the second fails.
func TestSetsOfOneRunner(t *testing.T) {
	a := started(t, Options{Hosts: 2})
	b := started(t, Options{Hosts: 1})
	var names []string
	for _, h := range append(slices.Clone(a.Hosts()), b.Hosts()...) {
		names = append(names, h.Namespace)
	}
	assert.Len(t, names, 3)
	assert.Len(t, slices.Compact(slices.Sorted(slices.Values(names))), 3, "names of their own: %v", names)
	require.NoError(t, a.Close())
	c := started(t, Options{Hosts: 1})
	assert.Equal(t, fmt.Sprintf("%s-%d-0", Prefix, os.Getpid()), c.Hosts()[0].Namespace, "a closed set's names are free again")

	other := liveOwner(t)
	started(t, Options{Hosts: 1, pid: other})
	_, err := Start(context.Background(), Options{Hosts: 1, pid: other})
	assert.Error(t, err, "the control")
}
