package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/locklab/locklab/load"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
)

// metric is a figure the report takes from every run. Each is declared once,
// below, as a value: the report, the charts and -diff use these values, never
// their keys typed again, so a misspelt name cannot yield a silent zero.
type metric struct {
	Key    string // as in figures.json
	Label  string // as the report names it
	format func(float64) string
	get    func(*RunRecord) (float64, bool)
}

func always(f func(*RunRecord) float64) func(*RunRecord) (float64, bool) {
	return func(r *RunRecord) (float64, bool) { return f(r), true }
}

func positive(f func(*RunRecord) float64) func(*RunRecord) (float64, bool) {
	return func(r *RunRecord) (float64, bool) { v := f(r); return v, v > 0 }
}

func latencyMetric(name string, f func(load.LatencyMs) float64) metric {
	return metric{Key: "latency_ms." + name, Label: name + " latency", format: fmtMs,
		get: positive(func(r *RunRecord) float64 { return f(r.Result.LatencyMs) })}
}

func fmtUs(v float64) string    { return strconv.FormatFloat(v, 'f', 1, 64) + "µs" }
func fmtPct(v float64) string   { return strconv.FormatFloat(v*100, 'f', 0, 64) + "%" }
func fmtMiB(v float64) string   { return strconv.FormatFloat(v, 'f', 1, 64) + " MiB" }
func fmtRatio(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

var (
	mCallsPerSec = metric{Key: "calls_per_s", Label: "calls/s", format: fmtNum,
		get: always(func(r *RunRecord) float64 { return r.Derived.CallsPerSec })}
	mCalls = metric{Key: "calls", Label: "calls measured", format: fmtNum,
		get: always(func(r *RunRecord) float64 { return float64(r.Result.Calls) })}
	mP50        = latencyMetric("p50", func(l load.LatencyMs) float64 { return l.P50 })
	mP90        = latencyMetric("p90", func(l load.LatencyMs) float64 { return l.P90 })
	mP99        = latencyMetric("p99", func(l load.LatencyMs) float64 { return l.P99 })
	mP999       = latencyMetric("p999", func(l load.LatencyMs) float64 { return l.P999 })
	mMax        = latencyMetric("max", func(l load.LatencyMs) float64 { return l.Max })
	mUnexpected = metric{Key: "unexpected_errors", Label: "unexpected errors", format: fmtNum,
		get: always(func(r *RunRecord) float64 { return float64(r.Result.UnexpectedErrors) })}
	mRefusals = metric{Key: "expected_refusals", Label: "expected refusals", format: fmtNum,
		get: always(func(r *RunRecord) float64 { return float64(r.Result.ExpectedRefusals) })}
	mDropped = metric{Key: "dropped", Label: "dropped calls (open model)", format: fmtNum,
		get: func(r *RunRecord) (float64, bool) { return float64(r.Result.Dropped), r.Model == "open" }}
	mLate = metric{Key: "late", Label: "late calls (open model)", format: fmtNum,
		get: func(r *RunRecord) (float64, bool) { return float64(r.Result.Late), r.Model == "open" }}
	mServerCPUPerCall = metric{Key: "server_cpu_us_per_call", Label: "server CPU per call", format: fmtUs,
		get: positive(func(r *RunRecord) float64 { return r.Derived.ServerCPUPerCallUs })}
	mServerUtil = metric{Key: "server_util", Label: "server CPU use (of its CPUs)", format: fmtPct,
		get: always(func(r *RunRecord) float64 { return r.Derived.ServerUtil })}
	mDriverUtil = metric{Key: "driver_util", Label: "driver CPU use (of its CPUs)", format: fmtPct,
		get: always(func(r *RunRecord) float64 { return r.Derived.DriverUtil })}
	mMemMiB = metric{Key: "server_rss_mib", Label: "server memory (RSS)", format: fmtMiB,
		get: positive(func(r *RunRecord) float64 { return float64(stats(r).GetRssBytes()) / (1 << 20) })}
	mQueueHighWater = metric{Key: "queue_high_water", Label: "queue high-water", format: fmtNum,
		get: positive(func(r *RunRecord) float64 { return float64(stats(r).GetQueueHighWater()) })}
	mWALSyncsPerSec = metric{Key: "wal_syncs_per_s", Label: "WAL syncs/s", format: fmtNum,
		get: func(r *RunRecord) (float64, bool) {
			st := stats(r)
			if st.GetWalSyncs() == 0 || st.GetWindowSeconds() <= 0 {
				return 0, false
			}
			return float64(st.GetWalSyncs()) / st.GetWindowSeconds(), true
		}}
	// mWALRecordsPerSync is group commit made visible: 1 for a design that
	// syncs every command, more where one sync covers a batch.
	mWALRecordsPerSync = metric{Key: "wal_records_per_sync", Label: "WAL records per sync", format: fmtRatio,
		get: func(r *RunRecord) (float64, bool) {
			st := stats(r)
			if st.GetWalSyncs() == 0 {
				return 0, false
			}
			return float64(st.GetWalRecords()) / float64(st.GetWalSyncs()), true
		}}
	mSchedP50 = metric{Key: "sched_latency_p50_ns", Label: "scheduler latency p50", format: fmtNs,
		get: runtimeStat(func(s runtimeFigures) float64 { return s.SchedP50Ns })}
	mSchedP99 = metric{Key: "sched_latency_p99_ns", Label: "scheduler latency p99", format: fmtNs,
		get: runtimeStat(func(s runtimeFigures) float64 { return s.SchedP99Ns })}
	mMutexWait = metric{Key: "mutex_wait_us_per_call", Label: "mutex wait per call", format: fmtUs,
		get: func(r *RunRecord) (float64, bool) {
			s, ok := runtimeStatsOf(r)
			if !ok || r.Result.Calls == 0 {
				return 0, false
			}
			return s.MutexWaitSeconds / float64(r.Result.Calls) * 1e6, true
		}}
)

// baseMetrics are the figures every run may have, keyed as in figures.json.
func baseMetrics() []metric {
	return []metric{mCallsPerSec, mCalls, mP50, mP90, mP99, mP999, mMax, mUnexpected, mRefusals, mDropped, mLate,
		mServerCPUPerCall, mServerUtil, mDriverUtil, mMemMiB, mQueueHighWater, mWALSyncsPerSec, mWALRecordsPerSync, mSchedP50, mSchedP99, mMutexWait}
}

// stats decodes a run's server stats; fields from a newer server are
// skipped, and a record that cannot be decoded gives an empty answer.
func stats(r *RunRecord) *locklabv1.GetStatsResponse {
	var st locklabv1.GetStatsResponse
	_ = protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(r.Stats, &st)
	return &st
}

// runtimeFigures are GetStats' figures from the Go runtime's own metrics
// (/sched/latencies:seconds, /sync/mutex/wait/total:seconds).
type runtimeFigures struct{ SchedP50Ns, SchedP99Ns, MutexWaitSeconds float64 }

// runtimeStatsOf reads them by their JSON names, so that records of servers
// without them simply lack them. protojson leaves out zeros, so a server
// that has the fields is known by any of them, its count included.
func runtimeStatsOf(r *RunRecord) (runtimeFigures, bool) {
	var m map[string]any
	if json.Unmarshal(r.Stats, &m) != nil {
		return runtimeFigures{}, false
	}
	found := false
	num := func(key string) float64 {
		v, ok := m[key]
		found = found || ok
		switch x := v.(type) {
		case float64:
			return x
		case string: // 64-bit integers are strings in protojson
			f, _ := strconv.ParseFloat(x, 64)
			return f
		}
		return 0
	}
	f := runtimeFigures{num("schedLatencyP50Ns"), num("schedLatencyP99Ns"), num("mutexWaitSeconds")}
	num("schedLatencyCount")
	return f, found
}

func runtimeStat(f func(runtimeFigures) float64) func(*RunRecord) (float64, bool) {
	return func(r *RunRecord) (float64, bool) {
		s, ok := runtimeStatsOf(r)
		return f(s), ok
	}
}

// The store-latency figures of one op, as the report and the charts ask for
// them.
const (
	storeCount = "count"
	storeP50   = "p50_ns"
	storeP99   = "p99_ns"
	storeP999  = "p999_ns"
	storeMax   = "max_ns"
)

// storeQuantiles are the store-latency figures per op.
var storeQuantiles = []struct {
	Name string
	get  func(*locklabv1.StoreLatency) float64
}{
	{storeCount, func(l *locklabv1.StoreLatency) float64 { return float64(l.GetCount()) }},
	{storeP50, (*locklabv1.StoreLatency).GetP50Ns},
	{storeP99, (*locklabv1.StoreLatency).GetP99Ns},
	{storeP999, (*locklabv1.StoreLatency).GetP999Ns},
	{storeMax, (*locklabv1.StoreLatency).GetMaxNs},
}

// storeMetric is the store-latency figure q of one workload.op, keyed
// store.<workload>.<op>.<q>.
func storeMetric(op, q string) metric {
	for _, sq := range storeQuantiles {
		if sq.Name != q {
			continue
		}
		return metric{Key: "store." + op + "." + q, Label: "store latency " + op + " " + q, format: fmtNs,
			get: func(r *RunRecord) (float64, bool) {
				for _, l := range stats(r).GetStoreLatency() {
					if l.GetWorkload()+"."+l.GetOp() == op && l.GetCount() > 0 {
						return sq.get(l), true
					}
				}
				return 0, false
			}}
	}
	panic("storeMetric: no quantile " + q)
}

// storeOpsOf lists the workload.op pairs with store latency in any run.
func storeOpsOf(runs []*RunRecord) []string {
	var ops []string
	for _, r := range runs {
		for _, l := range stats(r).GetStoreLatency() {
			if k := l.GetWorkload() + "." + l.GetOp(); l.GetCount() > 0 && !slices.Contains(ops, k) {
				ops = append(ops, k)
			}
		}
	}
	slices.Sort(ops)
	return ops
}

// storeLatencyMetrics are the store-latency figures of the ops these runs used.
func storeLatencyMetrics(runs []*RunRecord) []metric {
	var ms []metric
	for _, op := range storeOpsOf(runs) {
		for _, q := range storeQuantiles {
			ms = append(ms, storeMetric(op, q.Name))
		}
	}
	return ms
}

// Section is one workload driven by one driver under one combination of
// factors: the report's unit, whose levels and modes it compares.
type Section struct {
	Workload string  `json:"workload"`
	Driver   string  `json:"driver"`
	Factors  Factors `json:"factors"`
}

func (s Section) String() string {
	return fmt.Sprintf("%s · %s driver · %s", s.Workload, s.Driver, s.Factors)
}

// Group is every repetition of one section × level × mode, and its figures.
type Group struct {
	Section
	Level       int             `json:"level"`
	Mode        string          `json:"mode"`
	StoreBacked bool            `json:"store_backed"`
	Runs        []string        `json:"runs"`
	Classes     map[Class]int   `json:"classes"`
	Failed      int             `json:"failed_runs"`
	Figures     map[string]Stat `json:"figures"`

	records []*RunRecord
}

func (g *Group) fig(m metric) Stat { return g.Figures[m.Key] }

// groupKey identifies a group: every factor is part of it.
func groupKey(s Section, level int, mode string) string {
	return fmt.Sprintf("%s|%s|%s|%d|%s", s.Workload, s.Driver, s.Factors.Key(), level, mode)
}

// aggregate groups the records and computes every figure from them.
func aggregate(records []*RunRecord) []*Group {
	index := map[string]*Group{}
	var groups []*Group
	for _, r := range records {
		sec := Section{Workload: r.Workload, Driver: r.Driver, Factors: r.Factors}
		k := groupKey(sec, r.Level, r.Mode)
		g := index[k]
		if g == nil {
			g = &Group{Section: sec, Level: r.Level, Mode: r.Mode, StoreBacked: stats(r).GetStoreBacked(), Classes: map[Class]int{}}
			index[k] = g
			groups = append(groups, g)
		}
		g.records = append(g.records, r)
		g.Runs = append(g.Runs, r.ID)
		g.Classes[r.Derived.Class]++
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
		return cmp.Or(cmp.Compare(a.Workload, b.Workload), cmp.Compare(a.Driver, b.Driver),
			cmp.Compare(a.Factors.Key(), b.Factors.Key()), cmp.Compare(a.Level, b.Level))
	})
	return groups
}
