package record

import (
	"encoding/json"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/locklab/locklab/internal/lab/plan"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

// histogramRun is a run whose result has a latency histogram and the
// curve drawn from it, as every driver but k6 writes them.
func histogramRun(t *testing.T) *Run {
	t.Helper()
	h := summary.NewHistogram()
	for v := int64(100); v < 50000; v += v/7 + 1 {
		require.NoError(t, h.RecordValues(v, v%13+1))
	}
	enc, err := summary.EncodeHDR(h)
	require.NoError(t, err)
	stats, err := protojson.Marshal(&locklabv1.GetStatsResponse{WindowSeconds: 1, CpuSeconds: 0.5, Requests: 100})
	require.NoError(t, err)
	return &Run{Spec: plan.Spec{ID: "001-a", Index: 1}, Stats: stats,
		Result: &summary.Summary{Calls: 100, DurationS: 1, HDR: enc, Percentiles: summary.PercentilesOf(h)}}
}

// resultField is one field of a record's "result", as written.
func resultField(t *testing.T, b []byte, key string) json.RawMessage {
	t.Helper()
	var rec struct{ Result map[string]json.RawMessage }
	require.NoError(t, json.Unmarshal(b, &rec))
	return rec.Result[key]
}

// TestRecordKeepsHistogramOnce: a record is written with its histogram and
// without the curve drawn from it, and Load draws the same curve again.
func TestRecordKeepsHistogramOnce(t *testing.T) {
	r := histogramRun(t)
	want := r.Result.Percentiles
	require.NotEmpty(t, want)
	b, err := JSON(r)
	require.NoError(t, err)
	assert.JSONEq(t, "null", string(resultField(t, b, "percentiles")), "the curve is left out")
	assert.NotEmpty(t, resultField(t, b, "hdr"), "the histogram is kept")
	assert.Equal(t, want, r.Result.Percentiles, "writing changes nothing of the run")

	runs, err := Load(fstest.MapFS{"runs/001-a.json": {Data: b}})
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, want, runs[0].Result.Percentiles, "Load draws the curve again")
}

// TestRecordKeepsCurveWithoutHistogram is the control: a result with no
// histogram (k6's) keeps its curve, the only copy, and an old record with
// both reads as it was written.
func TestRecordKeepsCurveWithoutHistogram(t *testing.T) {
	r := histogramRun(t)
	curve := r.Result.Percentiles
	r.Result.HDR = ""
	b, err := JSON(r)
	require.NoError(t, err)
	assert.NotEqual(t, "null", string(resultField(t, b, "percentiles")))

	old := histogramRun(t)
	type plain Run // an old record: written with both
	b, err = json.Marshal(plain(*old))
	require.NoError(t, err)
	require.NotEqual(t, "null", string(resultField(t, b, "percentiles")))
	runs, err := Load(fstest.MapFS{"runs/001-a.json": {Data: b}})
	require.NoError(t, err)
	assert.Equal(t, curve, runs[0].Result.Percentiles)
}

// TestRecordBadHistogram: a record whose histogram does not decode is
// refused, with its path.
func TestRecordBadHistogram(t *testing.T) {
	r := histogramRun(t)
	r.Result.HDR = "not a histogram"
	b, err := JSON(r)
	require.NoError(t, err)
	_, err = Load(fstest.MapFS{"runs/001-a.json": {Data: b}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "runs/001-a.json")
}
