package report

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -update rewrites the golden files from what the code renders now; read
// the diff before committing it.
var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// charts are the chart images in a page: their bytes are gonum/plot's, so
// the golden page keeps where they are and their titles, not their pixels.
var charts = regexp.MustCompile(`src="data:image/svg&#43;xml;base64,[^"]*"`)

// TestReportGolden renders the report of testdata/results — real run
// records of a `make compare`, a few of each driver — and compares it, the
// Markdown and the HTML with its charts elided, with testdata/*.golden.
func TestReportGolden(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS("testdata/results")))
	require.NoError(t, Rerender(dir, new(strings.Builder)))
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	require.NoError(t, err)
	assert.Positive(t, len(charts.FindAll(page, -1)), "the page has charts")
	page = charts.ReplaceAll(page, []byte(`src="(chart)"`))

	forest, err := os.ReadFile(filepath.Join(dir, ForestFile))
	require.NoError(t, err)

	for name, got := range map[string][]byte{"report.md.golden": md, "report.html.golden": page, "results.forest.svg.golden": forest} {
		path := filepath.Join("testdata", name)
		if *update {
			require.NoError(t, os.WriteFile(path, got, 0o644))
			continue
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run go test -run Golden -update once to create it")
		assert.Equal(t, string(want), string(got), "%s differs: if the change is meant, go test ./internal/lab/report -run Golden -update", name)
	}
}

// TestReportGoldenCatchesAChange is the golden test's control: a record
// changed by one call renders a different report.
func TestReportGoldenCatchesAChange(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS("testdata/results")))
	path := filepath.Join(dir, "runs", "001-counter-go-mutex-vus10-rep1.json")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	changed := regexp.MustCompile(`"calls_per_s": [0-9.e+]+`).ReplaceAll(b, []byte(`"calls_per_s": 1`))
	require.NotEqual(t, b, changed)
	require.NoError(t, os.WriteFile(path, changed, 0o644))
	require.NoError(t, Rerender(dir, new(strings.Builder)))
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join("testdata", "report.md.golden"))
	require.NoError(t, err)
	assert.NotEqual(t, string(want), string(md))
}
