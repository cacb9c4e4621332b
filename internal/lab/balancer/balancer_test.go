package balancer

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"

	"github.com/locklab/locklab/internal/lab/proc"
	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/server"
)

// backends starts n real locklab servers on loopback, each of its own mode,
// so that GetStats's mode says which one answered a call.
func backends(t *testing.T, n int) ([]*proc.Server, []string) {
	t.Helper()
	modes := server.Modes()
	require.GreaterOrEqual(t, len(modes), n)
	var servers []*proc.Server
	var addrs []string
	for _, m := range modes[:n] {
		s, err := proc.StartServer(exec.Command(bin, "-mode", m.Name, "-addr", "127.0.0.1:0"))
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, s.Stop()) })
		servers = append(servers, s)
		addrs = append(addrs, s.Addr)
	}
	return servers, addrs
}

// start starts a balancer for a test and closes it when the test ends.
func start(t *testing.T, k Kind, cfg Config) *Balancer {
	t.Helper()
	b, err := Start(k, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, b.Close()) })
	return b
}

// conns counts the client's connections (stats.ConnBegin).
type conns struct{ n atomic.Int64 }

func (c *conns) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (c *conns) HandleRPC(context.Context, stats.RPCStats)                         {}
func (c *conns) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (c *conns) HandleConn(_ context.Context, s stats.ConnStats) {
	if _, ok := s.(*stats.ConnBegin); ok {
		c.n.Add(1)
	}
}

// client dials the balancer.
func client(t *testing.T, addr string) (pb.AdminServiceClient, *conns) {
	t.Helper()
	c := &conns{}
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithStatsHandler(c))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, cc.Close()) })
	return pb.NewAdminServiceClient(cc), c
}

// served makes one call, with key in KeyHeader unless it is empty, and
// returns the mode of the server that answered.
func served(t *testing.T, c pb.AdminServiceClient, key string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if key != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, KeyHeader, key)
	}
	r, err := c.GetStats(ctx, &pb.GetStatsRequest{})
	require.NoError(t, err)
	return r.GetMode()
}

// spread makes calls for each key and returns, per key, the servers (by
// mode) that answered it.
func spread(t *testing.T, c pb.AdminServiceClient, keys []string, calls int) map[string]map[string]int {
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

func modesOf(servers []*proc.Server) []string {
	var m []string
	for _, s := range servers {
		m = append(m, s.Mode)
	}
	return m
}

func keys(n int) []string {
	var k []string
	for i := range n {
		k = append(k, fmt.Sprintf("account-%d", i))
	}
	return k
}

// forKinds runs f for every balancer of Kinds.
func forKinds(t *testing.T, f func(t *testing.T, k Kind)) {
	for _, k := range Kinds {
		t.Run(k.Name, func(t *testing.T) {
			_, err := k.Path()
			require.NoError(t, err, "the Makefile's Debian packages install it")
			f(t, k)
		})
	}
}

// TestRoundRobinReachesEveryBackend: calls without a key, through each
// balancer, reach every replica, evenly.
func TestRoundRobinReachesEveryBackend(t *testing.T) {
	forKinds(t, func(t *testing.T, k Kind) {
		servers, addrs := backends(t, 3)
		b := start(t, k, Config{Policy: RoundRobin, Backends: addrs})
		c, _ := client(t, b.Addr())
		got := spread(t, c, []string{""}, 30)[""]
		assert.ElementsMatch(t, modesOf(servers), keysOf(got))
		for m, n := range got {
			assert.InDelta(t, 10, n, 2, "%s's share", m)
		}
	})
}

// TestKeyGoesToOneBackend: under the key policy every call of one key
// reaches one replica, and the keys between them reach more than one.
func TestKeyGoesToOneBackend(t *testing.T) {
	forKinds(t, func(t *testing.T, k Kind) {
		_, addrs := backends(t, 3)
		b := start(t, k, Config{Policy: Key, Backends: addrs})
		c, _ := client(t, b.Addr())
		all := map[string]bool{}
		for key, got := range spread(t, c, keys(20), 6) {
			assert.Len(t, got, 1, "key %s went to %v", key, got)
			for m := range got {
				all[m] = true
			}
		}
		assert.Greater(t, len(all), 1, "20 keys all hashed to one replica")
	})
}

// TestKeyCheckCanFail is the control of the check above: under round robin
// the same keyed calls reach several replicas for one key.
func TestKeyCheckCanFail(t *testing.T) {
	forKinds(t, func(t *testing.T, k Kind) {
		_, addrs := backends(t, 3)
		b := start(t, k, Config{Policy: RoundRobin, Backends: addrs})
		c, _ := client(t, b.Addr())
		for key, got := range spread(t, c, keys(3), 6) {
			assert.Greater(t, len(got), 1, "key %s went to %v", key, got)
		}
	})
}

// TestManyCallsOnOneConnection: a client keeps its one connection past
// 1,000 calls (nginx's keepalive_requests default would close it there).
func TestManyCallsOnOneConnection(t *testing.T) {
	forKinds(t, func(t *testing.T, k Kind) {
		_, addrs := backends(t, 1)
		b := start(t, k, Config{Backends: addrs})
		c, n := client(t, b.Addr())
		for range 1200 {
			served(t, c, "")
		}
		assert.EqualValues(t, 1, n.n.Load(), "connections")
	})
}

// TestManyCallsCheckCanFail is the control: nginx without
// keepalive_requests closes the connection after 1,000 calls, and the
// client has to dial again.
func TestManyCallsCheckCanFail(t *testing.T) {
	k := nginx
	require.Contains(t, k.config, "keepalive_requests 1000000;")
	k.config = strings.Replace(k.config, "keepalive_requests 1000000;", "", 1)
	_, addrs := backends(t, 1)
	b := start(t, k, Config{Backends: addrs})
	c, n := client(t, b.Addr())
	for range 1200 {
		served(t, c, "")
	}
	assert.EqualValues(t, 2, n.n.Load(), "connections")
}

// TestDrainMovesNewCallsOff: a drained replica gets no new calls; made
// ready again, it gets its share back (the control).
func TestDrainMovesNewCallsOff(t *testing.T) {
	forKinds(t, func(t *testing.T, k Kind) {
		servers, addrs := backends(t, 2)
		b := start(t, k, Config{Backends: addrs})
		if !k.RuntimeAPI {
			assert.ErrorIs(t, b.Drain(1), ErrNoRuntimeAPI)
			_, err := b.Status()
			assert.ErrorIs(t, err, ErrNoRuntimeAPI)
			return
		}
		c, _ := client(t, b.Addr())
		require.NoError(t, b.Drain(1))
		st, err := b.Status()
		require.NoError(t, err)
		assert.Equal(t, []string{"UP", "DRAIN"}, st)
		assert.Equal(t, map[string]int{servers[0].Mode: 20}, spread(t, c, []string{""}, 20)[""])

		require.NoError(t, b.Ready(1))
		assert.ElementsMatch(t, modesOf(servers), keysOf(spread(t, c, []string{""}, 20)[""]))
		assert.ErrorContains(t, b.Drain(7), "s7", "a server the balancer does not have")
	})
}

// TestHealthCheckTakesAStoppedReplicaOut: HAProxy's check marks a stopped
// replica DOWN, and calls then all go to the other one and succeed.
func TestHealthCheckTakesAStoppedReplicaOut(t *testing.T) {
	servers, addrs := backends(t, 2)
	b := start(t, haproxy, Config{Backends: addrs})
	c, _ := client(t, b.Addr())
	require.Eventually(t, func() bool {
		st, err := b.Status()
		return err == nil && st[0] == "UP" && st[1] == "UP"
	}, 5*time.Second, 50*time.Millisecond)
	require.NoError(t, servers[1].Stop())
	require.Eventually(t, func() bool {
		st, err := b.Status()
		return err == nil && st[1] == "DOWN"
	}, 5*time.Second, 50*time.Millisecond)
	assert.Equal(t, map[string]int{servers[0].Mode: 20}, spread(t, c, []string{""}, 20)[""])
}

// TestBadConfig: a bad config is an error that names what is wrong, and
// leaves no process and no directory behind.
func TestBadConfig(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = held.Close() })
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Policy: "random", Backends: []string{"127.0.0.1:1"}}, `policy "random"`},
		{Config{}, "no backends"},
		{Config{Backends: []string{"127.0.0.1"}}, `backend "127.0.0.1"`},
		{Config{Backends: []string{"127.0.0.1:1"}, Addr: held.Addr().String()}, "address already in use"},
	}
	forKinds(t, func(t *testing.T, k Kind) {
		before := dirs(t, k)
		for _, tt := range tests {
			b, err := Start(k, tt.cfg)
			assert.ErrorContains(t, err, tt.want)
			if !assert.Nil(t, b) {
				assert.NoError(t, b.Close())
			}
		}
		assert.Equal(t, before, dirs(t, k))
	})
}

func TestLookup(t *testing.T) {
	for _, k := range Kinds {
		got, err := Lookup(k.Name)
		require.NoError(t, err)
		assert.Equal(t, k.Name, got.Name)
	}
	_, err := Lookup("envoy")
	assert.ErrorContains(t, err, strings.Join(Names(), ", "))
}

// TestEveryKindWritesEveryPolicy: every balancer has config lines for
// every policy.
func TestEveryKindWritesEveryPolicy(t *testing.T) {
	for _, k := range Kinds {
		for _, p := range Policies {
			assert.Contains(t, k.Balance, p, k.Name)
		}
		assert.Len(t, k.Balance, len(Policies), k.Name)
	}
}

// TestNotInstalled: a binary not on the machine is ErrUnsupported.
func TestNotInstalled(t *testing.T) {
	k := haproxy
	k.Binary = "no-such-balancer"
	_, err := Start(k, Config{Backends: []string{"127.0.0.1:1"}})
	assert.ErrorIs(t, err, ErrUnsupported)
}

func dirs(t *testing.T, k Kind) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(os.TempDir(), "locklab-"+k.Name+"-*"))
	require.NoError(t, err)
	return m
}

func keysOf(m map[string]int) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	return k
}

// TestKeylessCallsAreSpread: under the key policy a call without the
// header is not pinned to one replica: both balancers fall back to round
// robin for it.
func TestKeylessCallsAreSpread(t *testing.T) {
	forKinds(t, func(t *testing.T, k Kind) {
		servers, addrs := backends(t, 3)
		b := start(t, k, Config{Policy: Key, Backends: addrs})
		c, _ := client(t, b.Addr())
		assert.ElementsMatch(t, modesOf(servers), keysOf(spread(t, c, []string{""}, 12)[""]))
	})
}

// TestTempDirEnvAndPrefix: the private directory is made in TempDir, and
// the balancer runs through Prefix with Env added (a shell prefix that
// writes a file shows it ran). The control: without them the directory is
// elsewhere and no file is written.
func TestTempDirEnvAndPrefix(t *testing.T) {
	forKinds(t, func(t *testing.T, k Kind) {
		_, addrs := backends(t, 1)
		tmp := t.TempDir()
		ran := filepath.Join(tmp, "ran")
		b := start(t, k, Config{Backends: addrs, TempDir: tmp, Env: []string{"LOCKLAB_TEST_MARK=1"},
			Prefix: []string{"sh", "-c", `echo "$LOCKLAB_TEST_MARK" > "$0" && exec "$@"`, ran}})
		assert.Equal(t, tmp, filepath.Dir(b.Dir()))
		got, err := os.ReadFile(ran)
		require.NoError(t, err, "the prefix ran")
		assert.Equal(t, "1\n", string(got), "with Env")

		require.NoError(t, os.Remove(ran))
		plain := start(t, k, Config{Backends: addrs})
		assert.NotEqual(t, tmp, filepath.Dir(plain.Dir()), "the control")
		assert.NoFileExists(t, ran, "the control")
	})
}
