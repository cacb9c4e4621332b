package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
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

// metricsAddr waits for p's metrics line, the one after the listening line.
func (p *serverProc) metricsAddr(t *testing.T) string {
	t.Helper()
	var addr string
	require.Eventually(t, func() bool {
		lines := p.stderrLines()
		if len(lines) < 2 {
			return false
		}
		m := metricsRE.FindStringSubmatch(lines[1])
		if m != nil {
			addr = m[2]
		}
		return m != nil
	}, time.Minute, 10*time.Millisecond, "no metrics line; stderr:\n%s", p.stderr())
	return addr
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

// TestMetricsAddr runs the binary with -metrics-addr on port 0: it says
// where, serves /metrics whose gRPC count follows the calls and
// /debug/pprof/, and SIGTERM stops both listeners with exit status 0.
func TestMetricsAddr(t *testing.T) {
	p := startServer(t, "inputQ", "-addr", "127.0.0.1:0", "-metrics-addr", "127.0.0.1:0", "-sample-every", "1")
	maddr := p.metricsAddr(t)
	host, _, err := net.SplitHostPort(maddr)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", host)

	before := handledOK(t, maddr)
	conn := dial(t, p.addr)
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

	p.stop(t, syscall.SIGTERM)
	assert.Equal(t, []string{
		fmt.Sprintf("locklab: mode=inputQ listening on %s", p.addr),
		fmt.Sprintf("locklab: mode=inputQ metrics on http://%s/metrics", maddr),
		"locklab: mode=inputQ stopped",
	}, p.stderrLines())
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

func TestMetricsAddrErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	tests := []struct {
		name string
		addr string
		code int
		want string
	}{
		{"not a port", "nine", 2, `-metrics-addr "nine": port "nine"`},
		{"in use", busy.Addr().String(), 1, "-metrics-addr: listen tcp " + busy.Addr().String()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := runBinary(t, "-mode", "mutex", "-addr", "127.0.0.1:0", "-metrics-addr", tt.addr)
			assert.Equal(t, tt.code, code, "exit status; output:\n%s", out)
			assert.Contains(t, out, tt.want)
			assert.NotContains(t, out, "listening on")
		})
	}
}

// TestVersion: -version prints one line naming the module version and the
// Go version to stdout and exits 0, whatever else is on the command line.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"-version"}, {"-version", "-mode", "nosuch"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			cmd := exec.Command(serverBin, args...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
			assert.Regexp(t, `^locklab \S+ .*go1\.\d+.*\n$`, stdout.String())
			assert.Empty(t, stderr.String())
		})
	}
	var stdout strings.Builder
	require.NoError(t, run(context.Background(), []string{"-version"}, &stdout, io.Discard))
	assert.Equal(t, version()+"\n", stdout.String())
	assert.Equal(t, "locklab", strings.Fields(version())[0])
}
