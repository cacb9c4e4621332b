package seeds

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/run"
	"github.com/locklab/locklab/load"
)

// RPCXLevels are the page's concurrent clients.
var RPCXLevels = []int{100, 1000, 2000, 5000}

// RPCXRequests are the page's requests per level; DefaultRPCXRequests is
// what `make study NAME=seed-rpcx` sends: 8 runs of 20,000 calls at a few thousand
// calls/s on one CPU take well under a minute.
const (
	RPCXRequests        = 1_000_000
	DefaultRPCXRequests = 20_000
)

// RPCXPlan is the rpcx seed's runs: a Put of the kv workload's value (its
// size is the page's message's) at each level, the modes alternating.
func RPCXPlan(modes []string, requests int) []run.Counted {
	var out []run.Counted
	for _, level := range RPCXLevels {
		for _, m := range modes {
			out = append(out, run.Counted{Spec: plan.Spec{Index: len(out) + 1, ID: fmt.Sprintf("rpcx-c%d-n%d-%s", level, requests, m),
				Workload: "kv", Driver: "ghz", Mode: m, Model: "closed", Level: level, Rep: 1}, Case: "put", Total: requests})
		}
	}
	return out
}

// RPCX renders the page's table: concurrent clients as rows, and per mode
// mean, median, max, min, p99 (ms) and TPS.
func RPCX(meta record.Meta, runs []*record.Run) (string, error) {
	if len(runs) == 0 {
		return "", errors.New("seeds: rpcx: no runs in the folder")
	}
	modes := modesOf(runs, "mutex", "inputQ")
	head := []string{"concurrent clients"}
	for _, m := range modes {
		head = append(head, m+" mean (ms)", "median (ms)", "max (ms)", "min (ms)", "p99 (ms)", "TPS")
	}
	var levels []int
	requests := map[int64]bool{}
	for _, r := range runs {
		if !slices.Contains(levels, r.Level) {
			levels = append(levels, r.Level)
		}
		if r.Result != nil {
			requests[r.Result.Calls] = true
		}
	}
	slices.Sort(levels)
	var rows [][]string
	for _, level := range levels {
		cells := []string{count(float64(level))}
		for _, m := range modes {
			r := medianRun(slices.DeleteFunc(slices.Clone(runs), func(r *record.Run) bool { return r.Mode != m || r.Level != level }))
			if r == nil {
				cells = append(cells, "—", "—", "—", "—", "—", "—")
				continue
			}
			l := r.Result.LatencyMs
			cells = append(cells, msCell(l.Mean), msCell(l.P50), msCell(l.Max), msCell(l.Min), msCell(l.P99), mark(r, count(r.Derived.CallsPerSec)))
		}
		rows = append(rows, cells)
	}
	var n []string
	for c := range requests {
		n = append(n, count(float64(c)))
	}
	slices.Sort(n)
	var b strings.Builder
	b.WriteString("## Our runs\n\n")
	fmt.Fprintf(&b, "ghz putting a %s-byte value (the kv workload's value size, the page's message size) under one of the workload's shared keys: "+
		"%s requests per row (the page sent 1,000,000), ghz's workers spread over %d connections, after a %s warm-up; "+
		"server and client on one machine, as in the page's first table.\n\n", strconv.Itoa(load.Workloads().KV.Defaults.ValueSize), strings.Join(n, ", "), meta.Conns, meta.Warmup)
	b.WriteString(table(head, rows))
	b.WriteString("\n" + saturation(runs, modes))
	return b.String(), nil
}

// RPCXPublished is the page's same-machine tables, gRPC's and rpcx's.
func RPCXPublished() string {
	head := []string{"concurrent clients", "mean (ms)", "median (ms)", "max (ms)", "min (ms)", "TPS"}
	rows := func(src [][6]string) [][]string {
		out := make([][]string, len(src))
		for i, r := range src {
			out[i] = r[:]
		}
		return out
	}
	return "gRPC, one server and one client on the same machine (24 cores, 16 GB, Go 1.7), 1,000,000 requests per row:\n\n" +
		table(head, rows(rpcxPublished)) +
		"\nrpcx itself, on the same machine:\n\n" + table(head, rows(rpcxPublishedRPCX))
}
