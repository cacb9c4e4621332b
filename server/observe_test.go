package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	pb "github.com/locklab/locklab/proto/locklab/v1"
)

// scrape GETs url and parses it with Prometheus's text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// sample is the value of the series of family name whose labels include
// want: a counter's or gauge's value, a histogram's sample count. ok is
// false if there is no such series.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) (v float64, ok bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, w := range want {
			if have[k] != w {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		case m.Untyped != nil:
			return m.GetUntyped().GetValue(), true
		}
	}
	return 0, false
}

// TestMetricsEndpoint scrapes /metrics of a server under a little load: the
// named series exist, and those that count the load move by what it did.
func TestMetricsEndpoint(t *testing.T) {
	const increments = 40
	type series struct {
		name   string
		labels map[string]string
		// moves: the series grows by at least this much over the load.
		moves float64
		// lazy: the series appears once it has something to count.
		lazy bool
	}
	inc := map[string]string{"grpc_service": "locklab.v1.CounterService", "grpc_method": "Increment"}
	common := []series{
		// noop answers OK to the bad call too
		{MetricGRPCHandled, map[string]string{"grpc_service": "locklab.v1.CounterService", "grpc_method": "Increment", "grpc_code": codes.OK.String()}, increments, false},
		{MetricGRPCHandlingTime, inc, increments + 1, false},
		{MetricSchedLatencies, nil, 1, false},
		{MetricMutexWait, nil, 0.01, false},          // the contention the test makes below
		{"go_goroutines", nil, 0, false},             // the Go collector's defaults
		{"process_cpu_seconds_total", nil, 0, false}, // the process collector
	}
	store := []series{
		{MetricGRPCHandled, map[string]string{"grpc_service": "locklab.v1.CounterService", "grpc_method": "Increment", "grpc_code": codes.InvalidArgument.String()}, 1, false},
		{MetricStoreSeconds, map[string]string{"workload": "counter", "op": "increment"}, increments + 1, true},
		{MetricSerialBusy, map[string]string{"workload": "counter", "resource": "0"}, 0, false},
		{MetricWait, map[string]string{"workload": "counter"}, 0, false},
	}
	queue := []series{{MetricQueueHighWater, nil, 1, false}, {MetricQueueDepth, nil, 0, false},
		{MetricBatches, map[string]string{"workload": "counter"}, 0, false}, {MetricBatchCommands, map[string]string{"workload": "counter"}, 0, false}}
	tests := []struct {
		mode    string
		want    []series
		missing []string // series this mode must not have: the control
	}{
		{"inputQ", append(append(common, store...), queue...), nil},
		{"mutex", append(common, store...), []string{MetricQueueHighWater, MetricQueueDepth, MetricBatches, MetricBatchCommands}},
		{"noop", common, []string{MetricQueueHighWater, MetricQueueDepth, MetricSerialBusy, MetricWait, MetricBatches}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			reg := NewMetricsRegistry()
			ts := startServer(t, Config{Mode: tt.mode, SampleEvery: 1, Metrics: reg})
			web := httptest.NewServer(MetricsHandler(reg))
			t.Cleanup(web.Close)

			before := scrape(t, web.URL+"/metrics")
			for _, s := range tt.want {
				_, ok := sample(before, s.name, s.labels)
				assert.Equal(t, !s.lazy, ok, "series %s%v before any call", s.name, s.labels)
			}
			for _, name := range tt.missing {
				assert.NotContains(t, before, name)
			}

			for i := range increments {
				_, err := ts.counter.Increment(t.Context(), &pb.IncrementRequest{Delta: int64(i)})
				require.NoError(t, err)
			}
			_, _ = ts.counter.Increment(t.Context(), &pb.IncrementRequest{Delta: -1}) // INVALID_ARGUMENT but in noop
			contend(t, 20*time.Millisecond)

			after := scrape(t, web.URL+"/metrics")
			for _, s := range tt.want {
				v0, _ := sample(before, s.name, s.labels)
				v1, ok := sample(after, s.name, s.labels)
				require.True(t, ok, "series %s%v", s.name, s.labels)
				assert.GreaterOrEqual(t, v1-v0, s.moves, "%s%v moved from %v to %v", s.name, s.labels, v0, v1)
			}
		})
	}
}

// contend makes goroutines wait on a sync.Mutex until the runtime has
// counted at least want of mutex wait (it times one wait in 8 and scales, so
// a few waits may go unseen), or for 10 s at most.
func contend(t *testing.T, want time.Duration) {
	t.Helper()
	w0 := readRuntime().mutexWait
	deadline := time.Now().Add(10 * time.Second)
	for readRuntime().mutexWait-w0 < want.Seconds() {
		require.True(t, time.Now().Before(deadline), "no mutex wait counted after 10 s of contention")
		var (
			mu sync.Mutex
			wg sync.WaitGroup
		)
		for range 8 {
			wg.Go(func() {
				for range 8 {
					mu.Lock()
					time.Sleep(time.Millisecond) // the others wait on mu meanwhile
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
}

// TestMetricsControl: the series check fails where the series are not: a
// registry no server was given has the process-wide collectors only.
func TestMetricsControl(t *testing.T) {
	reg := NewMetricsRegistry()
	web := httptest.NewServer(MetricsHandler(reg))
	t.Cleanup(web.Close)
	fams := scrape(t, web.URL+"/metrics")
	for _, name := range []string{MetricGRPCHandled, MetricGRPCHandlingTime, MetricStoreSeconds} {
		_, ok := sample(fams, name, nil)
		assert.False(t, ok, name)
	}
	_, ok := sample(fams, MetricSchedLatencies, map[string]string{"no": "such label"})
	assert.False(t, ok, "labels are matched")
	_, ok = sample(fams, MetricSchedLatencies, nil)
	assert.True(t, ok)
}

// TestPprof: the profile index and a goroutine profile answer.
func TestPprof(t *testing.T) {
	web := httptest.NewServer(MetricsHandler(NewMetricsRegistry()))
	t.Cleanup(web.Close)
	tests := []struct{ path, want string }{
		{"/debug/pprof/", "goroutine"},
		{"/debug/pprof/goroutine?debug=1", "goroutine profile:"},
		{"/debug/pprof/cmdline", ""},
		{"/debug/pprof/nosuch", "Unknown profile"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, err := http.Get(web.URL + tt.path)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			if tt.want == "Unknown profile" {
				assert.Equal(t, http.StatusNotFound, resp.StatusCode)
			} else {
				assert.Equal(t, http.StatusOK, resp.StatusCode)
			}
			assert.Contains(t, string(body), tt.want)
		})
	}
}
