package replicas

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fakeResults are a study's results made up for the report's golden file:
// two designs under two fronts in memory, three over a database (a claim
// held under each policy, one broken, one without a claim), three blocks of
// two arms, of three over the database, of two designs' two arms each, two
// levels.
func fakeResults() *Results {
	res := &Results{Command: "make replicas", CPUs: 2, ReplicaCPUs: 0.5, AnomalyReplicas: 2, AnomalyRun: "1s", Callers: 32,
		CostDesign: "mutex", Round: "2s", Blocks: 3, DBBaseline: "routed-owner, haproxy/key ×2",
		Designs: []string{"mutex", "inputQ"}, DesignFront: "haproxy/key", DesignReplicas: 2, DesignRound: "1s", DesignBlocks: 3}
	res.Anomalies = []AnomalyRow{
		{Design: "mutex", Front: "haproxy/roundrobin", Findings: []Finding{{Workload: Counter, Lost: 812, Spread: 1}, {Workload: Bank, Overdrawn: 3, Disagree: 60, Spread: 32}}, Calls: 9000},
		{Design: "mutex", Front: "haproxy/key", Keyed: true, Findings: []Finding{{Workload: Counter}, {Workload: Bank}}, Calls: 9100},
		{Design: "atomic", Front: "haproxy/roundrobin", Findings: []Finding{{Workload: Counter}}, Calls: 9000},
		{Design: "routed-owner", Front: "haproxy/roundrobin", DB: true, Claims: true, Findings: []Finding{{Workload: Bank, Fenced: 412}}, Calls: 3000},
		{Design: "routed-owner", Front: "haproxy/key", Keyed: true, DB: true, Claims: true, Findings: []Finding{{Workload: Bank}}, Calls: 3500},
		{Design: "db-rowlock", Front: "haproxy/roundrobin", DB: true, Claims: true, Findings: []Finding{{Workload: Bank, Failed: []string{"balances match the transfers"}}}, Calls: 2000},
		{Design: "mutex", Front: "haproxy/roundrobin", DB: true, Findings: []Finding{{Workload: Bank, Unknown: 7}}, Calls: 2500, Errors: 2},
	}
	for b := range 3 {
		k := float64(b)
		res.Cost = append(res.Cost,
			Round{Arm: Baseline.Name(), Replicas: 1, Block: b, CallsPerS: 10000 + 100*k, P99Ms: 2 + 0.1*k, ServerCPUPerCallUs: 50, DriverCPUPerCallUs: 40 + k},
			Round{Arm: "haproxy/key ×2", Replicas: 2, Block: b, CallsPerS: 8000 + 50*k, P99Ms: 3 + 0.1*k, ServerCPUPerCallUs: 55 + k, BalancerCPUPerCallUs: 20, DriverCPUPerCallUs: 42},
		)
		res.DBCost = append(res.DBCost,
			Round{Arm: "routed-owner, haproxy/key ×2", Replicas: 2, Block: b, Calls: 4000, CallsPerS: 2000 + 10*k, P99Ms: 20, ServerCPUPerCallUs: 90, BalancerCPUPerCallUs: 20, DriverCPUPerCallUs: 40},
			Round{Arm: "db-rowlock, haproxy/key ×2", Replicas: 2, Block: b, Calls: 3000, CallsPerS: 1500 + 20*k, P99Ms: 30 + k, ServerCPUPerCallUs: 120, BalancerCPUPerCallUs: 20, DriverCPUPerCallUs: 40},
			Round{Arm: "mutex, haproxy/key ×2", Replicas: 2, Block: b, Calls: 2000, CallsPerS: 1000 + 5*k, P99Ms: 50, ServerCPUPerCallUs: 100, BalancerCPUPerCallUs: 20, DriverCPUPerCallUs: 40, Unknown: 3 + int64(b), Fenced: int64(b)},
		)
		for i, d := range res.Designs {
			f := float64(i + 1)
			res.DesignCost = append(res.DesignCost,
				Round{Arm: DesignBaseline(d).Name(), Design: d, Replicas: 1, Block: b, CallsPerS: 9000 + 100*k, P99Ms: 2 + 0.1*k, ServerCPUPerCallUs: 50 + f, DriverCPUPerCallUs: 40},
				Round{Arm: d + ", haproxy/key ×2", Design: d, Replicas: 2, Block: b, CallsPerS: 7000 + 300*f + 20*k, P99Ms: 3 + 0.2*f, ServerCPUPerCallUs: 60 + 5*f + k, BalancerCPUPerCallUs: 20, DriverCPUPerCallUs: 42},
			)
		}
		res.NGrinder = append(res.NGrinder,
			Round{Arm: Baseline.Name(), Replicas: 1, Block: b, CallsPerS: 5000 + 10*k, P99Ms: 30},
			Round{Arm: "nginx/key ×2", Replicas: 2, Block: b, CallsPerS: 6000 + 20*k, P99Ms: 35, Errors: 1},
		)
	}
	res.RPCX = []Level{
		{Clients: 100, MeanMs: 4.2, MedianMs: 3.9, MaxMs: 40, MinMs: 0.3, P99Ms: 15, TPS: 12000, QuotaUse: 0.97, DriverCPUs: 0.8, Bottleneck: ServersBound},
		{Clients: 1000, MeanMs: 40, MedianMs: 38, MaxMs: 400, MinMs: 0.4, P99Ms: 120, TPS: 11000, QuotaUse: 0.7, DriverCPUs: 0.95, Bottleneck: DriverBound},
	}
	return res
}

// TestReportGolden: the report of fake results, and of a study not run
// yet, against their golden files (go test -update rewrites them).
func TestReportGolden(t *testing.T) {
	for name, res := range map[string]*Results{"report.md": fakeResults(), "stub.md": nil} {
		t.Run(name, func(t *testing.T) {
			got := Report(res)
			path := filepath.Join("testdata", name+".golden")
			if *update {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(want), got)
		})
	}
}

// TestCompare: the arm's ratio to the baseline of its block, with an
// interval that holds it; a block whose baseline is zero gives no ratio
// (the control).
func TestCompare(t *testing.T) {
	cs := Compare(fakeResults().Cost, Baseline.Name())
	require.Len(t, cs, 2*len(Metrics))
	base, arm := cs[0], cs[len(Metrics)]
	assert.Equal(t, Baseline.Name(), base.Arm)
	assert.Zero(t, base.Effect.N, "the baseline has no ratio to itself")
	assert.Equal(t, 3, arm.Effect.N)
	assert.Less(t, arm.Effect.GeoMean, 1.0, "fewer calls/s through the hop")
	assert.True(t, arm.Effect.Contains(arm.Effect.GeoMean))
	rounds := fakeResults().Cost
	rounds[0].CallsPerS = 0
	assert.NotEmpty(t, Compare(rounds, Baseline.Name())[len(Metrics)].Err, "the control")
}

// TestWrite: the results and the report land in the folder, and the
// results read back give the same report.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, Write(dir, fakeResults()))
	page, err := os.ReadFile(filepath.Join(dir, ReportFile))
	require.NoError(t, err)
	res, err := ReadResults(dir)
	require.NoError(t, err)
	assert.Equal(t, string(page), Report(res))
}

// TestWritePage: results with cost rounds get their picture beside the
// page, which links it, one row per arm that is not a baseline; results
// without cost rounds (the control) get neither, and a stale picture is
// removed.
func TestWritePage(t *testing.T) {
	dir := t.TempDir()
	res := fakeResults()
	require.NoError(t, WritePage(dir, res))
	svg, err := os.ReadFile(filepath.Join(dir, ForestFile))
	require.NoError(t, err)
	assert.Contains(t, string(svg), "<svg")
	page, err := os.ReadFile(filepath.Join(dir, ReportFile))
	require.NoError(t, err)
	assert.Contains(t, string(page), "]("+ForestFile+")")
	for _, r := range Forest(res).Rows {
		assert.NotContains(t, r.Label, Baseline.Name()+" against", "a baseline is not drawn against itself")
	}
	assert.NotEmpty(t, Forest(res).Rows)

	res.Cost, res.DBCost, res.DesignCost = nil, nil, nil
	require.NoError(t, WritePage(dir, res))
	assert.NoFileExists(t, filepath.Join(dir, ForestFile))
	page, err = os.ReadFile(filepath.Join(dir, ReportFile))
	require.NoError(t, err)
	assert.NotContains(t, string(page), ForestFile)
}

// TestEveryDesignSection: results with every design's rounds get the
// section, one row per arm of each design, each design's arm against its
// own baseline, and a row each in the picture; results saved before the
// section (the control) get neither.
func TestEveryDesignSection(t *testing.T) {
	const heading = "## Every design behind the balancer"
	res := fakeResults()
	page := Report(res)
	require.Contains(t, page, heading)
	section := page[strings.Index(page, heading):]
	section = section[:strings.Index(section, "\n## The cost over one database")]
	var drawn []string
	for _, r := range Forest(res).Rows {
		if strings.HasPrefix(r.Label, "every design: ") {
			drawn = append(drawn, r.Label)
		}
	}
	assert.Len(t, drawn, len(res.Designs))
	for _, d := range res.Designs {
		cs := Compare(res.DesignRounds(d), DesignBaseline(d).Name())
		require.Len(t, cs, 2*len(Metrics), d)
		assert.Equal(t, DesignBaseline(d).Name(), cs[0].Arm)
		assert.Equal(t, len(res.DesignRounds(d))/2, cs[len(Metrics)].Effect.N, "%s: paired block by block", d)
		assert.Contains(t, section, "| "+cs[0].Arm+" |")
		assert.Contains(t, section, "| "+cs[len(Metrics)].Arm+" |")
		assert.Contains(t, section, effect(cs[len(Metrics)]))
		assert.Contains(t, drawn, fmt.Sprintf("every design: %s against %s", cs[len(Metrics)].Arm, cs[0].Arm))
	}

	old := fakeResults()
	old.DesignCost, old.Designs = nil, nil
	assert.NotContains(t, Report(old), heading, "the control")
	for _, r := range Forest(old).Rows {
		assert.NotContains(t, r.Label, "every design", "the control")
	}
}

// TestCommittedPageRenders: the committed results (saved, at first,
// before every design's rounds were added) still render the committed page
// and picture byte for byte; the control: the same results with the section's rounds
// render another page.
func TestCommittedPageRenders(t *testing.T) {
	committed := filepath.Join("..", "..", "..", "docs", "results", "replicas")
	res, err := ReadResults(committed)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, WritePage(dir, res))
	for _, name := range []string{ReportFile, ForestFile} {
		want, err := os.ReadFile(filepath.Join(committed, name))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), name)
	}
	f := fakeResults()
	res.DesignCost, res.Designs, res.DesignFront, res.DesignReplicas, res.DesignRound, res.DesignBlocks =
		f.DesignCost, f.Designs, f.DesignFront, f.DesignReplicas, f.DesignRound, f.DesignBlocks
	want, err := os.ReadFile(filepath.Join(committed, ReportFile))
	require.NoError(t, err)
	assert.NotEqual(t, string(want), Report(res), "the control")
}
