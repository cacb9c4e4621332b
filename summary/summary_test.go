package summary_test

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/summary"
)

// summaryOf builds a consistent summary around a histogram of the given
// latencies.
func summaryOf(t *testing.T, latencies ...time.Duration) *summary.Summary {
	t.Helper()
	h := summary.NewHistogram()
	for _, d := range latencies {
		require.NoError(t, h.RecordValue(d.Microseconds()))
	}
	hdr, err := summary.EncodeHDR(h)
	require.NoError(t, err)
	n := int64(len(latencies))
	return &summary.Summary{
		Schema: summary.Schema, Driver: "go", DriverVersion: "test", Workload: "bank", Scenario: "B",
		Mix: "transfer:1", Model: "open", Callers: 4, Conns: 2, Rate: 100, Skew: 0.99, ReadRatio: -1,
		DurationS: 1, Calls: n, CallsPerS: float64(n), OK: n - 1, ExpectedRefusals: 1,
		ByCode:    map[string]int64{"OK": n - 1, "FAILED_PRECONDITION": 1},
		ByCase:    map[string]summary.CaseStats{"transfer": {Count: n, P50Ms: 1, P99Ms: 2}},
		LatencyMs: summary.LatencyOf(h), Percentiles: summary.PercentilesOf(h), HDR: hdr,
		AckedTransfers: n - 1, Dropped: 3, Late: 2,
	}
}

func TestSummaryRoundTrip(t *testing.T) {
	want := summaryOf(t, time.Millisecond, 2*time.Millisecond, 40*time.Millisecond)
	path := filepath.Join(t.TempDir(), "s.json")
	require.NoError(t, want.WriteFile(path))
	got, err := summary.Read(path)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	h, err := summary.DecodeHDR(got.HDR)
	require.NoError(t, err)
	assert.Equal(t, int64(3), h.TotalCount())
	assert.InDelta(t, 40, got.LatencyMs.Max, 0.1)
	last := got.Percentiles[len(got.Percentiles)-1]
	assert.Equal(t, [2]float64{100, got.LatencyMs.Max}, last, "the curve ends at the maximum")
}

func TestMergeHDR(t *testing.T) {
	a := summaryOf(t, time.Millisecond, time.Millisecond)
	b := summaryOf(t, 10*time.Millisecond)
	h, err := summary.MergeHDR(a, b)
	require.NoError(t, err)
	assert.Equal(t, int64(3), h.TotalCount())
	assert.InDelta(t, 10, summary.LatencyOf(h).Max, 0.01)
	assert.InDelta(t, 1, summary.LatencyOf(h).P50, 0.01)

	// A summary without a histogram (k6's) cannot be merged: its calls
	// would silently be missing from the curve.
	b.HDR = ""
	_, err = summary.MergeHDR(a, b)
	assert.Error(t, err)
	b.HDR = "bm90IGEgaGlzdG9ncmFt"
	_, err = summary.MergeHDR(a, b)
	assert.Error(t, err)
}

func TestParseSummaryRejects(t *testing.T) {
	good := summaryOf(t, time.Millisecond)
	tests := []struct {
		name  string
		spoil func(s *summary.Summary)
	}{
		{"unknown schema", func(s *summary.Summary) { s.Schema = "locklab.load-summary/v2" }},
		{"calls do not add up", func(s *summary.Summary) { s.Calls++ }},
		{"no model", func(s *summary.Summary) { s.Model = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := *good
			tt.spoil(&s)
			var b bytes.Buffer
			require.NoError(t, s.Write(&b))
			_, err := summary.Parse(b.Bytes())
			assert.Error(t, err)
		})
	}
	_, err := summary.Parse([]byte(`{"schema": 3}`))
	assert.Error(t, err)
}

// TestReadK6Summary reads what k6/lib/summary.js writes now (a copy of a
// `make e2e` output): the same schema as the Go driver, plus k6's own part.
func TestReadK6Summary(t *testing.T) {
	s, err := summary.Read(filepath.Join("testdata", "k6-bank-B.load.json"))
	require.NoError(t, err)
	assert.Equal(t, "k6", s.Driver)
	assert.Equal(t, "B", s.Scenario)
	assert.Positive(t, s.ExpectedRefusals)
	assert.Equal(t, s.ExpectedRefusals, s.ByCode["FAILED_PRECONDITION"])
	require.NotNil(t, s.K6)
	assert.Zero(t, s.K6.Checks.Fails)
	var byCase int64
	for _, c := range s.ByCase {
		byCase += c.Count
	}
	assert.Equal(t, s.Calls, byCase)
	_, err = summary.MergeHDR(s)
	assert.Error(t, err, "k6 keeps no histogram")
}
