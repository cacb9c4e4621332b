package seeds

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/run"
	"github.com/locklab/locklab/server"
	"github.com/locklab/locklab/server/serve"
)

// BankDBRow is a row of the bank seed over a database: a row of BankRows
// and the cache in front of the database (a value of server -cache).
type BankDBRow struct {
	BankRow
	Cache string
}

// cachedLabel ends the label of a row read through the cache.
const cachedLabel = ", cached"

// BankDBRows are the bank seed's rows over a database: every row of
// BankRows with no cache, as the seed's service ran them before it had
// one, then its reads again through a Redis cache, as it ran its cached
// rows after (its before and after).
func BankDBRows() []BankDBRow {
	var out []BankDBRow
	for _, r := range BankRows {
		out = append(out, BankDBRow{r, serve.CacheNone})
	}
	for _, r := range BankRows {
		if r.Case != transferCase {
			r.Label += cachedLabel
			out = append(out, BankDBRow{r, serve.CacheRedis})
		}
	}
	return out
}

// transferCase is the bank's one writing case; the others read.
const transferCase = "transfer"

// BankDBPlan is the bank seed's runs over a database: every row of
// BankDBRows for every mode, the modes alternating inside each row, each
// run's server over a private MariaDB of its own (and a private Redis for
// the cached rows) at the seed's pool of dbbank.DefaultPool connections.
func BankDBPlan(modes []string) []run.Counted {
	var out []run.Counted
	for _, row := range BankDBRows() {
		pt := plan.DefaultPoint().With(plan.Backend, server.BackendMySQL).With(plan.Cache, row.Cache)
		for _, m := range modes {
			id := fmt.Sprintf("bankdb-%s-%s-n%d%s-%s", row.Scenario, row.Case, row.Requests, pt.IDSuffix(), m)
			out = append(out, run.Counted{Spec: plan.Spec{Index: len(out) + 1, ID: id, Workload: "bank-" + row.Scenario, Scenario: row.Scenario,
				Driver: "ghz", Mode: m, Model: "closed", Level: BankConcurrency, Rep: 1, Factors: pt}, Case: row.Case, Total: row.Requests})
		}
	}
	return out
}

// countedDBRate is the rate, in calls a second, at which BankDBEstimate
// assumes a run over a database sends its calls: the seed's slowest
// published row (its transfers over MySQL, about 494 a second), so that the
// estimate errs long on a small machine.
const countedDBRate = 494

// Warmup is the warm-up of the ghz seeds' runs, unless cmd/seeds is told
// another (-warmup).
const Warmup = 500 * time.Millisecond

// BankDBEstimate is how long BankDBPlan(modes) takes: the runner's estimate
// of each run's fixed costs (a server over a private database started and
// stopped, the warm-up), plus its calls at countedDBRate.
func BankDBEstimate(modes []string) time.Duration {
	cfg := run.Config{Warmup: Warmup}
	var total time.Duration
	for _, c := range BankDBPlan(modes) {
		total += run.CountedDuration(cfg, c) + time.Duration(float64(c.Total)/countedDBRate*float64(time.Second))
	}
	return total
}

// BankDB renders the seed's table over a database: the rows of
// BankDBRows with the seed's columns per mode, then the reads before and
// after the cache side by side, then who set the pace.
func BankDB(meta record.Meta, runs []*record.Run) (string, error) {
	if len(runs) == 0 {
		return "", errors.New("seeds: bank-db: no runs in the folder")
	}
	modes := modesOf(runs, "mutex", "inputQ")
	var b strings.Builder
	b.WriteString("## Our runs\n\n")
	fmt.Fprintf(&b, "ghz, %d requests in parallel, a fresh server per row over a private MariaDB of its own (%s), a pool of %s connections, "+
		"seeded with the bank and reset to the row's scenario (A: every account funded; B: even accounts empty; C: every account empty) "+
		"after a %s warm-up of the same call; every transfer is one transaction, committed before it is answered. "+
		"The rows marked cached read through a private Redis (%s) in front of the database, as the seed's cached rows did; "+
		"the reset starts the cache empty, so each account's first read in the measured calls misses. "+
		"A refused transfer (B, C) is a request like any other, as ghz counts it.\n\n",
		BankConcurrency, orUnknown(meta.MariaDBVersion), poolOf(runs), meta.Warmup, orUnknown(meta.RedisVersion))
	b.WriteString(bankTable(runs, BankDBRows(), modes))
	b.WriteString("\n" + bankCacheTable(runs, modes))
	b.WriteString("\n" + saturation(runs, modes))
	b.WriteString("\nMariaDB and Redis are the server's children and run on its CPUs: a run is server-bound when the server and " +
		"the database it started used ≥ 90% of those CPUs together (each run's record keeps the two apart, `server_proc` and " +
		"`backend_proc`); a run classed neither saturated no CPU, and its pace was set by the database's row locks and commits " +
		"or by the calls' round trips.\n")
	return b.String(), nil
}

func orUnknown(v string) string {
	if v == "" {
		return "version not recorded"
	}
	return v
}

// poolOf is the database pool the runs name (one value, or a list).
func poolOf(runs []*record.Run) string {
	var pools []string
	for _, r := range runs {
		if p := r.Factors.Get(plan.DBPool); !slices.Contains(pools, p) {
			pools = append(pools, p)
		}
	}
	return strings.Join(pools, ", ")
}

// bankCacheTable is the seed's before and after for reads: each read row
// and mode without the cache and through it, with the change; then the
// seed's own two.
func bankCacheTable(runs []*record.Run, modes []string) string {
	head := []string{"Case", "design", "RPS, no cache", "RPS, Redis", "change", ".99 (ms), no cache", ".99 (ms), Redis"}
	var rows [][]string
	for _, row := range BankRows {
		if row.Case == transferCase {
			continue
		}
		for _, m := range modes {
			before := bankRun(runs, BankDBRow{row, serve.CacheNone}, m)
			after := bankRun(runs, BankDBRow{row, serve.CacheRedis}, m)
			if before == nil || after == nil {
				continue
			}
			rows = append(rows, []string{row.Label, m,
				mark(before, fmt.Sprintf("%.2f", before.Derived.CallsPerSec)), mark(after, fmt.Sprintf("%.2f", after.Derived.CallsPerSec)),
				change(before.Derived.CallsPerSec, after.Derived.CallsPerSec),
				msCell(before.Result.LatencyMs.P99), msCell(after.Result.LatencyMs.P99)})
		}
	}
	var seed []string
	for _, c := range bankPublishedCached {
		for i, row := range BankRows {
			if row.Case == c.Case {
				v0, _ := strconv.ParseFloat(bankPublished[i][0], 64) // the source's figures, checked by the golden test
				v1, _ := strconv.ParseFloat(c.Figures[0], 64)
				seed = append(seed, fmt.Sprintf("%s %s → %s req/s (%s)", row.Label, bankPublished[i][0], c.Figures[0], change(v0, v1)))
			}
		}
	}
	out := "### The reads before and after the cache\n\n"
	if len(rows) == 0 {
		out += "No read ran both without the cache and through it.\n"
	} else {
		out += table(head, rows)
	}
	return out + "\nThe seed's own before and after (its published figures): " + strings.Join(seed, "; ") + ".\n"
}

// change is after against before, in percent.
func change(before, after float64) string {
	if before == 0 {
		return "—"
	}
	return fmt.Sprintf("%+.0f%%", 100*(after/before-1))
}

// BankDBPublished is the seed's table, with our row names, for the page
// over a database.
func BankDBPublished() string {
	return bankPublishedTable("On 4 cores and 8 GB (Ubuntu 20.04), a Vert.x service over MySQL (a pool of 9 connections) and Redis; " +
		"its cached rows are its GetHistory reads after it added the cache, the counterparts of our GetHistory rows marked cached:")
}
