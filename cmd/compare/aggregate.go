package main

import (
	"cmp"
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protojson"

	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
)

// Stat is one figure over a group's repetitions.
type Stat struct {
	Median float64  `json:"median"`
	Min    float64  `json:"min"`
	Max    float64  `json:"max"`
	N      int      `json:"n"`
	Runs   []string `json:"runs"` // the run ids it was computed from
}

func statOf(runs []*RunRecord, get func(*RunRecord) (float64, bool)) Stat {
	var vals []float64
	var ids []string
	for _, r := range runs {
		if v, ok := get(r); ok {
			vals = append(vals, v)
			ids = append(ids, r.ID)
		}
	}
	if len(vals) == 0 {
		return Stat{}
	}
	slices.Sort(vals)
	n := len(vals)
	med := vals[n/2]
	if n%2 == 0 {
		med = (vals[n/2-1] + vals[n/2]) / 2
	}
	return Stat{Median: med, Min: vals[0], Max: vals[n-1], N: n, Runs: ids}
}

// metric is a figure the report takes from every run.
type metric struct {
	Key string
	get func(*RunRecord) (float64, bool)
}

func always(f func(*RunRecord) float64) func(*RunRecord) (float64, bool) {
	return func(r *RunRecord) (float64, bool) { return f(r), true }
}

func trendMetrics(prefix string, t func(*RunRecord) Trend) []metric {
	return []metric{
		{prefix + ".avg", always(func(r *RunRecord) float64 { return t(r).Avg })},
		{prefix + ".min", always(func(r *RunRecord) float64 { return t(r).Min })},
		{prefix + ".med", always(func(r *RunRecord) float64 { return t(r).Med })},
		{prefix + ".max", always(func(r *RunRecord) float64 { return t(r).Max })},
		{prefix + ".p90", always(func(r *RunRecord) float64 { return t(r).P90 })},
		{prefix + ".p95", always(func(r *RunRecord) float64 { return t(r).P95 })},
		{prefix + ".p99", always(func(r *RunRecord) float64 { return t(r).P99 })},
	}
}

// baseMetrics are the figures every run has, keyed as in figures.json.
func baseMetrics() []metric {
	ms := []metric{
		{"requests_per_sec", always(func(r *RunRecord) float64 { return r.Derived.RequestsPerSec })},
		{"iterations.count", always(func(r *RunRecord) float64 { return r.Summary.Iterations.Count })},
		{"iterations.rate", always(func(r *RunRecord) float64 { return r.Summary.Iterations.Rate })},
		{"data_received.bytes", always(func(r *RunRecord) float64 { return r.Summary.DataReceived.Bytes })},
		{"data_received.rate", always(func(r *RunRecord) float64 { return r.Summary.DataReceived.Rate })},
		{"data_sent.bytes", always(func(r *RunRecord) float64 { return r.Summary.DataSent.Bytes })},
		{"data_sent.rate", always(func(r *RunRecord) float64 { return r.Summary.DataSent.Rate })},
		{"unexpected_errors", always(func(r *RunRecord) float64 { return r.Summary.UnexpectedErrors })},
		{"expected_refusals", always(func(r *RunRecord) float64 { return r.Summary.ExpectedRefusals })},
		{"checks.fails", always(func(r *RunRecord) float64 { return r.Summary.Checks.Fails })},
		{"dropped_iterations", always(func(r *RunRecord) float64 { return r.Summary.DroppedIterations })},
		{"k6_cores", always(func(r *RunRecord) float64 { return r.K6.Cores })},
		{"server_cores", always(func(r *RunRecord) float64 { return r.Derived.ServerCores })},
		{"server_cpu_us_per_request", func(r *RunRecord) (float64, bool) {
			return r.Derived.ServerCPUPerReqU, r.Derived.ServerCPUPerReqU > 0
		}},
		{"queue_high_water", func(r *RunRecord) (float64, bool) {
			st := stats(r)
			return float64(st.GetQueueHighWater()), st.GetQueueHighWater() > 0
		}},
	}
	ms = append(ms, trendMetrics("grpc_req_duration_ms", func(r *RunRecord) Trend { return r.Summary.GRPCReqDuration.All })...)
	ms = append(ms, trendMetrics("iteration_duration_ms", func(r *RunRecord) Trend { return r.Summary.IterationDuration })...)
	return ms
}

// stats decodes a run's server stats; a record that cannot be decoded was not
// written by this runner, so an empty answer is fine.
func stats(r *RunRecord) *locklabv1.GetStatsResponse {
	var st locklabv1.GetStatsResponse
	_ = protojson.Unmarshal(r.Stats, &st)
	return &st
}

// storeLatencyMetrics are the server's store-side latency figures of the ops
// this group's runs used, keyed store.<workload>.<op>.<quantile>_ns.
func storeLatencyMetrics(runs []*RunRecord) []metric {
	var keys []string
	seen := map[string]bool{}
	for _, r := range runs {
		for _, l := range stats(r).GetStoreLatency() {
			k := l.GetWorkload() + "." + l.GetOp()
			if l.GetCount() > 0 && !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	var ms []metric
	for _, k := range keys {
		find := func(r *RunRecord) *locklabv1.StoreLatency {
			for _, l := range stats(r).GetStoreLatency() {
				if l.GetWorkload()+"."+l.GetOp() == k && l.GetCount() > 0 {
					return l
				}
			}
			return nil
		}
		q := func(name string, f func(*locklabv1.StoreLatency) float64) metric {
			return metric{"store." + k + "." + name, func(r *RunRecord) (float64, bool) {
				if l := find(r); l != nil {
					return f(l), true
				}
				return 0, false
			}}
		}
		ms = append(ms,
			q("count", func(l *locklabv1.StoreLatency) float64 { return float64(l.GetCount()) }),
			q("p50_ns", (*locklabv1.StoreLatency).GetP50Ns),
			q("p99_ns", (*locklabv1.StoreLatency).GetP99Ns),
			q("p999_ns", (*locklabv1.StoreLatency).GetP999Ns),
			q("max_ns", (*locklabv1.StoreLatency).GetMaxNs),
		)
	}
	return ms
}

// Group is every repetition of one workload × level × mode, and its figures.
type Group struct {
	Workload    string          `json:"workload"`
	Level       int             `json:"level"`
	Mode        string          `json:"mode"`
	StoreBacked bool            `json:"store_backed"`
	Runs        []string        `json:"runs"`
	Saturated   int             `json:"k6_saturated_runs"`
	Failed      int             `json:"failed_runs"`
	Figures     map[string]Stat `json:"figures"`

	records []*RunRecord
}

func (g *Group) fig(key string) Stat { return g.Figures[key] }

// aggregate groups the records and computes every figure from them.
func aggregate(records []*RunRecord) []*Group {
	index := map[string]*Group{}
	var groups []*Group
	for _, r := range records {
		k := fmt.Sprintf("%s|%d|%s", r.Workload, r.Level, r.Mode)
		g := index[k]
		if g == nil {
			g = &Group{Workload: r.Workload, Level: r.Level, Mode: r.Mode, StoreBacked: stats(r).GetStoreBacked()}
			index[k] = g
			groups = append(groups, g)
		}
		g.records = append(g.records, r)
		g.Runs = append(g.Runs, r.ID)
		if r.Derived.K6Saturated {
			g.Saturated++
		}
		if r.Failed() {
			g.Failed++
		}
	}
	for _, g := range groups {
		g.Figures = map[string]Stat{}
		for _, m := range append(baseMetrics(), storeLatencyMetrics(g.records)...) {
			if s := statOf(g.records, m.get); s.N > 0 {
				g.Figures[m.Key] = s
			}
		}
	}
	slices.SortStableFunc(groups, func(a, b *Group) int {
		return cmp.Or(cmp.Compare(a.Workload, b.Workload), cmp.Compare(a.Level, b.Level))
	})
	return groups
}
