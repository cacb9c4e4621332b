package seeds

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/run"
	"github.com/locklab/locklab/server/serve"
)

// BankRow is one row of the bank seed's results: a case of the bank
// workload, the scenario the bank is reset to first, and the number of
// requests ghz sends.
type BankRow struct {
	Label    string // as the seed's table names it
	Scenario string
	Case     string
	Requests int
}

// BankRows are the seed's rows, in its order: transfers in scenarios A, B
// and C at 500 and 1000 requests, then 2000 reads of a balance and of a
// history, from one user and from random users. The reads run on a bank
// reset to scenario A: the seed read its database after its transfers.
var BankRows = []BankRow{
	{"TransferMoney A", "A", "transfer", 500},
	{"TransferMoney A", "A", "transfer", 1000},
	{"TransferMoney B", "B", "transfer", 500},
	{"TransferMoney B", "B", "transfer", 1000},
	{"TransferMoney C", "C", "transfer", 500},
	{"TransferMoney C", "C", "transfer", 1000},
	{"GetBalance, one user", "A", "balance-one", 2000},
	{"GetBalance, random users", "A", "balance-random", 2000},
	{"GetHistory, one user", "A", "history-one", 2000},
	{"GetHistory, random users", "A", "history-random", 2000},
}

// BankConcurrency is the seed's 20 requests in parallel.
const BankConcurrency = 20

// BankPlan is the bank seed's runs: every row for every mode, the modes
// alternating inside each row so that drift falls on all of them alike.
func BankPlan(modes []string) []run.Counted {
	var out []run.Counted
	for _, row := range BankRows {
		for _, m := range modes {
			id := fmt.Sprintf("bank-%s-%s-n%d-%s", row.Scenario, row.Case, row.Requests, m)
			out = append(out, run.Counted{Spec: plan.Spec{Index: len(out) + 1, ID: id, Workload: "bank-" + row.Scenario, Scenario: row.Scenario,
				Driver: "ghz", Mode: m, Model: "closed", Level: BankConcurrency, Rep: 1}, Case: row.Case, Total: row.Requests})
		}
	}
	return out
}

// caseOf is the one case a ghz run drove.
func caseOf(r *record.Run) string {
	if r.Result == nil || len(r.Result.ByCase) != 1 {
		return ""
	}
	return slices.Collect(maps.Keys(r.Result.ByCase))[0]
}

// Bank renders the seed's table: one row per seed row, and per mode its
// columns (RPS, average, p99 and max latency, total time).
func Bank(meta record.Meta, runs []*record.Run) (string, error) {
	if len(runs) == 0 {
		return "", errors.New("seeds: bank: no runs in the folder")
	}
	modes := modesOf(runs, "mutex", "inputQ")
	var rows []BankDBRow
	for _, r := range BankRows {
		rows = append(rows, BankDBRow{r, serve.CacheNone})
	}
	var b strings.Builder
	b.WriteString("## Our runs\n\n")
	fmt.Fprintf(&b, "ghz, %d requests in parallel, a fresh server per row reset to the row's scenario (A: every account funded; "+
		"B: even accounts empty; C: every account empty) after a %s warm-up of the same call. A refused transfer (B, C) is a request "+
		"like any other, as ghz counts it.\n\n", BankConcurrency, meta.Warmup)
	b.WriteString(bankTable(runs, rows, modes))
	b.WriteString("\n" + saturation(runs, modes))
	return b.String(), nil
}

// bankRun is the run of one row for one mode: the median of its
// repetitions, or nil.
func bankRun(runs []*record.Run, row BankDBRow, mode string) *record.Run {
	return medianRun(slices.DeleteFunc(slices.Clone(runs), func(r *record.Run) bool {
		return r.Mode != mode || r.Scenario != row.Scenario || caseOf(r) != row.Case || r.Result.Calls != int64(row.Requests) ||
			r.Factors.Get(plan.Cache) != row.Cache
	}))
}

// bankTable is the seed's columns for rows, per mode, and the runs that
// failed a check.
func bankTable(runs []*record.Run, rows []BankDBRow, modes []string) string {
	head := []string{"Case", "Requests"}
	for _, m := range modes {
		head = append(head, m+" RPS (req/s)", "avg (ms)", ".99 (ms)", "max (ms)", "total (ms)")
	}
	var cells [][]string
	var failed []string
	for _, row := range rows {
		line := []string{row.Label, count(float64(row.Requests))}
		for _, m := range modes {
			r := bankRun(runs, row, m)
			if r == nil {
				line = append(line, "—", "—", "—", "—", "—")
				continue
			}
			if r.Failed() {
				failed = append(failed, fmt.Sprintf("- %s: %s", r.ID, strings.Join(r.Problems, "; ")))
			}
			l := r.Result.LatencyMs
			line = append(line, mark(r, fmt.Sprintf("%.2f", r.Derived.CallsPerSec)), msCell(l.Mean), msCell(l.P99), msCell(l.Max), msCell(r.Result.DurationS*1000))
		}
		cells = append(cells, line)
	}
	out := table(head, cells)
	if len(failed) > 0 {
		out += "\nRuns that failed a check (their figures are shown, but do not trust them):\n\n" + strings.Join(failed, "\n") + "\n"
	}
	return out
}

// BankPublished is the seed's table, with our row names.
func BankPublished() string {
	return bankPublishedTable("On 4 cores and 8 GB (Ubuntu 20.04), a Vert.x service over MySQL and Redis; the cached rows have no counterpart on this page, whose bank is in memory (the bank-db seed runs them over MariaDB and Redis):")
}

func bankPublishedTable(intro string) string {
	head := []string{"Case", "Requests", "RPS (req/s)", "avg.latency (ms)", ".99 latency (ms)", "max.latency (ms)", "total time (ms)"}
	var rows [][]string
	for i, row := range BankRows {
		rows = append(rows, append([]string{row.Label, count(float64(row.Requests))}, bankPublished[i][:]...))
	}
	for _, c := range bankPublishedCached {
		rows = append(rows, append([]string{c.Label, count(float64(readRequests(c.Case)))}, c.Figures[:]...))
	}
	return intro + "\n\n" + table(head, rows)
}

// readRequests is the requests of the seed's row of a case.
func readRequests(kase string) int {
	for _, r := range BankRows {
		if r.Case == kase {
			return r.Requests
		}
	}
	return 0
}
