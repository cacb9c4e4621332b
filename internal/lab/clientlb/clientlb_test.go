package clientlb

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	lb "github.com/locklab/locklab/internal/lab/balancer"
	"github.com/locklab/locklab/internal/lab/proc"
	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/server"
)

// replicas starts n real locklab servers on loopback, each of its own mode,
// so that GetStats's mode says which one answered a call.
func replicas(t *testing.T, n int) ([]*proc.Server, []string) {
	t.Helper()
	modes := server.Modes()
	require.GreaterOrEqual(t, len(modes), n)
	var servers []*proc.Server
	var addrs []string
	for _, m := range modes[:n] {
		s, err := proc.StartServer(exec.Command(bin, "-mode", m.Name, "-addr", "127.0.0.1:0"))
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Stop() })
		servers = append(servers, s)
		addrs = append(addrs, s.Addr)
	}
	return servers, addrs
}

func dial(t *testing.T, addrs []string, p Policy) pb.AdminServiceClient {
	t.Helper()
	cc, err := Dial(addrs, p)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, cc.Close()) })
	return pb.NewAdminServiceClient(cc)
}

// served makes one call, with key in the key header unless it is empty,
// and returns the mode of the replica that answered.
func served(t *testing.T, c pb.AdminServiceClient, key string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if key != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, lb.KeyHeader, key)
	}
	r, err := c.GetStats(ctx, &pb.GetStatsRequest{})
	require.NoError(t, err)
	return r.GetMode()
}

// reached returns, per key, the replicas (by mode) that answered its calls.
func reached(t *testing.T, c pb.AdminServiceClient, keys []string, calls int) map[string]map[string]int {
	t.Helper()
	out := map[string]map[string]int{}
	for _, k := range keys {
		out[k] = map[string]int{}
		for range calls {
			out[k][served(t, c, k)]++
		}
	}
	return out
}

func keys(n int) []string {
	var k []string
	for i := range n {
		k = append(k, fmt.Sprintf("account-%d", i))
	}
	return k
}

// union is every replica that answered any key.
func union(m map[string]map[string]int) map[string]bool {
	u := map[string]bool{}
	for _, got := range m {
		for mode := range got {
			u[mode] = true
		}
	}
	return u
}

// TestWhichPolicyRan tells the policies apart by where calls go, each
// check failing for the others: round robin reaches every replica with
// every key; ring hash sends each key to one replica, the keys between them
// to several; pick_first (the control) sends everything to one.
func TestWhichPolicyRan(t *testing.T) {
	type check func(t assert.TestingT, got map[string]map[string]int, n int)
	everyReplicaPerKey := func(t assert.TestingT, got map[string]map[string]int, n int) {
		for k, g := range got {
			assert.Len(t, g, n, "key %s", k)
		}
	}
	oneReplicaPerKey := func(t assert.TestingT, got map[string]map[string]int, n int) {
		for k, g := range got {
			assert.Len(t, g, 1, "key %s", k)
		}
		assert.Greater(t, len(union(got)), 1, "every key on one replica")
	}
	oneReplica := func(t assert.TestingT, got map[string]map[string]int, n int) {
		assert.Len(t, union(got), 1)
	}
	want := map[string]check{
		lb.RoundRobin: everyReplicaPerKey,
		lb.Key:        oneReplicaPerKey,
		"first":       oneReplica,
	}
	require.Len(t, want, len(Policies), "a check for every policy")
	_, addrs := replicas(t, 3)
	for _, p := range Policies {
		t.Run(p.Name, func(t *testing.T) {
			c := dial(t, addrs, p)
			got := reached(t, c, keys(12), 9)
			require.Contains(t, want, p.Name)
			want[p.Name](t, got, len(addrs))
			// Each check fails for the other policies' results.
			for name, other := range want {
				if name == p.Name {
					continue
				}
				var r recorder
				other(&r, got, len(addrs))
				assert.True(t, r.failed, "the %s check passes on %s's calls", name, p.Name)
			}
		})
	}
}

// TestRingHashMovesAKeyOffAFailedReplica: when a key's replica stops, its
// calls go to another replica and succeed.
func TestRingHashMovesAKeyOffAFailedReplica(t *testing.T) {
	servers, addrs := replicas(t, 3)
	p, err := Lookup(lb.Key)
	require.NoError(t, err)
	c := dial(t, addrs, p)
	owner := served(t, c, "account-1")
	for _, s := range servers {
		if s.Mode == owner {
			require.NoError(t, s.Stop())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, lb.KeyHeader, "account-1")
	var moved string
	require.Eventually(t, func() bool {
		r, err := c.GetStats(ctx, &pb.GetStatsRequest{}, grpc.WaitForReady(true))
		moved = r.GetMode()
		return err == nil
	}, 10*time.Second, 20*time.Millisecond)
	assert.NotEqual(t, owner, moved)
	got := reached(t, c, []string{"account-1"}, 5)["account-1"]
	assert.Equal(t, map[string]int{moved: 5}, got, "the key stays on its new replica")
}

// TestDialRefusesAnUnknownBalancer: a misspelled balancer is an error, not
// a channel that quietly picks the first replica.
func TestDialRefusesAnUnknownBalancer(t *testing.T) {
	p := Policy{Name: "typo", Balancer: "round-robin", Config: `{}`}
	cc, err := Dial([]string{"127.0.0.1:1"}, p)
	assert.ErrorContains(t, err, `no balancer "round-robin"`)
	assert.Nil(t, cc)
	_, err = Dial(nil, Policies[0])
	assert.ErrorContains(t, err, "no replicas")
}

func TestLookup(t *testing.T) {
	for _, p := range Policies {
		got, err := Lookup(p.Name)
		require.NoError(t, err)
		assert.Equal(t, p, got)
	}
	_, err := Lookup("random")
	assert.ErrorContains(t, err, "policies: "+strings.Join(Names(), ", "))
}

// recorder is a TestingT that only notes a failure, to run a check where
// failing is the expected outcome.
type recorder struct{ failed bool }

func (r *recorder) Errorf(string, ...any) { r.failed = true }

// TestRingHashSpreadsKeylessCalls: under the key policy a call without the
// header goes to a random replica, so such calls are spread rather than
// pinned.
func TestRingHashSpreadsKeylessCalls(t *testing.T) {
	_, addrs := replicas(t, 3)
	p, err := Lookup(lb.Key)
	require.NoError(t, err)
	got := reached(t, dial(t, addrs, p), []string{""}, 30)[""]
	assert.Greater(t, len(got), 1, "30 keyless calls all went to %v", got)
}
