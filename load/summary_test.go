package load_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/load"
)

// summaryOf builds a consistent summary around a histogram of the given
// latencies.
func summaryOf(t *testing.T, latencies ...time.Duration) *load.Summary {
	t.Helper()
	h := load.NewHistogram()
	for _, d := range latencies {
		require.NoError(t, h.RecordValue(d.Microseconds()))
	}
	hdr, err := load.EncodeHDR(h)
	require.NoError(t, err)
	n := int64(len(latencies))
	return &load.Summary{
		Schema: load.SummarySchema, Driver: "go", DriverVersion: "test", Workload: "bank", Scenario: "B",
		Mix: "transfer:1", Model: "open", Callers: 4, Conns: 2, Rate: 100, Skew: 0.99, ReadRatio: -1,
		DurationS: 1, Calls: n, CallsPerS: float64(n), OK: n - 1, ExpectedRefusals: 1,
		ByCode:    map[string]int64{"OK": n - 1, "FAILED_PRECONDITION": 1},
		ByCase:    map[string]load.CaseStats{"transfer": {Count: n, P50Ms: 1, P99Ms: 2}},
		LatencyMs: load.LatencyOf(h), Percentiles: load.PercentilesOf(h), HDR: hdr,
		AckedTransfers: n - 1, Dropped: 3, Late: 2,
	}
}

func TestSummaryRoundTrip(t *testing.T) {
	want := summaryOf(t, time.Millisecond, 2*time.Millisecond, 40*time.Millisecond)
	path := filepath.Join(t.TempDir(), "s.json")
	require.NoError(t, want.WriteFile(path))
	got, err := load.ReadSummary(path)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	h, err := load.DecodeHDR(got.HDR)
	require.NoError(t, err)
	assert.Equal(t, int64(3), h.TotalCount())
	assert.InDelta(t, 40, got.LatencyMs.Max, 0.1)
	last := got.Percentiles[len(got.Percentiles)-1]
	assert.Equal(t, [2]float64{100, got.LatencyMs.Max}, last, "the curve ends at the maximum")
}

func TestMergeHDR(t *testing.T) {
	a := summaryOf(t, time.Millisecond, time.Millisecond)
	b := summaryOf(t, 10*time.Millisecond)
	h, err := load.MergeHDR(a, b)
	require.NoError(t, err)
	assert.Equal(t, int64(3), h.TotalCount())
	assert.InDelta(t, 10, load.LatencyOf(h).Max, 0.01)
	assert.InDelta(t, 1, load.LatencyOf(h).P50, 0.01)

	// A summary without a histogram (k6's) cannot be merged: its calls
	// would silently be missing from the curve.
	b.HDR = ""
	_, err = load.MergeHDR(a, b)
	assert.Error(t, err)
	b.HDR = "bm90IGEgaGlzdG9ncmFt"
	_, err = load.MergeHDR(a, b)
	assert.Error(t, err)
}

func TestParseSummaryRejects(t *testing.T) {
	good := summaryOf(t, time.Millisecond)
	tests := []struct {
		name  string
		spoil func(s *load.Summary)
	}{
		{"unknown schema", func(s *load.Summary) { s.Schema = "locklab.load-summary/v2" }},
		{"calls do not add up", func(s *load.Summary) { s.Calls++ }},
		{"no model", func(s *load.Summary) { s.Model = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := *good
			tt.spoil(&s)
			var b bytes.Buffer
			require.NoError(t, s.Write(&b))
			_, err := load.ParseSummary(b.Bytes())
			assert.Error(t, err)
		})
	}
	_, err := load.ParseSummary([]byte(`{"schema": 3}`))
	assert.Error(t, err)
}

// TestReadOldK6Summary reads first-wave k6 summaries (copied from
// docs/results) and checks every converted field against the document.
func TestReadOldK6Summary(t *testing.T) {
	for _, name := range []string{"k6-bank-closed.k6.json", "k6-counter-open.k6.json"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", name)
			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			var k load.K6Summary
			require.NoError(t, json.Unmarshal(raw, &k))
			require.Equal(t, load.K6SummarySchema, k.Schema)

			s, err := load.ReadSummary(path)
			require.NoError(t, err)
			assert.Equal(t, load.SummarySchema, s.Schema)
			assert.Equal(t, "k6", s.Driver)
			assert.Equal(t, k.Script, s.Workload)
			assert.Equal(t, k.Config.Model, s.Model)
			assert.Equal(t, k.Config.VUs, s.Callers)
			assert.Equal(t, int64(k.GRPCReqDuration.All.Count), s.Calls)
			assert.Positive(t, s.Calls)
			assert.Equal(t, s.Calls, s.OK+s.ExpectedRefusals+s.UnexpectedErrors)
			assert.InDelta(t, 10, s.DurationS, 1e-9) // both ran "10s"
			assert.InDelta(t, float64(s.Calls)/s.DurationS, s.CallsPerS, 1e-9)
			assert.Equal(t, k.GRPCReqDuration.All.P99, s.LatencyMs.P99)
			assert.Equal(t, k.GRPCReqDuration.All.Med, s.LatencyMs.P50)
			assert.Equal(t, int64(k.AckedIncrementDelta), s.AckedIncrementDelta)
			assert.Equal(t, int64(k.DroppedIterations), s.Dropped)
			assert.Len(t, s.ByCase, len(k.GRPCReqDuration.ByCase))
			for c, tr := range k.GRPCReqDuration.ByCase {
				assert.Equal(t, int64(tr.Count), s.ByCase[c].Count, c)
			}
			if k.Script == "bank" {
				assert.Equal(t, *k.Config.Scenario, s.Scenario)
				assert.NotEmpty(t, s.Mix)
			} else {
				assert.Empty(t, s.Scenario)
			}
			if k.Config.Model == "open" {
				assert.Equal(t, *k.Config.Rate, s.Rate)
			}
			assert.Empty(t, s.HDR, "k6 kept no histogram")
		})
	}
}

// A wrong answer was a failed check but not an unexpected error in the old
// schema; converted, it is one.
func TestOldK6FailedChecksAreUnexpected(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "k6-bank-closed.k6.json"))
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(raw, &doc))
	doc["checks"].(map[string]any)["fails"] = 7
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	s, err := load.ParseSummary(b)
	require.NoError(t, err)
	assert.Equal(t, int64(7), s.UnexpectedErrors)
	assert.Equal(t, s.Calls-7-s.ExpectedRefusals, s.OK)
}

// TestReadK6Summary reads what k6/lib/summary.js writes now (a copy of a
// `make e2e` output): the same schema as the Go driver, plus k6's own part.
func TestReadK6Summary(t *testing.T) {
	s, err := load.ReadSummary(filepath.Join("testdata", "k6-bank-B.load.json"))
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
	_, err = load.MergeHDR(s)
	assert.Error(t, err, "k6 keeps no histogram")
}
