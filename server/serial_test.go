package server

import (
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/work"
	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/store"
)

func serialByWorkload(s *pb.GetStatsResponse) map[string]*pb.SerialDemand {
	out := map[string]*pb.SerialDemand{}
	for _, d := range s.GetSerial() {
		out[d.GetWorkload()] = d
	}
	return out
}

// TestStatsSerialDemand drives a known serial work (-work on every
// increment, one caller) and reads it back from GetStats and /metrics: the
// counter's busiest serial resource was busy at least that long, the other
// workloads' stores were idle, and Reset starts a new window. The store's
// own tests bound the measurement from both sides, with controls; here the
// upper bound only catches a wrong unit (a thousandfold) or a window that
// does not start over, since -work runs long, not short, on a loaded
// machine: a spin preempted, or its CPU stolen by the hypervisor, keeps the
// resource busy for longer (3× was exceeded on a host that stole a tenth of
// the CPUs).
func TestStatsSerialDemand(t *testing.T) {
	// The work is long beside a preemption: a store that received nothing
	// but the reset and GetStats is still "busy" for as long as its owner
	// was descheduled in the middle of one of them (5.5 ms seen under a
	// parallel make test), and its bound is a quarter of the counter's.
	const n, perCall = 40, time.Millisecond
	want := (n * perCall).Seconds()
	for _, mode := range storeModes {
		t.Run(mode, func(t *testing.T) {
			reg := NewMetricsRegistry()
			// Sleeping work: a spin calibrated while a parallel make test
			// slowed its CPU runs short afterwards (half the work seen), and
			// a sleep is never shorter than asked.
			ts := startServer(t, Config{Mode: mode, Work: perCall, WorkKind: work.KindSleep, Metrics: reg, Store: store.Config{SerialSampleEvery: 1}})
			web := httptest.NewServer(MetricsHandler(reg))
			t.Cleanup(web.Close)
			ts.reset(t, pb.Scenario_SCENARIO_A, 0, 0) // the window starts after the resets' own work
			before := scrape(t, web.URL+"/metrics")
			for range n {
				_, err := ts.counter.Increment(t.Context(), &pb.IncrementRequest{Delta: 1})
				require.NoError(t, err)
			}
			s := ts.stats(t)
			serial := serialByWorkload(s)
			require.Len(t, serial, len(Workloads()), "one entry per served workload: %v", s.GetSerial())
			c := serial["counter"]
			assert.GreaterOrEqual(t, c.GetMaxBusySeconds(), 0.9*want, "%v", c)
			assert.LessOrEqual(t, c.GetMaxBusySeconds(), 10*want, "%v", c)
			assert.LessOrEqual(t, c.GetMaxBusySeconds(), c.GetBusySeconds())
			assert.Positive(t, c.GetResources())
			assert.Equal(t, uint32(1), c.GetSampleEvery())
			for _, wl := range []string{"bank", "kv"} {
				// The busiest resource, not the sum: sixteen owners each still
				// finishing the reset's commands add up on a loaded machine.
				assert.Less(t, serial[wl].GetMaxBusySeconds(), want/4, "%s: only GetStats' reads and the reset's tail", wl)
			}

			after := scrape(t, web.URL+"/metrics")
			var moved float64
			for i := range int(c.GetResources()) {
				l := map[string]string{"workload": "counter", "resource": strconv.Itoa(i)}
				v0, _ := sample(before, MetricSerialBusy, l)
				v1, ok := sample(after, MetricSerialBusy, l)
				require.True(t, ok, "series %s%v", MetricSerialBusy, l)
				moved += v1 - v0
			}
			assert.GreaterOrEqual(t, moved, 0.9*want, "/metrics counts what GetStats does")

			ts.reset(t, pb.Scenario_SCENARIO_A, 0, 0)
			c2 := serialByWorkload(ts.stats(t))["counter"]
			assert.Less(t, c2.GetBusySeconds(), want/4, "a new window: %v", c2)
		})
	}
}

// TestStatsSerialDemandAtomic: atomic has no serial resource, and serves
// only the counter.
func TestStatsSerialDemandAtomic(t *testing.T) {
	ts := startServer(t, Config{Mode: "atomic"})
	_, err := ts.counter.Increment(t.Context(), &pb.IncrementRequest{Delta: 1})
	require.NoError(t, err)
	serial := serialByWorkload(ts.stats(t))
	require.Len(t, serial, 1)
	assert.Zero(t, serial["counter"].GetResources())
	assert.Zero(t, serial["counter"].GetBusySeconds())
}

func TestStatsSerialDemandNoop(t *testing.T) {
	ts := startServer(t, Config{Mode: "noop"})
	assert.Empty(t, ts.stats(t).GetSerial())
}

// TestStatsWaitClocks: the store's own clocks reach GetStats and /metrics.
// Four callers at once on a counter whose every increment holds the serial
// resource for -work (asleep) wait for each other: every command's wait is
// timed (sample every 1), the slowest waited at least half a work (one of
// four callers released together waits for at least one other's whole
// work), and /metrics, scraped around the window, counts at least what
// GetStats reports in it. The batching designs (inputQ-batch's groups,
// combining's passes: every one timed) put every command in a batch; lock
// designs have no batch series (the control), atomic and noop no clocks.
// The store's tests hold the known answers and their controls.
func TestStatsWaitClocks(t *testing.T) {
	const callers, each, perCall = 4, 5, 2 * time.Millisecond
	for _, mode := range storeModes {
		t.Run(mode, func(t *testing.T) {
			m, err := LookupMode(mode)
			require.NoError(t, err)
			d, _ := m.Design()
			reg := NewMetricsRegistry()
			ts := startServer(t, Config{Mode: mode, Work: perCall, WorkKind: work.KindSleep, Metrics: reg, Store: store.Config{SerialSampleEvery: 1}})
			web := httptest.NewServer(MetricsHandler(reg))
			t.Cleanup(web.Close)
			ts.reset(t, pb.Scenario_SCENARIO_A, 0, 0)
			before := scrape(t, web.URL+"/metrics")
			var wg sync.WaitGroup
			start := make(chan struct{})
			for range callers {
				wg.Go(func() {
					<-start
					for range each {
						_, err := ts.counter.Increment(t.Context(), &pb.IncrementRequest{Delta: 1})
						assert.NoError(t, err)
					}
				})
			}
			close(start)
			wg.Wait()
			c := serialByWorkload(ts.stats(t))["counter"]
			after := scrape(t, web.URL+"/metrics")

			require.NotNil(t, c)
			assert.GreaterOrEqual(t, c.GetWaits(), uint64(callers*each), "every command's wait timed: %v", c)
			assert.GreaterOrEqual(t, c.GetWaitP99Ns(), float64(perCall/2), "%v", c)
			assert.GreaterOrEqual(t, c.GetWaitP99Ns(), c.GetWaitP50Ns())
			assert.Positive(t, c.GetWaitMeanNs())
			l := map[string]string{"workload": "counter"}
			w0, _ := sample(before, MetricWait, l)
			w1, ok := sample(after, MetricWait, l)
			require.True(t, ok, "series %s%v", MetricWait, l)
			assert.GreaterOrEqual(t, w1-w0, float64(c.GetWaits()), "/metrics counts what GetStats does")
			if !d.Owner && !d.GroupCommit {
				assert.Zero(t, c.GetBatches(), "a lock takes one command per hold")
				assert.NotContains(t, after, MetricBatches)
				return
			}
			if d.GroupCommit {
				assert.GreaterOrEqual(t, c.GetBatchCommands(), uint64(callers*each), "every group recorded: %v", c)
			}
			assert.GreaterOrEqual(t, c.GetBatchCommands(), c.GetBatches())
			for name, got := range map[string]uint64{MetricBatches: c.GetBatches(), MetricBatchCommands: c.GetBatchCommands()} {
				v0, _ := sample(before, name, l)
				v1, ok := sample(after, name, l)
				require.True(t, ok, "series %s%v", name, l)
				assert.GreaterOrEqual(t, v1-v0, float64(got), "%s counts what GetStats does", name)
			}
		})
	}
}

// TestWaitClocksNone: atomic has no serial resource and noop no store:
// neither has a wait series.
func TestWaitClocksNone(t *testing.T) {
	for _, mode := range []string{"atomic", "noop"} {
		t.Run(mode, func(t *testing.T) {
			reg := NewMetricsRegistry()
			ts := startServer(t, Config{Mode: mode, Metrics: reg})
			web := httptest.NewServer(MetricsHandler(reg))
			t.Cleanup(web.Close)
			_, err := ts.counter.Increment(t.Context(), &pb.IncrementRequest{Delta: 1})
			require.NoError(t, err)
			fams := scrape(t, web.URL+"/metrics")
			assert.NotContains(t, fams, MetricWait)
			assert.NotContains(t, fams, MetricBatches)
			assert.Zero(t, serialByWorkload(ts.stats(t))["counter"].GetWaits())
		})
	}
}
