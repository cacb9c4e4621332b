package balancer

import (
	"context"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/hosts"
	"github.com/locklab/locklab/internal/lab/proc"
	"github.com/locklab/locklab/server"
)

// TestReplicasOnHosts is the lab's layout end to end: each replica on a
// host of its own (a network namespace, internal/lab/hosts), the balancer
// in the root namespace in front of their addresses. Calls reach every
// replica under round robin, and one replica per key under the key policy.
func TestReplicasOnHosts(t *testing.T) {
	require.NoError(t, hosts.Supported())
	set, err := hosts.Start(context.Background(), hosts.Options{Hosts: 2})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, set.Close()) })
	modes := server.Modes()
	var servers []*proc.Server
	var addrs []string
	for i, h := range set.Hosts() {
		addr := netip.AddrPortFrom(h.Addr, 50055).String()
		s, err := proc.StartServer(h.Command(context.Background(), bin, "-mode", modes[i].Name, "-addr", addr))
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, s.Stop()) }) // before the hosts go
		assert.Equal(t, addr, s.Addr)
		servers = append(servers, s)
		addrs = append(addrs, s.Addr)
	}
	forKinds(t, func(t *testing.T, k Kind) {
		rr := start(t, k, Config{Policy: RoundRobin, Backends: addrs})
		c, _ := client(t, rr.Addr())
		assert.ElementsMatch(t, modesOf(servers), keysOf(spread(t, c, []string{""}, 10)[""]))

		byKey := start(t, k, Config{Policy: Key, Backends: addrs})
		c, _ = client(t, byKey.Addr())
		for key, got := range spread(t, c, keys(5), 4) {
			assert.Len(t, got, 1, "key %s went to %v", key, got)
		}
	})
}
