package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/record"
)

// writeRuns writes runs into a results directory, after changing each one.
func writeRuns(t *testing.T, change func(r *record.Run)) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "runs"), 0o755))
	for _, r := range fakeRuns(t) {
		change(r)
		require.NoError(t, record.WriteJSON(filepath.Join(dir, "runs", r.ID+".json"), r))
	}
	return dir
}

func TestDiff(t *testing.T) {
	old := writeRuns(t, func(*record.Run) {})
	same := writeRuns(t, func(r *record.Run) { r.Result.CallsPerS *= 1.05 })
	drifted := writeRuns(t, func(r *record.Run) {
		if r.Mode == "inputQ" && r.Level == 100 {
			r.Result.CallsPerS *= 1.3
		}
		if r.Mode == "noop" {
			r.DriverProc.CPUSeconds = 9.5 // of 10 s: load-bound
		}
	})

	var out strings.Builder
	require.NoError(t, Diff(old+","+same, &out))
	assert.Contains(t, out.String(), "| counter | go | work 0s, durability none, skew 0, read ratio default, server CPUs half, attribution off | 100 callers | mutex | 5,200 → 5,460 | +5.0% |")
	assert.Contains(t, out.String(), "within 10%: 6 of 6 groups; of the 6 groups load-bound in neither directory, 6.")
	assert.NotContains(t, out.String(), "NOT reproduced")

	out.Reset()
	require.NoError(t, Diff(old+","+drifted, &out))
	assert.Contains(t, out.String(), "| 100 callers | inputQ | 5,100 → 6,630 | +30.0% |")
	assert.Contains(t, out.String(), "NOT reproduced |")
	assert.Contains(t, out.String(), "reproduced (load-bound: measured the driver) |")
	assert.Contains(t, out.String(), "within 10%: 5 of 6 groups; of the 4 groups load-bound in neither directory, 3.")

	for _, bad := range []string{old, old + ",", "," + old, old + "," + t.TempDir()} {
		assert.Error(t, Diff(bad, &out), bad)
	}
}
