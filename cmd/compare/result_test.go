package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/load"
)

func TestReadSummaryBothSchemas(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	neutral := write("go.json", `{"schema":"locklab.load-summary/v1","driver":"go","workload":"bank","scenario":"B","model":"closed",
		"callers":10,"duration_s":2,"calls":2000,"calls_per_s":1000,"ok":1900,"expected_refusals":100,"unexpected_errors":0,
		"by_code":{"OK":1900,"FAILED_PRECONDITION":100},"latency_ms":{"p50":0.5,"p99":2},"percentiles":[[50,0.5],[99,2]],
		"acked_transfers":1900,"dropped":0,"late":0}`)
	r, err := readSummary(neutral)
	require.NoError(t, err)
	assert.Equal(t, "go", r.Driver)
	assert.Equal(t, int64(2000), r.Calls)
	assert.Equal(t, 1000.0, r.CallsPerS)
	assert.Equal(t, int64(100), r.ByCode["FAILED_PRECONDITION"])
	assert.Equal(t, [][2]float64{{50, 0.5}, {99, 2}}, r.Percentiles)

	k6 := write("k6.json", `{"schema":"locklab.k6-summary/v1","script":"counter","config":{"model":"closed"},
		"test_run_duration_ms":2000,"grpc_req_duration_ms":{"all":{"avg":1,"min":0.1,"med":0.8,"max":9,"p90":2,"p95":3,"p99":5,"count":4000},
		"by_case":{"increment":{"med":0.8,"p99":5,"count":4000}}},"expected_refusals":0,"unexpected_errors":1,
		"acked_increment_delta":3999,"dropped_iterations":0,"vus_max":10}`)
	r, err = readSummary(k6)
	require.NoError(t, err)
	assert.Equal(t, "k6", r.Driver)
	assert.Equal(t, load.SummarySchema, r.Schema)
	assert.Equal(t, int64(4000), r.Calls)
	assert.Equal(t, 2000.0, r.CallsPerS)
	assert.Equal(t, 0.8, r.LatencyMs.P50)
	assert.Equal(t, 5.0, r.LatencyMs.P99)
	assert.Equal(t, int64(3999), r.AckedIncrementDelta)
	assert.Equal(t, int64(3999), r.OK)
	assert.Equal(t, load.CaseStats{Count: 4000, P50Ms: 0.8, P99Ms: 5}, r.ByCase["increment"])
	assert.Equal(t, "closed", r.Model)

	for name, body := range map[string]string{
		"other.json": `{"schema":"locklab.k6-summary/v2"}`,
		"bad.json":   `{"schema":`,
	} {
		_, err := readSummary(write(name, body))
		assert.Error(t, err, name)
	}
	_, err = readSummary(filepath.Join(dir, "missing.json"))
	assert.Error(t, err)
}

// TestLoadLegacyRecords: results written before the driver seam (k6 only,
// its summary inside the record) still rerender.
func TestLoadLegacyRecords(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "runs"), 0o755))
	legacy := `{"index":1,"id":"001-counter-mutex-vus10-rep1","workload":"counter","mode":"mutex","model":"closed","level":10,"rep":1,
		"k6":{"exit_code":0,"wall_seconds":12,"cpu_seconds":6,"cores":0.5},
		"k6_summary":{"schema":"locklab.k6-summary/v1","script":"counter","test_run_duration_ms":10000,
			"grpc_req_duration_ms":{"all":{"med":1,"p99":4,"count":50000}}},
		"server_stats":{"mode":"mutex","storeBacked":true,"windowSeconds":10,"cpuSeconds":5,"requests":"50000"},
		"derived":{"requests_per_sec":5000,"k6_saturated":false}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "runs", "001-counter-mutex-vus10-rep1.json"), []byte(legacy), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "runs", "001-counter-mutex-vus10-rep1.k6.json"), []byte(`{}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "meta.json"), []byte(`{"modes":["mutex"],"workloads":["counter"],"levels":[10],"model":"closed"}`), 0o644))
	records, err := loadRecords(dir)
	require.NoError(t, err)
	require.Len(t, records, 1)
	r := records[0]
	assert.Equal(t, "k6", r.Driver)
	assert.Equal(t, defaultFactors, r.Factors)
	assert.Equal(t, 5000.0, r.Derived.CallsPerSec)
	assert.Equal(t, 100.0, r.Derived.ServerCPUPerCallUs)
	var out strings.Builder
	require.NoError(t, rerender(dir, &out))
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "## counter · k6 driver · work 0s, durability none, skew 0, read ratio default")
}
