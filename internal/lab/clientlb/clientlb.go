// Package clientlb balances calls over locklab replicas in the client, with
// no balancer process between: one grpc-go ClientConn holds a connection to
// every replica (given by a manual resolver, not DNS) and picks one per call
// by Policy.
//
// grpc-go takes its balancer by name from a JSON service config, and a name
// it does not know is not an error there: the channel quietly uses
// pick_first, every call going to one replica. Dial therefore checks that
// the policy's balancer is registered, and the tests show by where calls go
// which policy ran.
package clientlb

import (
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/balancer"
	_ "google.golang.org/grpc/balancer/ringhash" // registers ring_hash_experimental
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"

	lb "github.com/locklab/locklab/internal/lab/balancer"
)

// Policy is one way to spread calls over replicas.
type Policy struct {
	// Name is the lab's name for it, as the balancer package's policies
	// are named where they mean the same.
	Name string
	// Balancer is grpc-go's name for the load-balancing policy.
	Balancer string
	// Config is the policy's own config in the service config.
	Config string
}

// serviceConfig is the service config that chooses p.
func (p Policy) serviceConfig() string {
	return fmt.Sprintf(`{"loadBalancingConfig":[{%q:%s}]}`, p.Balancer, p.Config)
}

// Policies is the one list of client-side policies.
var Policies = []Policy{
	// round_robin: each call to the next ready replica in turn.
	{Name: lb.RoundRobin, Balancer: "round_robin", Config: `{}`},
	// ring_hash_experimental hashes the key header onto a ring of the
	// replicas: one key, one replica; a call without the header goes to a
	// random replica, and a key whose replica fails moves to the next on
	// the ring.
	{Name: lb.Key, Balancer: "ring_hash_experimental", Config: fmt.Sprintf(`{"requestHashHeader":%q}`, lb.KeyHeader)},
	// pick_first: every call to the first replica that connects; what a
	// channel without a policy does.
	{Name: "first", Balancer: "pick_first", Config: `{}`},
}

// Lookup returns the policy of this name.
func Lookup(name string) (Policy, error) {
	for _, p := range Policies {
		if p.Name == name {
			return p, nil
		}
	}
	return Policy{}, fmt.Errorf("clientlb: no policy %q; policies: %s", name, strings.Join(Names(), ", "))
}

// Names lists Policies' names.
func Names() []string {
	var n []string
	for _, p := range Policies {
		n = append(n, p.Name)
	}
	return n
}

// scheme is the manual resolver's; it is private to each ClientConn
// (grpc.WithResolvers), so it never collides.
const scheme = "locklab-replicas"

// Dial returns a client of the replicas (host:port, plaintext h2c) that
// balances by p. It fails if p's balancer is not registered with grpc-go,
// rather than let the channel fall back to pick_first. opts are added
// after Dial's own.
func Dial(replicas []string, p Policy, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	if len(replicas) == 0 {
		return nil, fmt.Errorf("clientlb: no replicas")
	}
	if balancer.Get(p.Balancer) == nil {
		return nil, fmt.Errorf("clientlb: policy %q: grpc-go has no balancer %q (it would fall back to pick_first)", p.Name, p.Balancer)
	}
	r := manual.NewBuilderWithScheme(scheme)
	var eps []resolver.Endpoint
	for _, a := range replicas {
		eps = append(eps, resolver.Endpoint{Addresses: []resolver.Address{{Addr: a}}})
	}
	r.InitialState(resolver.State{Endpoints: eps})
	opts = append([]grpc.DialOption{
		grpc.WithResolvers(r),
		grpc.WithDefaultServiceConfig(p.serviceConfig()),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	}, opts...)
	cc, err := grpc.NewClient(scheme+":///replicas", opts...)
	if err != nil {
		return nil, fmt.Errorf("clientlb: %w", err)
	}
	return cc, nil
}
