package server

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	rtmetrics "runtime/metrics"
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

// The workloads, as indices into a window's latency table.
const (
	wlCounter = iota
	wlBank
	wlKV
	numWorkloads
)

var workloadNames = [numWorkloads]string{"counter", "bank", "kv"}

// opNames names each workload's op codes (the workload package's CounterOp,
// BankOp and KVOp values, which start at 1) as the report shows them.
func opNames(wl int) []string {
	switch wl {
	case wlCounter:
		return []string{1: "increment", 2: "get", 3: "reset"}
	case wlBank:
		return []string{1: "transfer", 2: "balance", 3: "history", 4: "reset", 5: "summary"}
	case wlKV:
		return []string{1: "put", 2: "get", 3: "reset", 4: "len"}
	}
	return nil
}

const maxOps = 6 // op codes 0..5

// latencyBuckets are the histograms' upper bounds in nanoseconds: from 20 ns to
// 10 s, each 10% above the last, so a quantile read from them is within 10%.
func latencyBuckets() []float64 {
	return prometheus.ExponentialBucketsRange(20, 10e9, 212)
}

// latency is one workload op's histogram in one window, with the largest
// value seen (a histogram only knows the bucket).
type latency struct {
	h   prometheus.Histogram
	max atomic.Int64
}

func (l *latency) observe(d time.Duration) {
	l.h.Observe(float64(d))
	for {
		old := l.max.Load()
		if int64(d) <= old || l.max.CompareAndSwap(old, int64(d)) {
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
	gc0   uint64
	// rpcs is keyed by full method name; the keys are fixed when the window
	// is made, so concurrent readers need no lock.
	rpcs map[string]*rpcCount
	lat  [numWorkloads][maxOps]latency
}

// metrics owns the current window.
type metrics struct {
	methods []string
	// sampleMask selects the commands whose store time is measured: those
	// for which a per-thread random number has no bits of the mask set.
	// 0 measures every command.
	sampleMask uint64
	win        atomic.Pointer[window]
}

func newMetrics(methods []string, sampleEvery uint64) *metrics {
	m := &metrics{methods: methods}
	if sampleEvery > 1 {
		m.sampleMask = sampleEvery - 1
	}
	m.newWindow()
	return m
}

// newWindow starts a new measurement window.
func (m *metrics) newWindow() {
	w := &window{start: time.Now(), cpu0: cpuTime(), gc0: gcCycles(), rpcs: make(map[string]*rpcCount, len(m.methods))}
	for _, name := range m.methods {
		w.rpcs[name] = &rpcCount{}
	}
	for wl := range w.lat {
		for op := range w.lat[wl] {
			w.lat[wl][op].h = prometheus.NewHistogram(prometheus.HistogramOpts{
				Name:    "locklab_store_seconds", // never registered: read through Write
				Buckets: latencyBuckets(),
			})
		}
	}
	m.win.Store(w)
}

// unary counts every answered unary RPC by method and status code.
func (m *metrics) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if c := m.win.Load().rpcs[info.FullMethod]; c != nil {
		if code := status.Code(err); int(code) < len(c.codes) {
			c.codes[code].Add(1)
		}
	}
	return resp, err
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
	if op := s.op(cmd); op >= 0 && op < maxOps {
		s.m.win.Load().lat[s.wl][op].observe(d)
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
}

type latencyStats struct {
	workload, op            string
	count                   uint64
	p50, p90, p99, p999, mx float64
}

func (m *metrics) read() windowStats {
	w := m.win.Load()
	ws := windowStats{
		seconds: time.Since(w.start).Seconds(),
		cpu:     (cpuTime() - w.cpu0).Seconds(),
		gc:      uint32(gcCycles() - w.gc0),
		rpcs:    make(map[string]map[string]uint64),
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
	for wl := range w.lat {
		names := opNames(wl)
		for op := range w.lat[wl] {
			l := &w.lat[wl][op]
			var d dto.Metric
			if err := l.h.Write(&d); err != nil || d.GetHistogram().GetSampleCount() == 0 {
				continue
			}
			name := "op" + string(rune('0'+op))
			if op < len(names) && names[op] != "" {
				name = names[op]
			}
			mx := float64(l.max.Load())
			h := d.GetHistogram()
			ws.latency = append(ws.latency, latencyStats{
				workload: workloadNames[wl], op: name, count: h.GetSampleCount(),
				p50: quantile(h, 0.5, mx), p90: quantile(h, 0.9, mx), p99: quantile(h, 0.99, mx), p999: quantile(h, 0.999, mx),
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

// gcCycles is the number of completed GC cycles, read without stopping the
// world (runtime.ReadMemStats would).
func gcCycles() uint64 {
	s := []rtmetrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
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
