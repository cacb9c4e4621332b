package report

import (
	"fmt"
	"strconv"

	"github.com/locklab/locklab/internal/lab/record"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
)

// A Metric is a figure the report takes from every run, declared once in
// Catalogue: the level tables, the charts, -diff and figures.json range over
// the catalogue, never over names typed again.
type Metric struct {
	Key    string // in figures.json; a family's has %s where the op goes
	Label  string // as the report names it; a family's has %s where the op goes
	Unit   Unit   // what the figure counts, and so how it prints
	Better Better // which way is better, for verdicts and readers

	// Read takes the figure from a run. An error means the record lacks what
	// the metric is declared to read: the report fails, it does not print "—".
	Read func(r *record.Run) (float64, error)
	// Applies declares the runs the figure exists for (an open-model count,
	// a write-ahead log's syncs); nil: every run. A metric with no
	// condition that no run of a group has is an error.
	Applies func(r *record.Run) bool
	// SkipZero declares that a zero means the run has no such figure (no
	// calls to time, no queue to fill), not a measured zero.
	SkipZero bool
	// PerOp makes the metric a family, one figure per workload.op the
	// server timed in the store: Key and Label take the op.
	PerOp func(l *locklabv1.StoreLatency) float64

	Block Block // the row's place in a level's table; NotInTable: figures.json only
	Worst bool  // the row shows the worst run (the largest), not the median
	// HideEmpty leaves the row out of a level's table where no group has
	// the figure (the open model's counts in a closed one).
	HideEmpty bool
	// Chart is the title of the metric's chart against the load level, after
	// "<workload> · <driver>: "; "" draws none. ChartY labels its y axis
	// ("" the Label) and ChartScale converts to the chart's unit (0: 1).
	Chart      string
	ChartY     string
	ChartScale float64
	// Diff is the column -diff compares the metric under; "" not compared.
	Diff string
	// Compare makes the metric one of the few every pair of designs is
	// compared on, in every group, with a paired test (Compared): fixed in
	// advance, so that no run's class can switch what a verdict judges.
	Compare bool
	// Primary makes a compared metric one of the confirmatory family:
	// every design against the baseline on it, in every group, tested
	// together (Holm) and judged against the equivalence margin. The other
	// compared metrics, and every comparison with noop, are estimates.
	Primary bool

	op string // a family member's op
}

// Unit is what a figure counts; it decides how the figure prints.
type Unit string

const (
	UnitCount Unit = "count"
	UnitRate  Unit = "calls/s"
	UnitMs    Unit = "ms"
	UnitUs    Unit = "µs"
	UnitNs    Unit = "ns"
	UnitShare Unit = "share" // of a process's CPUs, printed as a percentage
	UnitMiB   Unit = "MiB"
	UnitRatio Unit = "ratio"
	// UnitPerCall is a count per call, such as system calls.
	UnitPerCall Unit = "per call"
	// UnitPercent is a signed change, already in percent.
	UnitPercent Unit = "%"
)

// Format prints a value of the unit.
func (u Unit) Format(v float64) string {
	switch u {
	case UnitMs:
		return fmtMs(v)
	case UnitUs:
		return fmtMs(v / 1e3)
	case UnitNs:
		return fmtMs(v / 1e6)
	case UnitShare:
		return strconv.FormatFloat(v*100, 'f', 0, 64) + "%"
	case UnitMiB:
		return strconv.FormatFloat(v, 'f', 1, 64) + " MiB"
	case UnitRatio:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case UnitPerCall:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case UnitPercent:
		return strconv.FormatFloat(v, 'f', 1, 64) + "%"
	}
	return fmtNum(v)
}

// Better is which way a figure improves.
type Better int

const (
	Neither Better = iota // a count to read, not to rank by
	Higher
	Lower
)

// Block is where in a level's table a metric's row goes; each block is
// followed by rows that are not one metric's (the test against the best
// design, the store latency, the invariants).
type Block int

const (
	NotInTable  Block = iota
	BlockResult       // what the driver saw: throughput and latency
	BlockVolume       // how many calls, and how they ended
	BlockCPU          // both processes' CPU and the server's memory
	BlockServer       // the server's own measurements
)

// blocks are the table's blocks in order.
var blocks = []Block{BlockResult, BlockVolume, BlockCPU, BlockServer}

// Catalogue is every metric, in the order of the charts.
var Catalogue = append([]*Metric{
	mCallsPerSec,
	latency("p50", func(l latencyMs) float64 { return l.P50 }, BlockResult),
	latency("p90", func(l latencyMs) float64 { return l.P90 }, NotInTable),
	mP99,
	latency("p999", func(l latencyMs) float64 { return l.P999 }, BlockResult),
	latency("max", func(l latencyMs) float64 { return l.Max }, BlockResult),
	{Key: "calls", Label: "calls measured", Unit: UnitCount, Block: BlockVolume,
		Read: result(func(r *record.Run) float64 { return float64(r.Result.Calls) })},
	{Key: "unexpected_errors", Label: "unexpected errors", Unit: UnitCount, Better: Lower, Block: BlockVolume, Worst: true,
		Read: result(func(r *record.Run) float64 { return float64(r.Result.UnexpectedErrors) })},
	{Key: "expected_refusals", Label: "expected refusals", Unit: UnitCount, Block: BlockVolume,
		Read: result(func(r *record.Run) float64 { return float64(r.Result.ExpectedRefusals) })},
	{Key: "dropped", Label: "dropped calls (open model)", Unit: UnitCount, Better: Lower, Block: BlockVolume, HideEmpty: true,
		Applies: openModel, Read: result(func(r *record.Run) float64 { return float64(r.Result.Dropped) })},
	{Key: "late", Label: "late calls (open model)", Unit: UnitCount, Better: Lower, Block: BlockVolume, HideEmpty: true,
		Applies: openModel, Read: result(func(r *record.Run) float64 { return float64(r.Result.Late) })},
	mServerCPUPerCall,
	{Key: "server_util", Label: "server CPU use (of its CPUs)", Unit: UnitShare, Block: BlockCPU,
		Read: func(r *record.Run) (float64, error) { return r.Derived.ServerUtil, nil }},
	{Key: "driver_util", Label: "driver CPU use (of its CPUs)", Unit: UnitShare, Block: BlockCPU,
		Read: func(r *record.Run) (float64, error) { return r.Derived.DriverUtil, nil }},
	// The CPU sets as the kernel counts them, beside the processes' own:
	// interrupts, softirq and other processes show as the set's busy share
	// above its process's, and steal as time neither process saw.
	{Key: "server_set_busy", Label: "server's CPUs busy (anything, /proc/stat)", Unit: UnitShare, Block: BlockCPU, HideEmpty: true,
		Applies: func(r *record.Run) bool { return r.ServerSet.Sampled() },
		Read:    func(r *record.Run) (float64, error) { return r.Derived.ServerSetBusy, nil }},
	{Key: "driver_set_busy", Label: "driver's CPUs busy (anything, /proc/stat)", Unit: UnitShare, Block: BlockCPU, HideEmpty: true,
		Applies: func(r *record.Run) bool { return r.DriverSet.Sampled() },
		Read:    func(r *record.Run) (float64, error) { return r.Derived.DriverSetBusy, nil }},
	{Key: "steal", Label: "steal (of the run's CPUs)", Unit: UnitShare, Better: Lower, Block: BlockCPU, Worst: true, HideEmpty: true,
		Applies: func(r *record.Run) bool { return r.ServerSet.Sampled() || r.DriverSet.Sampled() },
		Read:    func(r *record.Run) (float64, error) { return r.Derived.Steal, nil }},
	{Key: "foreign", Label: "foreign CPU (of the run's CPUs; the gate's figure)", Unit: UnitShare, Better: Lower, Block: BlockCPU, Worst: true, HideEmpty: true,
		Applies: func(r *record.Run) bool { return r.ServerSet.Sampled() || r.DriverSet.Sampled() },
		Read:    func(r *record.Run) (float64, error) { return r.Derived.Foreign, nil }},
	{Key: "server_rss_mib", Label: "server memory (RSS)", Unit: UnitMiB, Better: Lower, Block: BlockCPU, SkipZero: true,
		Read: stat(func(st *stats) float64 { return float64(st.GetRssBytes()) / (1 << 20) })},
	// The store latency per op: the families' rows are one row per op in
	// the level table (storeRow), after the CPU block.
	{Key: "store.%s.count", Label: "store latency %s count", Unit: UnitCount,
		PerOp: func(l *locklabv1.StoreLatency) float64 { return float64(l.GetCount()) }},
	{Key: "store.%s.p50_ns", Label: "store latency %s p50_ns", Unit: UnitNs, Better: Lower, PerOp: (*locklabv1.StoreLatency).GetP50Ns},
	{Key: "store.%s.p99_ns", Label: "store latency %s p99_ns", Unit: UnitNs, Better: Lower, PerOp: (*locklabv1.StoreLatency).GetP99Ns,
		Chart: "store latency p99, %s (µs)", ChartY: "store latency %s (µs)", ChartScale: 1e-3},
	{Key: "store.%s.p999_ns", Label: "store latency %s p999_ns", Unit: UnitNs, Better: Lower, PerOp: (*locklabv1.StoreLatency).GetP999Ns},
	{Key: "store.%s.max_ns", Label: "store latency %s max_ns", Unit: UnitNs, Better: Lower, PerOp: (*locklabv1.StoreLatency).GetMaxNs},
	{Key: "wal_syncs_per_s", Label: "WAL syncs/s", Unit: UnitRate, Block: BlockServer, HideEmpty: true,
		Applies: walRun, Read: stat(func(st *stats) float64 { return float64(st.GetWalSyncs()) / st.GetWindowSeconds() })},
	// Group commit made visible: 1 for a design that syncs every command,
	// more where one sync covers a batch.
	{Key: "wal_records_per_sync", Label: "WAL records per sync", Unit: UnitRatio, Better: Higher, Block: BlockServer, HideEmpty: true,
		Applies: walRun, Read: stat(func(st *stats) float64 { return float64(st.GetWalRecords()) / float64(st.GetWalSyncs()) })},
	{Key: "sched_latency_p50_ns", Label: "scheduler latency p50", Unit: UnitNs, Better: Lower, Block: BlockServer,
		Read: stat((*stats).GetSchedLatencyP50Ns)},
	{Key: "sched_latency_p99_ns", Label: "scheduler latency p99", Unit: UnitNs, Better: Lower, Block: BlockServer,
		Read: stat((*stats).GetSchedLatencyP99Ns), Chart: "scheduler latency p99 (µs)", ChartY: "scheduler latency p99 (µs)", ChartScale: 1e-3},
	{Key: "mutex_wait_us_per_call", Label: "mutex wait per call", Unit: UnitUs, Better: Lower, Block: BlockServer,
		Applies: func(r *record.Run) bool { return r.Result.Calls > 0 },
		Read: stat2(func(r *record.Run, st *stats) float64 {
			return st.GetMutexWaitSeconds() / float64(r.Result.Calls) * 1e6
		})},
	// A lock design has no queue: its server reports 0.
	{Key: "queue_high_water", Label: "queue high-water", Unit: UnitCount, Block: BlockServer, SkipZero: true,
		Read: stat(func(st *stats) float64 { return float64(st.GetQueueHighWater()) })},
	// The serial resource and its demand per call (serial.go; the cores section, package cores, reads them).
	mSerialDemand, mSerialUtil, mSerialResources,
}, whyMetrics()...) // CPU attribution (attribution.go; the Why section, package why, reads them)

// The metrics the report's own logic names: the overview, the list of runs
// and -diff's reproducibility. What the verdicts compare is the Compare
// flag's, not these names'.
var (
	mCallsPerSec = &Metric{Key: "calls_per_s", Label: "calls/s", Unit: UnitRate, Better: Higher, Block: BlockResult,
		Read: func(r *record.Run) (float64, error) { return r.Derived.CallsPerSec, nil }, Chart: "throughput", Diff: "calls/s", Compare: true, Primary: true}
	mP99 = &Metric{Key: "latency_ms.p99", Label: "p99 latency", Unit: UnitMs, Better: Lower, Block: BlockResult, SkipZero: true,
		Read: result(func(r *record.Run) float64 { return r.Result.LatencyMs.P99 }), Chart: "p99 latency", Diff: "p99", Compare: true}
	mServerCPUPerCall = &Metric{Key: "server_cpu_us_per_call", Label: "server CPU per call", Unit: UnitUs, Better: Lower,
		Block: BlockCPU, SkipZero: true, Chart: "server CPU per call (µs)", Compare: true, Primary: true,
		Read: func(r *record.Run) (float64, error) { return r.Derived.ServerCPUPerCallUs, nil }}
)

type (
	stats     = locklabv1.GetStatsResponse
	latencyMs = struct{ P50, P90, P99, P999, Max float64 }
)

// latency is a latency percentile of the driver's summary.
func latency(name string, f func(latencyMs) float64, b Block) *Metric {
	return &Metric{Key: "latency_ms." + name, Label: name + " latency", Unit: UnitMs, Better: Lower, Block: b, SkipZero: true,
		Read: result(func(r *record.Run) float64 {
			l := r.Result.LatencyMs
			return f(latencyMs{l.P50, l.P90, l.P99, l.P999, l.Max})
		})}
}

func result(f func(*record.Run) float64) func(*record.Run) (float64, error) {
	return func(r *record.Run) (float64, error) {
		if r.Result == nil {
			return 0, fmt.Errorf("run %s: no driver result", r.ID)
		}
		return f(r), nil
	}
}

func stat(f func(*stats) float64) func(*record.Run) (float64, error) {
	return stat2(func(_ *record.Run, st *stats) float64 { return f(st) })
}

func stat2(f func(*record.Run, *stats) float64) func(*record.Run) (float64, error) {
	return func(r *record.Run) (float64, error) {
		st, err := r.ServerStats()
		if err != nil {
			return 0, err
		}
		return f(r, st), nil
	}
}

func openModel(r *record.Run) bool { return r.Model == "open" }

// walRun: the server kept a write-ahead log and synced it.
func walRun(r *record.Run) bool {
	st, err := r.ServerStats()
	return err == nil && st.GetWalSyncs() > 0 && st.GetWindowSeconds() > 0
}

// conditional reports whether a run may lack the figure by declaration.
func (m *Metric) conditional() bool { return m.Applies != nil || m.SkipZero || m.PerOp != nil }

// forOp is a family's member for one op.
func (m *Metric) forOp(op string) *Metric {
	c := *m
	c.Key, c.Label, c.op = fmt.Sprintf(m.Key, op), fmt.Sprintf(m.Label, op), op
	if c.Chart != "" {
		c.Chart, c.ChartY = fmt.Sprintf(m.Chart, op), fmt.Sprintf(m.ChartY, op)
	}
	return &c
}

// value is the metric's figure of one run; ok false when the run has none
// by declaration.
func (m *Metric) value(r *record.Run) (v float64, ok bool, err error) {
	if m.PerOp != nil {
		st, err := r.ServerStats()
		if err != nil {
			return 0, false, err
		}
		for _, l := range st.GetStoreLatency() {
			if l.GetWorkload()+"."+l.GetOp() == m.op && l.GetCount() > 0 {
				return m.PerOp(l), true, nil
			}
		}
		return 0, false, nil
	}
	if m.Applies != nil && !m.Applies(r) {
		return 0, false, nil
	}
	v, err = m.Read(r)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", m.Label, err)
	}
	return v, !(m.SkipZero && v == 0), nil
}

// expand is the catalogue with every family expanded over ops, in the
// catalogue's order.
func expand(ops []string) []*Metric {
	var out []*Metric
	for _, m := range Catalogue {
		if m.PerOp == nil {
			out = append(out, m)
			continue
		}
		for _, op := range ops {
			out = append(out, m.forOp(op))
		}
	}
	return out
}

// family finds the catalogue's family whose key is key ("store.%s.p50_ns").
func family(key string) *Metric {
	for _, m := range Catalogue {
		if m.PerOp != nil && m.Key == key {
			return m
		}
	}
	panic("report: no metric family " + key)
}
