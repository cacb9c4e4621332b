package seeds

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/load"
)

// A Seed is one source experiment: where its table lives, how it is made,
// and what its source was.
type Seed struct {
	Name   string // its folder under docs/results/seeds, and its study is seed-<Name>
	Title  string
	Source string // the source, in words: its author's setup and tool
	// Produce says how the folder is made, for its README.
	Produce string
}

// Dir is where every seed's folder lives, relative to the repository.
const Dir = "docs/results/seeds"

// Seeds are the source experiments, in the order of their rows in the catalogue of studies (internal/lab/study).
var Seeds = []Seed{
	{Name: "ladder", Title: "The inputQ-vs-mutex k6 ladder",
		Source: "a small Go repository's README that introduced the inputQ pattern: a gRPC counter served with `-mode mutex` or `-mode inputQ`, " +
			"driven by k6 from 10 to 1000 virtual users, k6's end-of-test summary per level",
		Produce: "`make study NAME=seed-ladder`: the runner (`cmd/compare -driver k6 -ladder -workloads counter`) writes the runs here, " +
			"then `go run ./cmd/seeds ladder -in " + Dir + "/ladder` renders this table from them."},
	{Name: "bank", Title: "The gRPC bank benchmark, with ghz",
		Source: "a Vietnamese benchmark of a gRPC money-transfer service (1000 users, 20,000,000 each) run with ghz at 20 requests in parallel: " +
			"TransferMoney in scenarios A, B and C, GetBalance and GetHistory from one user and from random users",
		Produce: "`make study NAME=seed-bank`: `go run ./cmd/seeds bank -out " + Dir + "/bank` runs ghz for the seed's request counts at concurrency 20, " +
			"a fresh server per row, reset to the row's scenario through the API, and renders this table."},
	{Name: "bank-db", Title: "The gRPC bank benchmark over MariaDB and Redis, with ghz",
		Source: "the same Vietnamese benchmark as it ran: its service over MySQL with a pool of 9 connections, history cached in Redis, " +
			"ghz at 20 requests in parallel; TransferMoney in scenarios A, B and C, GetBalance and GetHistory from one user and from random users, " +
			"and GetHistory again once the cache was in",
		Produce: "`make study NAME=seed-bank-db`: `go run ./cmd/seeds bank -backend mysql -out " + Dir + "/bank-db` runs ghz for the seed's request counts " +
			"at concurrency 20, a fresh server per row over a private MariaDB of its own (and a private Redis for the cached rows), both " +
			"started and stopped by the server, reset to the row's scenario through the API, and renders this table."},
	{Name: "rpcx", Title: "The rpcx benchmark page's concurrency table",
		Source: "rpcx's benchmark page (Chinese): a ~581-byte protobuf message round trip, 100 to 5000 concurrent clients, a million requests, " +
			"client and server on one 24-core machine, rpcx against gRPC",
		Produce: "`make study NAME=seed-rpcx`: `go run ./cmd/seeds rpcx -out " + Dir + "/rpcx` runs ghz putting a value of the kv workload's size " +
			"(" + strconv.Itoa(load.Workloads().KV.Defaults.ValueSize) + " bytes) at each concurrency (`RPCX_REQUESTS=1000000` for the seed's full million) and renders this table."},
	{Name: "ngrinder", Title: "The nGrinder before/after report",
		Source: "a Japanese post on load-testing a Spring service with nGrinder: average TPS, peak TPS, errors and CPU before and after a change (a Redis cache)",
		Produce: "`make study NAME=seed-ngrinder`: the runner writes `before/` (mutex) and `after/` (inputQ-batch), the bank with every transfer synced to a " +
			"write-ahead log, then `go run ./cmd/seeds ngrinder -before … -after … -out " + Dir + "/ngrinder` compares the two folders. " +
			"Any two results folders of one group each can be compared the same way."},
}

// Lookup finds a seed by name.
func Lookup(name string) (Seed, bool) {
	for _, s := range Seeds {
		if s.Name == name {
			return s, true
		}
	}
	return Seed{}, false
}

// Names lists the seeds' names.
func Names() []string {
	out := make([]string, len(Seeds))
	for i, s := range Seeds {
		out[i] = s.Name
	}
	return out
}

// Placeholder ends a generated table whose folder has no DifferFile yet:
// the sentence on how our figures and the seed's differ, and why, is
// written by hand after reading the run.
const Placeholder = "**How the two differ, and why:** _(to be written after reading this run)_"

// DifferFile, in a seed's folder, holds that hand-written sentence; a rerun
// keeps it, since the page is generated and the file is not.
const DifferFile = "differ.md"

// Page is a seed's README: its title, what the seed was, the table, the
// seed's published figures, and how the two differ (differ, or the
// placeholder when it is empty).
func (s Seed) Page(meta record.Meta, table, published, differ string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", s.Title)
	fmt.Fprintf(&b, "The seed: %s.\n\n", s.Source)
	fmt.Fprintf(&b, "How this folder is made: %s\n\n", s.Produce)
	if meta.Command != "" {
		fmt.Fprintf(&b, "Command: `%s`", meta.Command)
		if meta.CPUs > 0 {
			fmt.Fprintf(&b, " on %d CPUs (%s)", meta.CPUs, cpuSplit(meta))
		}
		b.WriteString(".\n\n")
	}
	b.WriteString(table)
	b.WriteString("\n## The seed's published figures\n\n")
	b.WriteString("Measured on the seed's machine, from its published page (quoted as published, not measured here):\n\n")
	b.WriteString(published)
	if differ = strings.TrimSpace(differ); differ != "" {
		b.WriteString("\n**How the two differ, and why:** " + differ + "\n")
	} else {
		b.WriteString("\n" + Placeholder + "\n")
	}
	return b.String()
}

// Stub is a seed folder's README before its first run.
func (s Seed) Stub() string {
	return fmt.Sprintf("# %s\n\nThe seed: %s.\n\nNot run yet. How this folder is made: %s\n", s.Title, s.Source, s.Produce)
}

func cpuSplit(m record.Meta) string {
	if len(m.ServerCPUs) == 0 {
		return "server and driver unpinned"
	}
	return fmt.Sprintf("server on CPU %s, driver on CPU %s", plan.CPUList(m.ServerCPUs), plan.CPUList(m.DriverCPUs))
}
