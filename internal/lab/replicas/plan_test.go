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
// workloads it serves.
func TestAnomalyPlan(t *testing.T) {
	plan := AnomalyPlan()
	assert.Len(t, plan, len(Designs())*len(Fronts()))
	for _, c := range plan {
		assert.NotEmpty(t, c.Workloads, c.Design)
		for _, w := range c.Workloads {
			assert.True(t, Serves(c.Design, w))
		}
	}
	assert.NotContains(t, Designs(), "noop", "a design without state has nothing to check")
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
