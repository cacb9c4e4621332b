package replicas

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/internal/lab/balancer"
	"github.com/locklab/locklab/internal/lab/clientlb"
	"github.com/locklab/locklab/server"
	"github.com/locklab/locklab/store"
)

// A Front is how the driver's calls reach the replicas: a balancer
// process with a policy, the client's own balancing with a policy, or a
// direct connection to a single replica.
type Front struct {
	Name     string // "haproxy/roundrobin", "client/key", "direct"
	Balancer string // a balancer.Kinds name; "" for none
	Client   string // a clientlb.Policies name, when Balancer is ""
	Policy   string // the policy's name, as both packages name it
}

// Direct is the front without any balancing: one replica, dialled.
var Direct = Front{Name: "direct"}

// clientSide names the fronts balanced in the client.
const clientSide = "client"

// Fronts are every balancer with every policy, then every client-side
// policy: ranged over from balancer.Kinds, balancer.Policies and
// clientlb.Policies, so a new balancer or policy joins the study by its row.
func Fronts() []Front {
	var out []Front
	for _, k := range balancer.Kinds {
		for _, p := range balancer.Policies {
			out = append(out, Front{Name: k.Name + "/" + p, Balancer: k.Name, Policy: p})
		}
	}
	for _, p := range clientlb.Policies {
		out = append(out, Front{Name: clientSide + "/" + p.Name, Client: p.Name, Policy: p.Name})
	}
	return out
}

// LookupFront finds a front by name among Fronts and Direct.
func LookupFront(name string) (Front, error) {
	all := append(Fronts(), Direct)
	i := slices.IndexFunc(all, func(f Front) bool { return f.Name == name })
	if i < 0 {
		var names []string
		for _, f := range all {
			names = append(names, f.Name)
		}
		return Front{}, fmt.Errorf("replicas: no front %q: want one of %s", name, strings.Join(names, ", "))
	}
	return all[i], nil
}

// Keyed says whether the front sends every call of one key to one replica:
// the key policy of a balancer or of the client, and pick_first, which
// sends every call to one replica. Round robin does not.
func (f Front) Keyed() bool { return f.Policy != balancer.RoundRobin }

// Designs are the server's store-backed designs that keep their state in
// memory, in the registry's order: noop keeps none.
func Designs() []string {
	var out []string
	for _, m := range server.Modes() {
		if m.StoreBacked() && m.CanServeOn(server.BackendMemory, server.DurabilityNone) == nil {
			out = append(out, m.Name)
		}
	}
	return out
}

// Serves says whether the design serves the workload.
func Serves(design, workload string) bool {
	m, err := server.LookupMode(design)
	return err == nil && m.Serves(workload)
}

// DBDesigns are the server's designs that can keep the bank in a database
// (-backend mysql), in the registry's order: over one database shared by
// every replica, these are the designs a service of replicas can run.
func DBDesigns() []string {
	var out []string
	for _, m := range server.Modes() {
		if m.StoreBacked() && m.CanServeOn(server.BackendMySQL, server.DurabilityNone) == nil {
			out = append(out, m.Name)
		}
	}
	return out
}

// safeAcross are the capabilities of a machine that stays correct when
// several replicas write to it at once: CapTx, every command a transaction
// ordered by the database's row locks; CapOwned, every write fenced by an
// epoch the database checks. A design that needs one of them claims
// safety across replicas; the others serialise inside one process only.
const safeAcross = store.CapTx | store.CapOwned

// ClaimsSafety says whether the design claims to stay correct across
// replicas, read from its registry row (safeAcross).
func ClaimsSafety(design string) bool {
	m, err := server.LookupMode(design)
	if err != nil {
		return false
	}
	d, ok := m.Design()
	return ok && d.Needs&safeAcross != 0
}

// KeepsRequestIDs says whether the design stores each transfer's request
// id with it (CapOwned: routed-owner's at-most-once), so that the audit can
// match every acknowledged transfer to its row. The other designs ignore
// the header, and the audit's id rules do not apply to them.
func KeepsRequestIDs(design string) bool {
	m, err := server.LookupMode(design)
	if err != nil {
		return false
	}
	d, ok := m.Design()
	return ok && d.Needs&store.CapOwned != 0
}
