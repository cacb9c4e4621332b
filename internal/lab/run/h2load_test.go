package run

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/locklab/locklab/internal/lab/plan"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

// testdata/h2load-output.txt is h2load 1.52's output of a 1 s run against
// the server (mutex, 10 clients × 10 streams); h2load-requests.tsv its
// per-request log of a 20-call run.

func TestParseH2loadOutput(t *testing.T) {
	text, err := os.ReadFile("testdata/h2load-output.txt")
	require.NoError(t, err)
	o, err := parseH2loadOutput(string(text))
	require.NoError(t, err)
	assert.Equal(t, h2loadOutput{
		Seconds: 1.00, ReqPerSec: 40381, Total: 40381, Started: 40481, Done: 40381, Succeeded: 40381,
		Status2xx: 40381, MinMs: 0.081, MaxMs: 36.09, MeanMs: 2.31,
	}, o)
	res := o.result(plan.Spec{Level: 100, Factors: plan.DefaultPoint()}, 0)
	assert.Equal(t, int64(40381), res.Calls)
	assert.Equal(t, int64(40381), res.OK)
	assert.Equal(t, int64(0), res.UnexpectedErrors)
	assert.Equal(t, int64(40381*h2loadDelta), res.AckedIncrementDelta, "what the counter check owes")
	assert.Equal(t, 40381.0, res.CallsPerS)

	// The control: calls h2load did not see succeed are not acknowledged.
	failing := strings.Replace(strings.Replace(string(text), "40381 succeeded, 0 failed", "40000 succeeded, 381 failed", 1),
		"40381 2xx", "40000 2xx", 1)
	o, err = parseH2loadOutput(failing)
	require.NoError(t, err)
	res = o.result(plan.Spec{Level: 100, Factors: plan.DefaultPoint()}, 0)
	assert.Equal(t, int64(381), res.UnexpectedErrors)
	assert.Equal(t, int64(40000), res.AckedIncrementDelta)

	_, err = parseH2loadOutput("starting benchmark...\nconnect: Connection refused\n")
	assert.ErrorContains(t, err, "Connection refused")
}

func TestParseH2Duration(t *testing.T) {
	for in, want := range map[string]float64{"38us": 0.038, "12.18ms": 12.18, "1.5s": 1500} {
		got, err := parseH2Duration(in)
		require.NoError(t, err)
		assert.InDelta(t, want, got, 1e-9, in)
	}
	_, err := parseH2Duration("12")
	assert.Error(t, err)
}

func TestReadH2loadLog(t *testing.T) {
	f, err := os.Open("testdata/h2load-requests.tsv")
	require.NoError(t, err)
	defer f.Close()
	h, late, err := readH2loadLog(f, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(20), h.TotalCount())
	assert.Greater(t, late, 0.0)
	var res summary.Summary
	res.ByCase = map[string]summary.CaseStats{"increment": {Count: 20}}
	require.NoError(t, setHistogram(&res, h))
	assert.Greater(t, res.LatencyMs.P99, 0.0)
	assert.GreaterOrEqual(t, res.LatencyMs.Max, res.LatencyMs.P99)
	back, err := summary.DecodeHDR(res.HDR)
	require.NoError(t, err)
	assert.Equal(t, int64(20), back.TotalCount(), "the HDR field decodes to the same histogram")
	assert.Equal(t, res.LatencyMs.P50, res.ByCase["increment"].P50Ms)

	_, _, err = readH2loadLog(strings.NewReader("1\t200\n"), nil)
	assert.Error(t, err)
	h, _, err = readH2loadLog(strings.NewReader("1\t-1\t0\n2\t200\t500\n"), nil)
	require.NoError(t, err)
	assert.Equal(t, int64(1), h.TotalCount(), "failed streams carry no latency")
}

func TestGRPCFrame(t *testing.T) {
	frame, err := grpcFrame(&locklabv1.IncrementRequest{Delta: 7})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(frame), 5)
	assert.Equal(t, byte(0), frame[0], "uncompressed")
	n := int(frame[1])<<24 | int(frame[2])<<16 | int(frame[3])<<8 | int(frame[4])
	require.Equal(t, len(frame)-5, n, "the length prefix covers the message")
	var back locklabv1.IncrementRequest
	require.NoError(t, proto.Unmarshal(frame[5:], &back))
	assert.Equal(t, int64(7), back.GetDelta())

	cfg := testConfig(t, func(o *Options) { o.Drivers = "h2load" })
	dir := t.TempDir()
	job := Job{Spec: plan.Spec{Level: 100, Workload: "counter"}, Addr: "127.0.0.1:5", Duration: 2e9, Scratch: dir,
		Prior: &summary.Summary{CallsPerS: 20_000}}
	argv, _, err := h2loadDriver{}.Command(cfg, job)
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:5/locklab.v1.CounterService/Increment", argv[len(argv)-1])
	clients, streams := h2loadShape(100, DefaultConns)
	assert.Contains(t, strings.Join(argv, " "), fmt.Sprintf("-c %d -m %d ", clients, streams))
	assert.Equal(t, 100, clients*streams, "every concurrent call has a stream")
	assert.Contains(t, strings.Join(argv, " "), "-n 40000 ", "the warm-up's rate × the duration")
	assert.Contains(t, strings.Join(argv, " "), "-H content-type: application/grpc -H te: trailers")
	written, err := os.ReadFile(filepath.Join(dir, "increment.bin"))
	require.NoError(t, err)
	want, _ := grpcFrame(&locklabv1.IncrementRequest{Delta: h2loadDelta})
	assert.Equal(t, want, written)

	c, m := h2loadShape(1000, 10)
	assert.Equal(t, [2]int{10, 100}, [2]int{c, m})
	c, m = h2loadShape(5, 10)
	assert.Equal(t, [2]int{5, 1}, [2]int{c, m})
}
