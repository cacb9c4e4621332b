package repro

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is the report's golden results folder: real run records.
const fixture = "../report/testdata/results"

// folder writes the fixture's runs into a new results folder, after
// changing each one; packed, as the runs.tar.gz -pack leaves.
func folder(t *testing.T, change func(r *record.Run), packed bool) string {
	t.Helper()
	src, err := record.Open(fixture)
	require.NoError(t, err)
	runs, err := record.Load(src)
	require.NoError(t, err)
	require.NotEmpty(t, runs)
	dir := t.TempDir()
	files := map[string][]byte{}
	for _, r := range runs {
		change(r)
		b, err := record.JSON(r)
		require.NoError(t, err)
		files[filepath.Join(record.RunsDir, r.ID+".json")] = b
	}
	if packed {
		tree, err := record.MemFS(files)
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, record.WriteArchive(&b, tree))
		require.NoError(t, os.WriteFile(filepath.Join(dir, record.RunsArchive), b.Bytes(), 0o644))
		return dir
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, record.RunsDir), 0o755))
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	return dir
}

func TestDiff(t *testing.T) {
	old := folder(t, func(*record.Run) {}, false)
	same := folder(t, func(r *record.Run) { r.Result.CallsPerS *= 1.05 }, true)
	drifted := folder(t, func(r *record.Run) {
		if r.Mode == "inputQ" && r.Workload == "counter" && r.Driver == "go" {
			r.Result.CallsPerS *= 1.3
		}
		if r.Mode == "noop" {
			r.DriverProc.CPUSeconds = r.DriverProc.WallSeconds * 0.95 // load-bound
		}
	}, false)

	var out strings.Builder
	require.NoError(t, Diff(old+","+same, &out), "a packed folder reads as runs/ does")
	assert.Contains(t, out.String(), "| 10 callers | mutex | 29,059 → 30,512 | +5.0% | 1.14ms → 1.14ms | +0.0% | 0/2, 0/2 | reproduced |")
	assert.Contains(t, out.String(), "within 10%: 9 of 9 groups; of the 9 groups load-bound in neither directory, 9.")
	assert.NotContains(t, out.String(), "NOT reproduced")

	out.Reset()
	require.NoError(t, Diff(old+","+drifted, &out))
	assert.Contains(t, out.String(), "| 10 callers | inputQ | 24,991 → 32,488 | +30.0% | 1.45ms → 1.45ms | +0.0% | 0/2, 0/2 | NOT reproduced |")
	assert.Contains(t, out.String(), "| 0/2, 2/2 | reproduced (load-bound: measured the driver) |")
	assert.Contains(t, out.String(), "within 10%: 8 of 9 groups; of the 6 groups load-bound in neither directory, 5.")

	for _, bad := range []string{old, old + ",", "," + old, old + "," + t.TempDir()} {
		out.Reset()
		assert.Error(t, Diff(bad, &out), bad)
		assert.Empty(t, out.String(), "a refused -diff prints nothing")
	}
}

// TestDiffColumnsAreTheCatalogues: a metric the catalogue marks for -diff
// is a column, with no other edit; the control, the same metric unmarked,
// is none.
func TestDiffColumnsAreTheCatalogues(t *testing.T) {
	dir := folder(t, func(*record.Run) {}, false)
	busy := &report.Metric{Key: "test_busy_us_per_call", Label: "serial busy per call", Unit: report.UnitUs, Diff: "busy",
		Read: func(r *record.Run) (float64, error) { return r.Derived.ServerCPUPerCallUs / 2, nil }}
	saved := report.Catalogue
	t.Cleanup(func() { report.Catalogue = saved })
	for _, marked := range []bool{true, false} {
		m := *busy
		if !marked {
			m.Diff = ""
		}
		report.Catalogue = append(slices.Clip(saved), &m)
		var out strings.Builder
		require.NoError(t, Diff(dir+","+dir, &out))
		if marked {
			assert.Contains(t, out.String(), "| busy old → new | Δ |")
		} else {
			assert.NotContains(t, out.String(), "busy old → new", "the control")
		}
	}
}
