package serve

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/server"
)

var metricsRE = regexp.MustCompile(`^locklab: mode=(\S+) metrics on http://(\S+)/metrics$`)

// metricsAddr is where r serves /metrics, from its line after the listening
// line (printed before Run serves, so already there).
func (r *running) metricsAddr(t *testing.T) string {
	t.Helper()
	lines := strings.Split(r.stderr.String(), "\n")
	require.GreaterOrEqual(t, len(lines), 2, "stderr:\n%s", r.stderr)
	m := metricsRE.FindStringSubmatch(lines[1])
	require.NotNil(t, m, "no metrics line; stderr:\n%s", r.stderr)
	return m[2]
}

// handledOK scrapes addr's /metrics with Prometheus's text parser, requires
// the named series besides the process-wide ones, and returns how many
// Increments the gRPC metrics count as answered OK.
func handledOK(t *testing.T, addr string, names ...string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	for _, name := range append(names, server.MetricQueueDepth, server.MetricSchedLatencies, server.MetricMutexWait, "process_cpu_seconds_total") {
		_, ok := fams[name]
		assert.True(t, ok, "%s in /metrics", name)
	}
	f := fams[server.MetricGRPCHandled]
	require.NotNil(t, f, "%s in /metrics", server.MetricGRPCHandled)
	for _, m := range f.GetMetric() {
		l := map[string]string{}
		for _, lp := range m.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		if l["grpc_method"] == "Increment" && l["grpc_code"] == "OK" {
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no %s series for Increment OK", server.MetricGRPCHandled)
	return 0
}

// TestMetricsAddr runs the command with -metrics-addr on port 0: it says
// where, serves /metrics whose gRPC count follows the calls and
// /debug/pprof/, and the end of the context stops both listeners.
func TestMetricsAddr(t *testing.T) {
	o := options("inputQ")
	o.MetricsAddr, o.SampleEvery = "127.0.0.1:0", 1
	r := startRun(t, o)
	maddr := r.metricsAddr(t)
	host, _, err := net.SplitHostPort(maddr)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", host)

	before := handledOK(t, maddr)
	conn := dial(t, r.addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 10 {
		_, err := pb.NewCounterServiceClient(conn).Increment(ctx, &pb.IncrementRequest{Delta: 1})
		require.NoError(t, err)
	}
	// The store histogram of an op appears once the op has run.
	assert.Equal(t, before+10, handledOK(t, maddr, server.MetricStoreSeconds))

	resp, err := http.Get("http://" + maddr + "/debug/pprof/")
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, conn.Close())
	http.DefaultClient.CloseIdleConnections() // goleak: the client's keep-alive readers

	r.stop(t)
	assert.Equal(t, fmt.Sprintf("locklab: mode=inputQ listening on %s\nlocklab: mode=inputQ metrics on http://%s/metrics\nlocklab: mode=inputQ stopped\n", r.addr, maddr), r.stderr.String())
	_, err = http.Get("http://" + maddr + "/metrics")
	assert.Error(t, err, "the metrics listener is closed with the server")
}

func TestLoopbackIfBare(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{in: "9090", want: "127.0.0.1:9090"},
		{in: ":9090", want: "127.0.0.1:9090"},
		{in: "0", want: "127.0.0.1:0"},
		{in: "0.0.0.0:9090", want: "0.0.0.0:9090"},
		{in: "localhost:9090", want: "localhost:9090"},
		{in: "[::1]:9090", want: "[::1]:9090"},
		{in: "http", err: `port "http"`},
		{in: "99999", err: `port "99999"`},
		{in: "a:b:c", err: "too many colons"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := loopbackIfBare(tt.in)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestMetricsAddrInUse: a metrics address already taken is a runtime
// failure (status 1) and the gRPC server does not start either. (A
// -metrics-addr that is no address is a usage error: TestUsageErrors.)
func TestMetricsAddrInUse(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	o := options("mutex")
	o.MetricsAddr = busy.Addr().String()
	var stderr strings.Builder
	err = Run(t.Context(), o, io.Discard, &stderr)
	assert.Equal(t, 1, ExitCode(err, &stderr))
	assert.Contains(t, stderr.String(), "-metrics-addr: listen tcp "+busy.Addr().String())
	assert.NotContains(t, stderr.String(), "listening on")
}
