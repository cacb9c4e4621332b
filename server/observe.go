package server

import (
	"math"
	"net/http"
	"net/http/pprof"
	"regexp"
	"strconv"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The series /metrics serves that locklab's own code or configuration
// names (docs/operations.md lists them with their meaning). Tests and docs
// take the names from here.
const (
	// From go-grpc-middleware's Prometheus provider.
	MetricGRPCHandled      = "grpc_server_handled_total"
	MetricGRPCHandlingTime = "grpc_server_handling_seconds"
	// The store time of data RPCs' commands, the same histograms GetStats
	// reads its window from (storeSecondsName).
	MetricStoreSeconds = storeSecondsName
	// Owner designs only: the largest queue length of the current GetStats
	// window (AdminService/Reset starts a new one) and the commands waiting
	// now, over all the mode's stores.
	MetricQueueHighWater = "locklab_queue_high_water"
	MetricQueueDepth     = "locklab_queue_depth"
	// Store-backed modes: each serial resource's busy time since the start
	// (store.SerialStats), labelled by workload and resource (shard i;
	// inputQ-batch over a WAL: 0 its owner, 1 its syncer). Lock holds are
	// sampled and scaled: see GetStats' sample_every.
	MetricSerialBusy = "locklab_store_serial_busy_seconds_total"
	// Store-backed modes with a serial resource: the store's own clocks
	// (store.SerialStats), labelled by workload. The wait is how long a
	// command waited before the serial resource took it — the lock wait
	// of a lock design, the mailbox age of an owner design — timed one
	// command in sample_every, a histogram with a bucket to each power of
	// two nanoseconds. Owner designs and combining: the batches the
	// resource took and the commands in them (their ratio: the mean
	// batch).
	MetricWait          = "locklab_store_wait_seconds"
	MetricBatches       = "locklab_store_batches_total"
	MetricBatchCommands = "locklab_store_batch_commands_total"
	// The runtime's /sched/latencies:seconds and
	// /sync/mutex/wait/total:seconds, through the Go collector.
	MetricSchedLatencies = "go_sched_latencies_seconds"
	MetricMutexWait      = "go_sync_mutex_wait_total_seconds_total"
)

// NewMetricsRegistry returns a registry holding the process-wide collectors:
// the Go collector, with the runtime's scheduling-latency histogram and
// mutex wait besides its defaults, and the process collector. Pass it as
// Config.Metrics to add the server's own, and serve it with MetricsHandler.
// It is not the global registry: a process may hold several servers (tests
// do), each with its own.
func NewMetricsRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
			collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile("^(" + regexp.QuoteMeta(rtSchedLatencies) + "|" + regexp.QuoteMeta(rtMutexWait) + ")$")},
		)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return reg
}

// MetricsHandler serves g on /metrics and the runtime profiles of
// net/http/pprof under /debug/pprof/, on a mux of its own (not
// http.DefaultServeMux, where importing net/http/pprof registers them).
func MetricsHandler(g prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/debug/pprof/", pprof.Index) // also serves heap, goroutine, block, mutex, allocs...
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// grpcMetrics are the gRPC server metrics of go-grpc-middleware's provider:
// started and handled totals by method and code, and handling time.
//
// Its interceptor runs on every RPC, so what it costs matters: per call it
// looks up five label sets (started, received, sent, handled, handling
// time), each in its Vec's map under a read lock, an atomic add on a shared
// word that never waits, because InitializeMetrics
// creates every method × code label set before the first call (a writer
// would only come for a label set not created). That is the cost class of the
// server's own atomic counters, outside any design's critical section; and
// it is only there when -metrics-addr is given.
func grpcMetrics() *grpcprom.ServerMetrics {
	return grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(
		// 50 µs to ~13 s by ×2: the loopback RPCs here take 100 µs to tens of ms.
		grpcprom.WithHistogramBuckets(prometheus.ExponentialBuckets(50e-6, 2, 19)),
	))
}

// queueCollectors are the queue gauges of an owner design's stores, read at
// scrape time: the request path pays nothing for them.
func queueCollectors(st *stores) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: MetricQueueHighWater,
			Help: "Largest queue length an owner goroutine saw since the last AdminService/Reset, over the mode's stores.",
		}, func() float64 { return float64(st.queueHighWater()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: MetricQueueDepth,
			Help: "Commands waiting in the owner goroutines' queues now, over the mode's stores.",
		}, func() float64 { return float64(st.queueLen()) }),
	}
}

// serialCollector exposes the stores' serial busy time, read at scrape
// time: the request path pays only for the measurement itself.
type serialCollector struct{ st *stores }

var serialBusyDesc = prometheus.NewDesc(MetricSerialBusy,
	"Busy time of a store's serial resource (a lock, a shard's lock, an owner goroutine, the combiner's role) since the start; lock holds sampled and scaled.",
	[]string{"workload", "resource"}, nil)

var (
	waitDesc = prometheus.NewDesc(MetricWait,
		"Time a store's command waited before its serial resource took it (a lock's wait, an owner's mailbox age), since the start; one command in sample_every timed.",
		[]string{"workload"}, nil)
	batchesDesc = prometheus.NewDesc(MetricBatches,
		"Batches a store's serial resource took (an owner's run between two empty queues, inputQ-batch's groups, combining's passes), since the start.",
		[]string{"workload"}, nil)
	batchCommandsDesc = prometheus.NewDesc(MetricBatchCommands,
		"Commands in the batches of "+MetricBatches+".",
		[]string{"workload"}, nil)
)

// waitBucketBounds are the wait histogram's upper bounds in seconds: each power
// of two nanoseconds from 64 ns to 2^34 ns (17 s), where the store's own
// buckets meet, so that every cumulative count is exact.
func waitBucketBounds() []float64 {
	var out []float64
	for e := 6; e <= 34; e++ {
		out = append(out, float64(int64(1)<<e)*1e-9)
	}
	return out
}

func (serialCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- serialBusyDesc
	ch <- waitDesc
	ch <- batchesDesc
	ch <- batchCommandsDesc
}

func (c serialCollector) Collect(ch chan<- prometheus.Metric) {
	for wl, s := range c.st.serialStats() {
		if c.st.ms.wls[wl].serial() == nil {
			continue
		}
		name := workloads[wl].Name()
		for i, b := range s.Busy {
			ch <- prometheus.MustNewConstMetric(serialBusyDesc, prometheus.CounterValue, b.Seconds(), name, strconv.Itoa(i))
		}
		if s.Wait.Counts == nil {
			continue // no serial resource (atomic): no clocks
		}
		buckets := map[float64]uint64{}
		for _, le := range waitBucketBounds() {
			buckets[le] = s.Wait.Below(time.Duration(math.Round(le * 1e9)))
		}
		ch <- prometheus.MustNewConstHistogram(waitDesc, s.Wait.Count(), s.Wait.Sum.Seconds(), buckets, name)
		if c.st.batching {
			ch <- prometheus.MustNewConstMetric(batchesDesc, prometheus.CounterValue, float64(s.Batches), name)
			ch <- prometheus.MustNewConstMetric(batchCommandsDesc, prometheus.CounterValue, float64(s.BatchCommands), name)
		}
	}
}
