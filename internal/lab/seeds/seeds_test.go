package seeds

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/ghz"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/summary"
)

func k6Details(iterations int64, sent, received int64, testRunMs float64) *summary.K6Details {
	return &summary.K6Details{Iterations: iterations, DataSentBytes: sent, DataReceivedBytes: received, TestRunDurationMs: testRunMs,
		IterationMs: &summary.LatencyMs{Min: 0.76888, Mean: 2.19, P50: 1.97, P90: 2.89, P95: 3.34, Max: 781.69}}
}

var lat = summary.LatencyMs{Min: 0.18445, Mean: 0.71994, P50: 0.68739, P90: 1.16, P95: 1.37, P99: 2.5, Max: 10.71}

func TestLadderGolden(t *testing.T) {
	rs := runs(t,
		fx{id: "l1", mode: "mutex", workload: "counter", driver: "k6", level: 10, calls: 20000, seconds: 5, serverUtil: 0.5, driverUtil: 0.97, lat: lat,
			k6: k6Details(20000, 4_300_000, 3_400_000, 6000)},
		fx{id: "l2", mode: "inputQ", workload: "counter", driver: "k6", level: 10, calls: 18000, seconds: 5, serverUtil: 0.6, driverUtil: 0.6, lat: lat,
			k6: k6Details(18000, 3_900_000, 3_100_000, 6000)},
		// A second repetition of inputQ at 10: the median (lower) stands.
		fx{id: "l3", mode: "inputQ", workload: "counter", driver: "k6", level: 10, calls: 30000, seconds: 5, serverUtil: 0.6, driverUtil: 0.6, lat: lat,
			k6: k6Details(30000, 6_000_000, 5_000_000, 6000)},
		fx{id: "l4", mode: "mutex", workload: "counter", driver: "k6", level: 1000, calls: 25000, seconds: 5, serverUtil: 0.4, driverUtil: 0.99, lat: lat,
			k6: &summary.K6Details{Iterations: 25000, DataSentBytes: 999, DataReceivedBytes: 12_000_000_000, TestRunDurationMs: 9000}},
		// Not the ladder's: left out.
		fx{id: "g1", mode: "mutex", workload: "counter", driver: "go", level: 10, calls: 1, seconds: 5, lat: lat},
	)
	table, err := Ladder(fixtureMeta, rs)
	require.NoError(t, err)
	s, _ := Lookup("ladder")
	page := s.Page(fixtureMeta, table, LadderPublished(), "")
	golden(t, "ladder.md", page)
	assert.Contains(t, page, "| iterations | 18000 3000.000000/s | 20000 3333.333333/s† |", "inputQ first, the median repetition, the load-bound mark")
	assert.Contains(t, page, "| data_received | — | 12 GB 1.3 GB/s |", "a level one mode did not run")
	assert.Contains(t, page, Placeholder)

	_, err = Ladder(fixtureMeta, rs[4:])
	assert.ErrorContains(t, err, "no k6 run of the counter")
	noK6 := runs(t, fx{id: "x", mode: "mutex", workload: "counter", driver: "k6", level: 10, calls: 1, seconds: 1, lat: lat})
	_, err = Ladder(fixtureMeta, noK6)
	assert.ErrorContains(t, err, "has no k6 summary")
}

func TestBankGolden(t *testing.T) {
	rs := runs(t,
		fx{id: "b1", mode: "mutex", workload: "bank-A", driver: "ghz", level: 20, calls: 500, seconds: 0.25, serverUtil: 0.3, driverUtil: 0.9, lat: lat, kase: "transfer"},
		fx{id: "b2", mode: "inputQ", workload: "bank-A", driver: "ghz", level: 20, calls: 500, seconds: 0.3, serverUtil: 0.3, driverUtil: 0.7, lat: lat, kase: "transfer"},
		fx{id: "b3", mode: "mutex", workload: "bank-B", driver: "ghz", level: 20, calls: 500, seconds: 0.2, serverUtil: 0.95, driverUtil: 0.5, lat: lat, kase: "transfer", refusals: 240},
		fx{id: "b4", mode: "inputQ", workload: "bank-A", driver: "ghz", level: 20, calls: 2000, seconds: 0.5, serverUtil: 0.3, driverUtil: 0.7, lat: lat, kase: "history-random",
			problems: []string{"INVARIANT VIOLATED: money conserved: total balance 1 before, 2 after"}},
	)
	table, err := Bank(fixtureMeta, rs)
	require.NoError(t, err)
	s, _ := Lookup("bank")
	page := s.Page(fixtureMeta, table, BankPublished(), "")
	golden(t, "bank.md", page)
	assert.Contains(t, page, "| TransferMoney A | 500 | 2000.00† | 0.72 | 2.50 | 10.71 | 250.00 | 1666.67 |")
	assert.Contains(t, page, "- b4: INVARIANT VIOLATED")
	_, err = Bank(fixtureMeta, nil)
	assert.Error(t, err)
}

// TestBankDBGolden: the page over a database from fixture records — the
// rows with and without the cache, the reads before and after, the
// versions, the load-bound mark and a failed run.
func TestBankDBGolden(t *testing.T) {
	meta := fixtureMeta
	meta.MariaDBVersion, meta.RedisVersion = "mariadbd  Ver 11.8.3-MariaDB-0+deb13u1 for debian-linux-gnu on x86_64", "Redis server v=8.0.2 sha=00000000:1 malloc=jemalloc-5.3.0 bits=64 build=1"
	slow := summary.LatencyMs{Min: 1.2, Mean: 9.5, P50: 8.1, P90: 15, P95: 18, P99: 31.4, Max: 44}
	rs := runs(t,
		fx{id: "d1", mode: "mutex", workload: "bank-A", driver: "ghz", level: 20, calls: 500, seconds: 1.25, serverUtil: 0.2, driverUtil: 0.1, lat: slow, kase: "transfer", cache: "none"},
		fx{id: "d2", mode: "db-rowlock", workload: "bank-A", driver: "ghz", level: 20, calls: 500, seconds: 0.5, serverUtil: 0.3, driverUtil: 0.2, lat: slow, kase: "transfer", cache: "none"},
		fx{id: "d3", mode: "mutex", workload: "bank-A", driver: "ghz", level: 20, calls: 2000, seconds: 1, serverUtil: 0.5, driverUtil: 0.4, lat: slow, kase: "history-one", cache: "none"},
		fx{id: "d4", mode: "mutex", workload: "bank-A", driver: "ghz", level: 20, calls: 2000, seconds: 0.5, serverUtil: 0.6, driverUtil: 0.9, lat: lat, kase: "history-one", cache: "redis"},
		fx{id: "d5", mode: "db-rowlock", workload: "bank-A", driver: "ghz", level: 20, calls: 2000, seconds: 0.8, serverUtil: 0.5, driverUtil: 0.5, lat: lat, kase: "balance-random", cache: "redis",
			problems: []string{"INVARIANT VIOLATED: money conserved: total balance 1 before, 2 after"}},
	)
	table, err := BankDB(meta, rs)
	require.NoError(t, err)
	s, ok := Lookup("bank-db")
	require.True(t, ok)
	page := s.Page(meta, table, BankDBPublished(), "")
	golden(t, "bank-db.md", page)
	assert.Contains(t, page, "| TransferMoney A | 500 | 400.00 | 9.50 | 31.40 | 44.00 | 1250.00 | 1000.00 | 9.50 | 31.40 | 44.00 | 500.00 |", "mutex first, then the others as they ran")
	assert.Contains(t, page, "| GetHistory, one user, cached | 2,000 | 4000.00† |", "the cached row, load-bound")
	assert.Contains(t, page, "| GetHistory, one user | mutex | 2000.00 | 4000.00† | +100% | 31.40 | 2.50 |", "before and after the cache")
	assert.NotContains(t, page, "| GetBalance, random users | db-rowlock |", "a read that ran only through the cache has no before and after")
	assert.Contains(t, page, "GetHistory, one user 5374.94 → 7509 req/s (+40%)", "the seed's own")
	assert.Contains(t, page, "- d5: INVARIANT VIOLATED")
	assert.Contains(t, page, meta.MariaDBVersion)
	assert.Contains(t, page, meta.RedisVersion)
	_, err = BankDB(meta, nil)
	assert.Error(t, err)

	// The control: the rows read the cache each ran with; a cached run
	// is not an uncached one.
	mem, err := Bank(fixtureMeta, rs[3:4])
	require.NoError(t, err)
	assert.Contains(t, mem, "| GetHistory, one user | 2,000 | — |", "the in-memory page leaves out a run through the cache")
}

// The bank's plan over a database: every row without the cache, the reads
// again through it, for every mode, each run's server told -backend mysql
// (and -cache redis for the cached rows); the estimate grows with the
// designs (cmd/compare's budget test holds the seed-bank-db study's
// estimate to its budget).
func TestBankDBPlan(t *testing.T) {
	rows := BankDBRows()
	reads := slices.DeleteFunc(slices.Clone(BankRows), func(r BankRow) bool { return r.Case == transferCase })
	require.Len(t, rows, len(BankRows)+len(reads))
	modes := []string{"mutex", "inputQ", "db-rowlock"}
	p := BankDBPlan(modes)
	require.Len(t, p, len(rows)*len(modes))
	ids := map[string]bool{}
	cached := 0
	for i, c := range p {
		row := rows[i/len(modes)]
		assert.Equal(t, modes[i%len(modes)], c.Mode)
		assert.Equal(t, row.Requests, c.Total)
		args := strings.Join(c.Factors.ServerArgs(plan.RunDirs{}), " ")
		assert.Contains(t, args, "-backend mysql", c.ID)
		if row.Cache == "redis" {
			cached++
			assert.Contains(t, args, "-cache redis", c.ID)
			assert.NotEqual(t, transferCase, row.Case)
			assert.True(t, strings.HasSuffix(row.Label, cachedLabel))
		} else {
			assert.NotContains(t, args, "-cache", c.ID)
		}
		_, err := ghz.Lookup("bank", c.Case, c.Scenario)
		assert.NoError(t, err, c.ID)
		assert.False(t, ids[c.ID], "ids are unique: %s", c.ID)
		ids[c.ID] = true
	}
	assert.Equal(t, len(reads)*len(modes), cached)
	assert.Less(t, BankDBEstimate(modes), BankDBEstimate(append(modes, "rwmutex")), "the estimate grows with the designs")
}

func TestRPCXGolden(t *testing.T) {
	rs := runs(t,
		fx{id: "r1", mode: "mutex", workload: "kv", driver: "ghz", level: 100, calls: 50000, seconds: 4, serverUtil: 0.9, driverUtil: 0.99, lat: lat, kase: "put"},
		fx{id: "r2", mode: "inputQ", workload: "kv", driver: "ghz", level: 100, calls: 50000, seconds: 5, serverUtil: 0.9, driverUtil: 0.8, lat: lat, kase: "put"},
		fx{id: "r3", mode: "mutex", workload: "kv", driver: "ghz", level: 5000, calls: 50000, seconds: 6, serverUtil: 0.7, driverUtil: 0.99, lat: lat, kase: "put"},
	)
	table, err := RPCX(fixtureMeta, rs)
	require.NoError(t, err)
	s, _ := Lookup("rpcx")
	golden(t, "rpcx.md", s.Page(fixtureMeta, table, RPCXPublished(), ""))
	assert.Contains(t, table, "| 5,000 | 0.72 | 0.69 | 10.71 | 0.18 | 2.50 | 8,333† | — | — | — | — | — | — |")
	_, err = RPCX(fixtureMeta, nil)
	assert.Error(t, err)
}

func TestBeforeAfterGolden(t *testing.T) {
	before := runs(t,
		fx{id: "m1", mode: "mutex", workload: "bank-A", driver: "go", level: 100, calls: 10000, seconds: 5, serverUtil: 0.95, driverUtil: 0.5, lat: lat, unexpected: 3,
			perSecond: []int64{1900, 2100, 2000, 2000, 2000}},
		fx{id: "m2", mode: "mutex", workload: "bank-A", driver: "go", level: 100, calls: 12000, seconds: 5, serverUtil: 0.97, driverUtil: 0.5, lat: lat,
			perSecond: []int64{2300, 2500, 2400, 2400, 2300, 100}},
	)
	after := runs(t,
		fx{id: "q1", mode: "inputQ-batch", workload: "bank-A", driver: "go", level: 100, calls: 20000, seconds: 5, serverUtil: 0.9, driverUtil: 0.6, lat: lat,
			perSecond: []int64{4000, 4100, 3900, 4000, 4000}},
	)
	got, err := BeforeAfter("before", before, "after", after)
	require.NoError(t, err)
	s, _ := Lookup("ngrinder")
	golden(t, "ngrinder.md", s.Page(fixtureMeta, got, NGrinderPublished(), ""))
	assert.Contains(t, got, "| TPS (calls/s, median of runs) | 2,200 | 4,000 | +82% |")
	assert.Contains(t, got, "| peak TPS (most calls in one second, any run) | 2,500 | 4,100 | +64% |", "the partial last second left out")
	assert.Contains(t, got, "| errors (unexpected answers, all runs) | 3 | 0 | -100% |")

	// Bad input: an empty side, a side of two groups, a failed run.
	_, err = BeforeAfter("before", nil, "after", after)
	assert.ErrorContains(t, err, "before: no runs")
	mixed := append(slices.Clone(before), after...)
	_, err = BeforeAfter("before", mixed, "after", after)
	assert.ErrorContains(t, err, "before holds 2 groups")
	bad := runs(t, fx{id: "f", mode: "mutex", workload: "bank-A", driver: "go", level: 100, calls: 1, seconds: 1, lat: lat, problems: []string{"x"}})
	table, err := BeforeAfter("before", bad, "after", after)
	assert.ErrorContains(t, err, "failed a check")
	assert.NotEmpty(t, table, "the report is still written")
	// A driver that does not count per second: no peak.
	noPeak := runs(t, fx{id: "k", mode: "mutex", workload: "bank-A", driver: "k6", level: 100, calls: 1, seconds: 1, lat: lat})
	got, err = BeforeAfter("before", noPeak, "after", after)
	require.NoError(t, err)
	assert.Contains(t, got, "| peak TPS (most calls in one second, any run) | — | 4,100 | — |")
}

// The seeds' formats are the ones their pages printed.
func TestK6Formats(t *testing.T) {
	for ms, want := range map[float64]string{0.71994: "719.94µs", 0.1845: "184.5µs", 10.71: "10.71ms", 5: "5ms", 3060: "3.06s", 13.3: "13.3ms", 0: "0s"} {
		assert.Equal(t, want, k6Duration(ms), "%v ms", ms)
	}
	for b, want := range map[float64]string{23e6: "23 MB", 754e3: "754 kB", 1.0e6: "1.0 MB", 2.3e6: "2.3 MB", 999: "999 B"} {
		assert.Equal(t, want, k6Bytes(b), "%v bytes", b)
	}
	assert.Equal(t, "1,234,567", count(1234567))
	assert.Equal(t, "999", count(999))
}

// The bank plan is every row for every mode, each a case ghz can send.
func TestBankPlan(t *testing.T) {
	modes := []string{"mutex", "inputQ", "combining"}
	p := BankPlan(modes)
	require.Len(t, p, len(BankRows)*len(modes))
	ids := map[string]bool{}
	for i, c := range p {
		row := BankRows[i/len(modes)]
		assert.Equal(t, modes[i%len(modes)], c.Mode)
		assert.Equal(t, row.Requests, c.Total)
		assert.Equal(t, BankConcurrency, c.Level)
		assert.Equal(t, i+1, c.Index)
		_, err := ghz.Lookup("bank", c.Case, c.Scenario)
		assert.NoError(t, err, c.ID)
		assert.False(t, ids[c.ID], "ids are unique: %s", c.ID)
		ids[c.ID] = true
	}
	assert.Len(t, bankPublished, len(BankRows), "one published row per row")
	r := RPCXPlan([]string{"mutex"}, 10)
	require.Len(t, r, len(RPCXLevels))
	for _, c := range r {
		_, err := ghz.Lookup("kv", c.Case, "")
		assert.NoError(t, err)
	}
}

// Every seed has its folder with a README (and its row in the catalogue of
// studies, which internal/lab/study's tests check).
func TestEverySeedHasAFolder(t *testing.T) {
	for _, s := range Seeds {
		assert.FileExists(t, filepath.Join("../../..", Dir, s.Name, "README.md"))
		assert.Contains(t, s.Stub(), s.Produce)
	}
	_, ok := Lookup("nope")
	assert.False(t, ok)
	assert.Len(t, Names(), len(Seeds))
}

// The control of the golden files: a different figure renders a different
// page, which the comparison would catch.
func TestGoldenCatchesAChange(t *testing.T) {
	want, err := os.ReadFile("testdata/rpcx.md.golden")
	require.NoError(t, err)
	rs := runs(t, fx{id: "r1", mode: "mutex", workload: "kv", driver: "ghz", level: 100, calls: 49999, seconds: 4, serverUtil: 0.9, driverUtil: 0.99, lat: lat, kase: "put"})
	table, err := RPCX(fixtureMeta, rs)
	require.NoError(t, err)
	s, _ := Lookup("rpcx")
	assert.NotEqual(t, string(want), s.Page(fixtureMeta, table, RPCXPublished(), ""))
}

// TestPageDiffer: a hand-written sentence replaces the placeholder; without
// one the placeholder stays (the control).
func TestPageDiffer(t *testing.T) {
	s, ok := Lookup("rpcx")
	require.True(t, ok)
	with := s.Page(fixtureMeta, "table\n", "published\n", "  ours is smaller.\n")
	assert.Contains(t, with, "**How the two differ, and why:** ours is smaller.\n")
	assert.NotContains(t, with, Placeholder)
	assert.Contains(t, s.Page(fixtureMeta, "table\n", "published\n", ""), Placeholder)
}
