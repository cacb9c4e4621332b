package replicas

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/balancer"
	"github.com/locklab/locklab/internal/lab/fleet"
	"github.com/locklab/locklab/internal/lab/hosts"
	"github.com/locklab/locklab/workload/dbbank/dbinst"
)

// TestClusterEndToEnd is the study's one real run, short: two replicas
// behind HAProxy, each on a host of its own with a quota. Round robin
// spreads the counter's key and the bank's pairs over both replicas and
// the checks find the anomalies; key routing keeps each key on one replica
// and they find none (each is the other's control). Nothing of the
// clusters is left after Close.
func TestClusterEndToEnd(t *testing.T) {
	require.NoError(t, hosts.Supported())
	ctx := context.Background()
	for _, policy := range balancer.Policies {
		t.Run(policy, func(t *testing.T) {
			f, err := LookupFront("haproxy/" + policy)
			require.NoError(t, err)
			cl, err := Start(ctx, Config{Server: bin, Mode: "mutex", Replicas: 2, Front: f, ReplicaCPUs: 0.5})
			require.NoError(t, err)
			left, err := Leftovers(ctx, os.Getpid())
			require.NoError(t, err)
			assert.NotEmpty(t, left, "the control: a running cluster is found")
			for _, w := range []string{Counter, Bank} {
				fd, tally, err := Anomalies(ctx, cl, Load{Workload: w, Callers: 16, Duration: 1500 * time.Millisecond, Seed: 1})
				require.NoError(t, err)
				assert.Zero(t, tally.Errors, "%v", tally.FirstError)
				assert.Positive(t, tally.OK)
				assert.Zero(t, fd.ReplicaBroken, "each replica alone keeps its invariants")
				assert.Equal(t, !f.Keyed(), fd.Anomalous(), "%s under %s: %+v", w, f.Name, fd)
				if !f.Keyed() && w == Counter {
					assert.Positive(t, fd.Lost, "round robin loses increments at every replica")
				}
			}
			r, _, err := measure(ctx, cl, Load{Workload: KV, Callers: 16, Duration: 500 * time.Millisecond, Seed: 1})
			require.NoError(t, err)
			assert.Zero(t, r.Errors)
			assert.Positive(t, r.CallsPerS)
			assert.Positive(t, r.P99Ms)
			assert.Positive(t, r.ServerCPUPerCallUs, "the replicas' groups count their CPU")
			assert.Positive(t, r.BalancerCPUPerCallUs, "the balancer's group counts its CPU")
			assert.Positive(t, r.DriverCPUPerCallUs)
			assert.InDelta(t, 0.6, r.QuotaUse, 0.6, "a share of the quota")
			require.NoError(t, cl.Close())
			require.NoError(t, cl.Close(), "twice")
			left, err = Leftovers(ctx, os.Getpid())
			require.NoError(t, err)
			assert.Empty(t, left, "nothing left after Close")
		})
	}
	t.Run("cost rounds", func(t *testing.T) {
		// The cost's rounds, short: the direct arm and two replicas
		// behind HAProxy, two blocks, each arm's ratio to the direct one
		// in its block.
		f, err := LookupFront("haproxy/" + balancer.Key)
		require.NoError(t, err)
		o := Options{Server: bin, Round: 300 * time.Millisecond}.withDefaults()
		rs, err := rounds(ctx, o, []Arm{Baseline, {Front: f, Replicas: 2}}, KV, 16, 2, nil)
		require.NoError(t, err)
		require.Len(t, rs, 4)
		for _, r := range rs {
			assert.Zero(t, r.Errors, r.Arm)
			assert.Positive(t, r.ServerCPUPerCallUs, r.Arm)
		}
		cs := Compare(rs, Baseline.Name())
		require.Len(t, cs, 2*len(Metrics))
		assert.Equal(t, 2, cs[len(Metrics)].Effect.N, "two blocks paired")
		left, err := Leftovers(ctx, os.Getpid())
		require.NoError(t, err)
		assert.Empty(t, left)
	})
	t.Run("every design's rounds", func(t *testing.T) {
		// The first design's two arms of every design's rounds, short:
		// each round says its design, and the design's arm pairs with
		// its own direct arm.
		arms := DesignArms()[:2]
		d := arms[0].Design
		o := Options{Server: bin, Round: 300 * time.Millisecond}.withDefaults()
		rs, err := rounds(ctx, o, arms, KV, 16, 2, nil)
		require.NoError(t, err)
		require.Len(t, rs, 4)
		res := &Results{DesignCost: rs}
		assert.Len(t, res.DesignRounds(d), 4, "every round says its design")
		for _, r := range rs {
			assert.Zero(t, r.Errors, r.Arm)
		}
		cs := Compare(res.DesignRounds(d), DesignBaseline(d).Name())
		require.Len(t, cs, 2*len(Metrics))
		assert.Equal(t, 2, cs[len(Metrics)].Effect.N, "two blocks paired")
		left, err := Leftovers(ctx, os.Getpid())
		require.NoError(t, err)
		assert.Empty(t, left)
	})
}

// TestFailedStartLeavesNothing: a replica that cannot start (an option the
// server refuses) fails Start, and what Start had made (the hosts, the
// first replica, the groups, the directory) is gone. The control is
// TestClusterEndToEnd's: a started cluster is found by the same check.
func TestFailedStartLeavesNothing(t *testing.T) {
	require.NoError(t, hosts.Supported())
	ctx := context.Background()
	_, err := Start(ctx, Config{Server: bin, Mode: "mutex", Replicas: 2, Front: Fronts()[0], ReplicaCPUs: 0.5, Args: []string{"-work", "-1s"}})
	require.ErrorContains(t, err, "-work", "the server refused its option")
	left, err := Leftovers(ctx, os.Getpid())
	require.NoError(t, err)
	assert.Empty(t, left)
}

// TestLeftoversOfAKilledRunner: a runner with a cluster (two replicas
// behind nginx) is killed with SIGKILL. Its leftovers are found (the
// control: a kill leaves things behind for the sweep to do), and Sweep
// removes every one: hosts, cgroups, processes (nginx's workers among
// them) and directories.
func TestLeftoversOfAKilledRunner(t *testing.T) {
	require.NoError(t, hosts.Supported())
	ctx := context.Background()
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, "-test.run", "^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+bin)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(line, "ready"), line)
	pid := cmd.Process.Pid
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	left, err := Leftovers(ctx, pid)
	require.NoError(t, err)
	assert.NotEmpty(t, left, "the control: the killed runner left its cluster")
	assert.True(t, slices.ContainsFunc(left, func(l string) bool { return strings.HasPrefix(l, "process ") }),
		"the control: nginx's worker outlives its master and the runner: %v", left)
	require.NoError(t, Sweep(ctx))
	left, err = Leftovers(ctx, pid)
	require.NoError(t, err)
	assert.Empty(t, left, "nothing left after the sweep")
}

// TestBadConfig: a bad cluster is refused before anything is made.
func TestBadConfig(t *testing.T) {
	ctx := context.Background()
	for _, cfg := range []Config{
		{Mode: "mutex"},
		{Server: bin, Mode: "nope"},
		{Server: bin, Mode: "mutex", Replicas: 2, Front: Direct},
		{Server: bin, Mode: "mutex", ReplicaCPUs: -1},
	} {
		_, err := Start(ctx, cfg)
		assert.Error(t, err, "%+v", cfg)
	}
	left, err := Leftovers(ctx, os.Getpid())
	require.NoError(t, err)
	assert.Empty(t, left)
}

// TestClusterOverDatabase is the study's one real run over a database,
// short: two replicas of routed-owner, each on a host of its own, sharing
// one private MariaDB (reached over its socket), behind HAProxy. Under key
// routing and under round robin the audit finds nothing and no call
// fails; round robin moves accounts between the replicas, and the fencing
// turns each stale write into a retried ABORTED. The control: the same
// round robin without the fencing (-db-no-fencing) loses updates, and the
// audit says so. One cost round over the database runs on the keyed
// cluster. Nothing of the clusters is left after Close.
func TestClusterOverDatabase(t *testing.T) {
	require.NoError(t, hosts.Supported())
	ctx := context.Background()
	db, err := dbinst.StartMariaDB(ctx, filepath.Join(t.TempDir(), "mariadb"), "--innodb-flush-log-at-trx-commit=2")
	require.NoError(t, err)
	defer func() { assert.NoError(t, db.Stop()) }()
	design := "routed-owner"
	require.True(t, ClaimsSafety(design))
	for i, tt := range []struct {
		policy string
		args   []string
		broken bool
	}{
		{balancer.Key, nil, false},
		{balancer.RoundRobin, nil, false},
		{balancer.RoundRobin, []string{"-db-no-fencing"}, true},
	} {
		t.Run(fmt.Sprintf("%s %v", tt.policy, tt.args), func(t *testing.T) {
			f, err := LookupFront("haproxy/" + tt.policy)
			require.NoError(t, err)
			dsn, err := db.NewDatabase(ctx, fmt.Sprintf("e2e%d", i))
			require.NoError(t, err)
			t0 := time.Now()
			cl, err := Start(ctx, Config{Server: bin, Mode: design, Replicas: 2, Front: f, ReplicaCPUs: 0.5, DSN: dsn, Args: tt.args})
			require.NoError(t, err)
			t.Logf("started in %v", time.Since(t0))
			defer func() { assert.NoError(t, cl.Close()) }()
			fd, tally, err := AnomaliesDB(ctx, cl, dsn, Load{Workload: Bank, Callers: 16, Duration: time.Second, Seed: 1})
			require.NoError(t, err)
			t.Logf("%+v; calls %d, ok %d, refused %d", fd, tally.Calls, tally.OK, tally.Refused)
			assert.Positive(t, tally.OK)
			if tt.broken {
				assert.Contains(t, fd.Failed, fleet.CheckLedger, "the control: without fencing a stale write overwrites another")
				return
			}
			assert.Zero(t, tally.Errors, "%v", tally.FirstError)
			assert.False(t, fd.Anomalous(), "%+v", fd)
			if !f.Keyed() {
				assert.Positive(t, fd.Fenced, "round robin moves accounts: stale writes fenced")
				return
			}
			r, _, err := measure(ctx, cl, Load{Workload: Bank, Callers: 16, Duration: 500 * time.Millisecond, Seed: 2, IDs: true})
			require.NoError(t, err)
			assert.Zero(t, r.Errors)
			assert.Positive(t, r.CallsPerS)
			assert.Positive(t, r.ServerCPUPerCallUs)
		})
	}
	left, err := Leftovers(ctx, os.Getpid())
	require.NoError(t, err)
	assert.Empty(t, left, "nothing left after Close")
}
