package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeRuns writes runs into a results directory, after changing each one.
func writeRuns(t *testing.T, change func(r *RunRecord)) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "runs"), 0o755))
	for _, r := range fakeRuns(t) {
		change(r)
		require.NoError(t, writeJSON(filepath.Join(dir, "runs", r.ID+".json"), r))
	}
	return dir
}

func TestDiff(t *testing.T) {
	old := writeRuns(t, func(*RunRecord) {})
	same := writeRuns(t, func(r *RunRecord) { r.Derived.RequestsPerSec *= 1.05 })
	drifted := writeRuns(t, func(r *RunRecord) {
		if r.Mode == "inputQ" && r.Level == 100 {
			r.Derived.RequestsPerSec *= 1.3
		}
		if r.Mode == "noop" {
			r.Derived.K6Saturated = true
		}
	})

	var out strings.Builder
	require.NoError(t, run(t.Context(), Config{Diff: old + "," + same}, &out))
	assert.Contains(t, out.String(), "| counter | 100 VUs | mutex | 5,200 → 5,460 | +5.0% |")
	assert.Contains(t, out.String(), "within 10%: 6 of 6 groups; of the 6 groups k6 saturated in neither run, 6.")
	assert.NotContains(t, out.String(), "NOT reproduced")

	out.Reset()
	require.NoError(t, run(t.Context(), Config{Diff: old + "," + drifted}, &out))
	assert.Contains(t, out.String(), "| counter | 100 VUs | inputQ | 5,100 → 6,630 | +30.0% |")
	assert.Contains(t, out.String(), "NOT reproduced |")
	assert.Contains(t, out.String(), "reproduced (k6-saturated: measured k6) |")
	assert.Contains(t, out.String(), "within 10%: 5 of 6 groups; of the 4 groups k6 saturated in neither run, 3.")

	for _, bad := range []string{old, old + ",", "," + old, old + "," + t.TempDir()} {
		assert.Error(t, run(t.Context(), Config{Diff: bad}, &out), bad)
	}
}
