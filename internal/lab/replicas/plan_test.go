package replicas

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/balancer"
	"github.com/locklab/locklab/internal/lab/clientlb"
	"github.com/locklab/locklab/internal/lab/study"
	"github.com/locklab/locklab/server"
	"github.com/locklab/locklab/store"
)

// TestFrontsRangeOverTheLists: every balancer with every policy and every
// client-side policy is a front, each found by its name; a name that is
// none is refused, naming them.
func TestFrontsRangeOverTheLists(t *testing.T) {
	fronts := Fronts()
	assert.Len(t, fronts, len(balancer.Kinds)*len(balancer.Policies)+len(clientlb.Policies))
	for _, k := range balancer.Kinds {
		for _, p := range balancer.Policies {
			assert.True(t, slices.ContainsFunc(fronts, func(f Front) bool { return f.Balancer == k.Name && f.Policy == p }), "%s %s", k.Name, p)
		}
	}
	for _, p := range clientlb.Policies {
		assert.True(t, slices.ContainsFunc(fronts, func(f Front) bool { return f.Client == p.Name }), p.Name)
	}
	for _, f := range append(fronts, Direct) {
		got, err := LookupFront(f.Name)
		require.NoError(t, err)
		assert.Equal(t, f, got)
	}
	_, err := LookupFront("nope")
	assert.ErrorContains(t, err, Direct.Name)
}

// TestAnomalyPlan: every in-memory design under every front, with the
// workloads it serves, then every design over a database under every
// front, with the bank, which is what lives there.
func TestAnomalyPlan(t *testing.T) {
	plan := AnomalyPlan()
	assert.Len(t, plan, (len(Designs())+len(DBDesigns()))*len(Fronts()))
	db := 0
	for _, c := range plan {
		assert.NotEmpty(t, c.Workloads, c.Design)
		for _, w := range c.Workloads {
			if c.DB {
				assert.Equal(t, Bank, w)
				m, err := server.LookupMode(c.Design)
				require.NoError(t, err)
				assert.True(t, m.ServesOn(w, server.BackendMySQL), c.Design)
				db++
			} else {
				assert.True(t, Serves(c.Design, w))
			}
		}
	}
	assert.Equal(t, len(DBDesigns())*len(Fronts()), db)
	assert.NotContains(t, Designs(), "noop", "a design without state has nothing to check")
	assert.NotContains(t, DBDesigns(), "noop")
}

// TestClaimsFromTheRegistry: a design claims safety across replicas by
// the capability its registry row needs. The routed owner and the row-lock
// design claim it; no in-memory design does (each is a control); the
// in-process lock over the database does not; a design that is none
// claims nothing (the control of the lookup).
func TestClaimsFromTheRegistry(t *testing.T) {
	for _, d := range store.Designs() {
		assert.Equal(t, d.Needs&(store.CapTx|store.CapOwned) != 0, ClaimsSafety(d.Name), d.Name)
		if KeepsRequestIDs(d.Name) {
			assert.True(t, ClaimsSafety(d.Name), "%s keeps ids, so it claims safety", d.Name)
		}
	}
	for _, d := range Designs() {
		assert.False(t, ClaimsSafety(d), "%s in memory is a control", d)
	}
	assert.True(t, ClaimsSafety("routed-owner"))
	assert.True(t, KeepsRequestIDs("routed-owner"))
	assert.True(t, ClaimsSafety("db-rowlock"))
	assert.False(t, KeepsRequestIDs("db-rowlock"))
	assert.False(t, ClaimsSafety("mutex"))
	assert.False(t, ClaimsSafety("nope"))
	claiming := 0
	for _, d := range DBDesigns() {
		if ClaimsSafety(d) {
			claiming++
		}
	}
	assert.Positive(t, claiming)
	assert.Less(t, claiming, len(DBDesigns()), "some designs over the database claim nothing")
}

// TestDBCostArms: every design over the database that claims safety, the
// one that keeps request ids first (the baseline), then the cost design,
// all behind the front at the size of the options; a front that is none is
// refused (the control).
func TestDBCostArms(t *testing.T) {
	arms, err := DBCostArms(Options{})
	require.NoError(t, err)
	require.NotEmpty(t, arms)
	assert.True(t, KeepsRequestIDs(arms[0].Design), "the baseline is the routed owner: %s", arms[0].Design)
	assert.Equal(t, Defaults.CostDesign, arms[len(arms)-1].Design)
	for _, d := range DBDesigns() {
		assert.Equal(t, ClaimsSafety(d) || d == Defaults.CostDesign, slices.ContainsFunc(arms, func(a Arm) bool { return a.Design == d }), d)
	}
	for _, a := range arms {
		assert.True(t, a.DB)
		assert.Equal(t, Defaults.DBReplicas, a.Replicas)
		assert.Equal(t, Defaults.DBFront, a.Front.Name)
		assert.Contains(t, a.Name(), a.Design)
	}
	_, err = DBCostArms(Options{DBFront: "nope"})
	assert.ErrorContains(t, err, "nope")
}

// TestCostArms: the baseline first, then each key-routing front at every
// size.
func TestCostArms(t *testing.T) {
	arms := CostArms([]int{1, 2})
	assert.Equal(t, Baseline, arms[0])
	for _, a := range arms[1:] {
		assert.Equal(t, balancer.Key, a.Front.Policy)
	}
	keyed := 0
	for _, f := range Fronts() {
		if f.Policy == balancer.Key {
			keyed++
		}
	}
	assert.Len(t, arms, 1+2*keyed)
}

// TestEstimateFitsTheBudget: the default study fits its row's budget; the
// control: ten times the blocks do not.
func TestEstimateFitsTheBudget(t *testing.T) {
	row, err := study.Lookup(study.Studies, "replicas")
	require.NoError(t, err)
	budget := row.Budget
	d := Estimate(Options{})
	t.Logf("estimate %v", d)
	assert.LessOrEqual(t, d, budget)
	assert.Greater(t, Estimate(Options{Blocks: 10 * Defaults.Blocks, AnomalyRun: 5 * time.Second}), budget, "the control")
}

// TestDesignArms: every in-memory design of the registry that serves the
// kv workload, the anomaly table's list, twice: dialled at one replica
// (its baseline), then behind the balancer's key policy; a design that
// does not serve the kv workload has no arm (the control: the registry has
// one, so the check can fail).
func TestDesignArms(t *testing.T) {
	arms := DesignArms()
	names := map[string]bool{}
	var kv, other []string
	for _, d := range Designs() {
		if Serves(d, KV) {
			kv = append(kv, d)
		} else {
			other = append(other, d)
		}
	}
	require.NotEmpty(t, other, "the control: some design of the anomaly table serves no kv")
	require.Len(t, arms, 2*len(kv))
	for i, d := range kv {
		base, arm := arms[2*i], arms[2*i+1]
		assert.Equal(t, DesignBaseline(d), base)
		assert.Equal(t, Direct, base.Front)
		assert.Equal(t, 1, base.Replicas)
		assert.Equal(t, d, arm.Design)
		assert.Equal(t, DesignReplicas, arm.Replicas)
		assert.Equal(t, DesignFront, arm.Front)
		assert.False(t, base.DB || arm.DB, d)
		names[base.Name()], names[arm.Name()] = true, true
	}
	assert.Len(t, names, len(arms), "every arm has a name of its own")
	for _, d := range other {
		assert.False(t, slices.ContainsFunc(arms, func(a Arm) bool { return a.Design == d }), d)
	}
	f, err := LookupFront(DesignFront.Name)
	require.NoError(t, err)
	assert.Equal(t, f, DesignFront, "the balancer's front is one of Fronts")
	assert.Equal(t, balancer.Key, DesignFront.Policy)
	assert.Greater(t, DesignReplicas, 1)
}

// TestEstimateLeavesAMinute: the default study, every design's rounds in
// it, leaves a minute of its row's budget to spare; the control: twice
// every design's blocks do not.
func TestEstimateLeavesAMinute(t *testing.T) {
	row, err := study.Lookup(study.Studies, "replicas")
	require.NoError(t, err)
	limit := row.Budget - time.Minute
	assert.LessOrEqual(t, Estimate(Options{}), limit)
	assert.Greater(t, Estimate(Options{DesignBlocks: 2 * Defaults.DesignBlocks}), limit, "the control")
	assert.Greater(t, Estimate(Options{}), Estimate(Options{DesignRound: time.Nanosecond}), "every design's rounds are in the estimate")
}

// TestValidate: the defaults pass; each bad option is refused with a
// message naming it.
func TestValidate(t *testing.T) {
	ok := Options{Server: "bin/locklab", Out: "out"}
	require.NoError(t, ok.Validate())
	for _, tt := range []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.Server = "" }, "server binary"},
		{func(o *Options) { o.AnomalyReplicas = 1 }, "2 replicas"},
		{func(o *Options) { o.Blocks = 1 }, "blocks 1"},
		{func(o *Options) { o.CostReplicas = []int{0} }, "0 replicas"},
		{func(o *Options) { o.CostDesign = "atomic" }, `design "atomic"`},
		{func(o *Options) { o.CostDesign = "sharded" }, `design "sharded"`},
		{func(o *Options) { o.DBFront = "nope" }, `no front "nope"`},
		{func(o *Options) { o.DBFront = Direct.Name }, "direct front"},
		{func(o *Options) { o.DBReplicas = -1 }, "-1 replicas over the database"},
		{func(o *Options) { o.DesignBlocks = 1 }, "every design's rounds: 1 blocks"},
		{func(o *Options) { o.DesignRound = -time.Second }, "every design's rounds: 6 blocks of -1s"},
	} {
		o := ok
		tt.edit(&o)
		assert.ErrorContains(t, o.Validate(), tt.want)
	}
}

// TestNGrinderCallers: the scale-out table's callers are the seed-ngrinder
// study's; the control: another count is not.
func TestNGrinderCallers(t *testing.T) {
	row, err := study.Lookup(study.Studies, "seed-ngrinder")
	require.NoError(t, err)
	vus := func(n int) bool {
		return slices.ContainsFunc(row.Plans, func(p study.Plan) bool { return strings.Contains(p.Args+" ", "-vus "+strconv.Itoa(n)+" ") })
	}
	assert.True(t, vus(NGrinderCallers))
	assert.False(t, vus(NGrinderCallers+1), "the control")
}
