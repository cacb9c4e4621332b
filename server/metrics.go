package server

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	rtmetrics "runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/locklab/locklab/store"
)

// How the server measures itself without distorting what it measures:
//
//   - Nothing on the request path takes a lock. Counts are atomic adds;
//     latencies go into Prometheus histograms, whose Observe is lock-free
//     (atomic adds on a hot/cold pair of bucket arrays).
//   - The clock is read outside the design's serialised section: around
//     store.Do in the calling goroutine, never inside the Mutex's critical
//     section or the InputQ's owner. Measuring makes the caller slower by the
//     cost of two clock reads and one Observe, not the shared state.
//   - Both designs get the very same measuring code.
//
// BenchmarkMeasuredStore shows what it costs next to the store's own Do.

// A workload's ops, as indices into a window's latency table, are its op
// codes; every workload gets as many slots as the one with most ops.
func maxOps() int {
	n := 0
	for _, w := range workloads {
		n = max(n, w.numOps())
	}
	return n
}

// latencyBuckets are the histograms' upper bounds in seconds: from 20 ns to
// 10 s, each 10% above the last, so a quantile read from them is within 10%.
func latencyBuckets() []float64 {
	return prometheus.ExponentialBucketsRange(20e-9, 10, 212)
}

// storeSecondsName is the store-latency histogram as /metrics exposes it.
const storeSecondsName = "locklab_store_command_seconds"

// observeMax raises m to d if d is larger.
func observeMax(m *atomic.Int64, d time.Duration) {
	for {
		old := m.Load()
		if int64(d) <= old || m.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

// rpcCount counts one method's answers in one window, by status code.
type rpcCount struct {
	codes [codes.Unauthenticated + 1]atomic.Uint64
}

// window holds the measurements since the server started or was last Reset.
// A window is never changed after it is published, only its counters are;
// Reset publishes a new one.
type window struct {
	start time.Time
	cpu0  time.Duration
	rt0   runtimeSample
	// rpcs is keyed by full method name; the keys are fixed when the window
	// is made, so concurrent readers need no lock.
	rpcs map[string]*rpcCount
	// lat0 is each store-latency histogram as it stood when the window
	// began: the window's own counts are the difference. The histograms
	// themselves are cumulative, as Prometheus wants them.
	lat0 [][]*dto.Histogram
	// max is the largest store time seen in the window (a histogram only
	// knows the bucket), in nanoseconds.
	max [][]atomic.Int64
}

// metrics owns the store-latency histograms and the current window.
type metrics struct {
	methods []string
	// sampleMask selects the commands whose store time is measured: those
	// for which a per-thread random number has no bits of the mask set.
	// 0 measures every command.
	sampleMask uint64
	// storeSeconds holds one histogram per workload op since the start,
	// registered as storeSecondsName when the server exposes /metrics. lat
	// are its children, each looked up once, the first time its op is
	// measured, so that an Observe takes no lock (a Vec's WithLabelValues
	// takes a read lock) and /metrics shows only the ops that ran (each
	// child is 212 bucket series).
	storeSeconds *prometheus.HistogramVec
	lat          [][]atomic.Pointer[histogram] // by workload and op code
	win          atomic.Pointer[window]
}

// histogram boxes a Histogram for an atomic.Pointer.
type histogram struct{ prometheus.Histogram }

// histogram returns op's histogram, made on first use. Two goroutines
// making it at once get the same child from the Vec.
func (m *metrics) histogram(wl, op int) *histogram {
	if h := m.lat[wl][op].Load(); h != nil {
		return h
	}
	h := &histogram{m.storeSeconds.WithLabelValues(workloads[wl].Name(), workloads[wl].opName(op)).(prometheus.Histogram)}
	m.lat[wl][op].Store(h)
	return h
}

func newMetrics(methods []string, sampleEvery uint64) *metrics {
	m := &metrics{methods: methods, lat: make([][]atomic.Pointer[histogram], len(workloads))}
	for wl := range m.lat {
		m.lat[wl] = make([]atomic.Pointer[histogram], maxOps())
	}
	if sampleEvery > 1 {
		m.sampleMask = sampleEvery - 1
	}
	m.storeSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: storeSecondsName,
		Help: "Time a data RPC's command spent in the store's Do, lock or queue wait included (sampled: see -sample-every).",
		// Classic buckets: GetStats reads its window quantiles from them.
		Buckets: latencyBuckets(),
	}, []string{"workload", "op"})
	m.newWindow()
	return m
}

// newWindow starts a new measurement window.
func (m *metrics) newWindow() {
	w := &window{start: time.Now(), cpu0: cpuTime(), rt0: readRuntime(), rpcs: make(map[string]*rpcCount, len(m.methods))}
	for _, name := range m.methods {
		w.rpcs[name] = &rpcCount{}
	}
	w.lat0, w.max = make([][]*dto.Histogram, len(m.lat)), make([][]atomic.Int64, len(m.lat))
	for wl := range w.lat0 {
		w.lat0[wl], w.max[wl] = make([]*dto.Histogram, len(m.lat[wl])), make([]atomic.Int64, len(m.lat[wl]))
		for op := range w.lat0[wl] {
			w.lat0[wl][op] = &dto.Histogram{} // a histogram made later starts in this window
			if h := m.lat[wl][op].Load(); h != nil {
				w.lat0[wl][op] = histogramOf(h)
			}
		}
	}
	m.win.Store(w)
}

// histogramOf reads h's buckets.
func histogramOf(h prometheus.Histogram) *dto.Histogram {
	var d dto.Metric
	if err := h.Write(&d); err != nil {
		return &dto.Histogram{}
	}
	return d.GetHistogram()
}

// since is h minus the earlier reading h0 of the same histogram.
func since(h, h0 *dto.Histogram) *dto.Histogram {
	out := &dto.Histogram{SampleCount: proto.Uint64(h.GetSampleCount() - h0.GetSampleCount())}
	b0 := h0.GetBucket()
	for i, b := range h.GetBucket() {
		cum := b.GetCumulativeCount()
		if i < len(b0) {
			cum -= b0[i].GetCumulativeCount()
		}
		out.Bucket = append(out.Bucket, &dto.Bucket{UpperBound: b.UpperBound, CumulativeCount: proto.Uint64(cum)})
	}
	return out
}

// unary counts every answered unary RPC by method and status code.
func (m *metrics) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	m.answered(info.FullMethod, status.Code(err))
	return resp, err
}

// answered counts one answer of a method with its code.
func (m *metrics) answered(method string, code codes.Code) {
	if c := m.win.Load().rpcs[method]; c != nil && int(code) < len(c.codes) {
		c.codes[code].Add(1)
	}
}

// measured is a store whose Do records the time it takes, lock or queue wait
// included, into the current window.
type measured[C, R any] struct {
	inner store.Store[C, R]
	m     *metrics
	wl    int
	op    func(C) int
}

func measure[C, R any](s store.Store[C, R], m *metrics, wl int, op func(C) int) store.Store[C, R] {
	return &measured[C, R]{inner: s, m: m, wl: wl, op: op}
}

func (s *measured[C, R]) Do(ctx context.Context, cmd C) (R, error) {
	if s.m.sampleMask != 0 && rand.Uint64()&s.m.sampleMask != 0 {
		return s.inner.Do(ctx, cmd)
	}
	t0 := time.Now()
	r, err := s.inner.Do(ctx, cmd)
	d := time.Since(t0)
	if op := s.op(cmd); op >= 0 && op < len(s.m.lat[s.wl]) {
		s.m.histogram(s.wl, op).Observe(d.Seconds())
		observeMax(&s.m.win.Load().max[s.wl][op], d)
	}
	return r, err
}

func (s *measured[C, R]) Close() error { return s.inner.Close() }

// windowStats is what GetStats reports of the current window.
type windowStats struct {
	seconds  float64
	requests uint64
	cpu      float64
	gc       uint32
	rpcs     map[string]map[string]uint64 // method → code name → count
	latency  []latencyStats
	// The runtime's scheduling latency (nanoseconds) and mutex wait.
	schedCount         uint64
	schedP50, schedP99 float64
	mutexWait          float64
}

type latencyStats struct {
	workload, op            string
	count                   uint64
	p50, p90, p99, p999, mx float64
}

func (m *metrics) read() windowStats {
	w := m.win.Load()
	rt := readRuntime()
	ws := windowStats{
		seconds:   time.Since(w.start).Seconds(),
		cpu:       (cpuTime() - w.cpu0).Seconds(),
		gc:        uint32(rt.gc - w.rt0.gc),
		rpcs:      make(map[string]map[string]uint64),
		mutexWait: max(rt.mutexWait-w.rt0.mutexWait, 0),
	}
	sched := rt.schedSince(w.rt0)
	if ws.schedCount = sched.total(); ws.schedCount > 0 {
		ws.schedP50, ws.schedP99 = sched.quantile(0.5)*1e9, sched.quantile(0.99)*1e9
	}
	for name, c := range w.rpcs {
		for code := range c.codes {
			if n := c.codes[code].Load(); n > 0 {
				if ws.rpcs[name] == nil {
					ws.rpcs[name] = make(map[string]uint64)
				}
				ws.rpcs[name][codes.Code(code).String()] = n
				ws.requests += n
			}
		}
	}
	for wl := range m.lat {
		for op := range m.lat[wl] {
			l := m.lat[wl][op].Load()
			if l == nil {
				continue
			}
			h := since(histogramOf(l), w.lat0[wl][op])
			if h.GetSampleCount() == 0 {
				continue
			}
			mx := float64(w.max[wl][op].Load())
			// Capped in nanoseconds, not seconds: mx/1e9*1e9 need not be mx.
			q := func(q float64) float64 { return math.Min(quantile(h, q, math.Inf(1))*1e9, mx) }
			ws.latency = append(ws.latency, latencyStats{
				workload: workloads[wl].Name(), op: workloads[wl].opName(op), count: h.GetSampleCount(),
				p50: q(0.5), p90: q(0.9), p99: q(0.99), p999: q(0.999),
				mx: mx,
			})
		}
	}
	return ws
}

// quantile estimates the q-quantile of a cumulative histogram the way
// Prometheus's histogram_quantile does: linear interpolation inside the
// bucket that holds it. The estimate never exceeds max, the largest value
// seen.
func quantile(h *dto.Histogram, q, most float64) float64 {
	total := h.GetSampleCount()
	if total == 0 {
		return math.NaN()
	}
	rank := q * float64(total)
	lower, below := 0.0, uint64(0)
	for _, b := range h.GetBucket() {
		upper, cum := b.GetUpperBound(), b.GetCumulativeCount()
		if float64(cum) >= rank {
			in := cum - below
			v := upper
			if in > 0 {
				v = lower + (upper-lower)*(rank-float64(below))/float64(in)
			}
			return math.Min(v, most)
		}
		lower, below = upper, cum
	}
	return most // in the +Inf bucket
}

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The runtime/metrics GetStats reports, read without stopping the world
// (runtime.ReadMemStats would). /metrics exposes the same through the Go
// collector (metricsRuntimeRules).
const (
	rtGCCycles       = "/gc/cycles/total:gc-cycles"
	rtSchedLatencies = "/sched/latencies:seconds"
	rtMutexWait      = "/sync/mutex/wait/total:seconds"
)

// runtimeSample is one reading of the runtime's cumulative counters.
type runtimeSample struct {
	gc        uint64
	mutexWait float64 // seconds
	sched     runtimeHistogram
}

// runtimeHistogram is a runtime/metrics Float64Histogram: counts[i] values
// fell in [buckets[i], buckets[i+1]).
type runtimeHistogram struct {
	counts  []uint64
	buckets []float64
}

func readRuntime() runtimeSample {
	s := []rtmetrics.Sample{{Name: rtGCCycles}, {Name: rtMutexWait}, {Name: rtSchedLatencies}}
	rtmetrics.Read(s)
	var out runtimeSample
	if s[0].Value.Kind() == rtmetrics.KindUint64 {
		out.gc = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == rtmetrics.KindFloat64 {
		out.mutexWait = s[1].Value.Float64()
	}
	if s[2].Value.Kind() == rtmetrics.KindFloat64Histogram {
		h := s[2].Value.Float64Histogram()
		// Read reuses neither slice, but copy anyway: a window keeps its
		// starting counts for as long as it lives.
		out.sched = runtimeHistogram{counts: slices.Clone(h.Counts), buckets: slices.Clone(h.Buckets)}
	}
	return out
}

// schedSince is the scheduling-latency histogram of what happened between
// r0 and r.
func (r runtimeSample) schedSince(r0 runtimeSample) runtimeHistogram {
	out := runtimeHistogram{counts: slices.Clone(r.sched.counts), buckets: r.sched.buckets}
	if len(r0.sched.counts) == len(out.counts) {
		for i, c := range r0.sched.counts {
			out.counts[i] -= min(c, out.counts[i])
		}
	}
	return out
}

func (h runtimeHistogram) total() uint64 {
	var n uint64
	for _, c := range h.counts {
		n += c
	}
	return n
}

// quantile estimates the q-quantile by linear interpolation inside the
// bucket that holds it; an infinite bucket edge is replaced by the finite one.
func (h runtimeHistogram) quantile(q float64) float64 {
	total := h.total()
	if total == 0 || len(h.buckets) != len(h.counts)+1 {
		return math.NaN()
	}
	rank := q * float64(total)
	var below uint64
	for i, c := range h.counts {
		if c == 0 || float64(below+c) < rank {
			below += c
			continue
		}
		lo, hi := h.buckets[i], h.buckets[i+1]
		switch {
		case math.IsInf(lo, -1):
			return hi
		case math.IsInf(hi, 1):
			return lo
		}
		return lo + (hi-lo)*(rank-float64(below))/float64(c)
	}
	return h.buckets[len(h.buckets)-1]
}

// rssBytes is the resident set size, from /proc/self/statm; 0 where that
// does not exist.
func rssBytes() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

// goroutines is the number of goroutines now.
func goroutines() int64 { return int64(runtime.NumGoroutine()) }
