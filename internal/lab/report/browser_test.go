//go:build browser

// The browser test opens report.html in a real headless Chromium with the
// network cut off and checks that the charts are drawn. It needs Chromium
// (`make deb-chromium` installs Debian's), so it has its own build tag and its own
// make target, `make browser-test`; `make test` runs it inside its race tests
// (-tags=browser, scripts/test.sh). Plain `go test ./...` works without a browser.

package report

import (
	"image"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/chart/charttest"
)

// screenshot renders page in headless Chromium and decodes the PNG.
func screenshot(t *testing.T, page string) image.Image {
	t.Helper()
	return charttest.Screenshot(t, "report.html", []byte(page), "1400,5000")
}

func TestReportHTMLDrawsChartsInBrowserOffline(t *testing.T) {
	rep := mustNew(t, fakeMeta(), fakeRuns(t))
	page, err := rep.HTML()
	require.NoError(t, err)

	drawn := charttest.ColouredRows(screenshot(t, page))

	// The control: the same page with its chart data broken shows only
	// Chromium's small broken-image icons (a few coloured rows each), or the
	// count above would not prove the charts were drawn.
	broken := regexp.MustCompile(`data:image/svg&#43;xml;base64,[A-Za-z0-9&#;/=]+`).
		ReplaceAllString(page, "data:image/svg+xml;base64,AAAA")
	require.NotEqual(t, page, broken)
	none := charttest.ColouredRows(screenshot(t, broken))

	// Seven charts of 9 cm each, two to a row at this width: several hundred
	// pixel rows carry their coloured lines and legends.
	assert.Less(t, none, 80, "a page whose charts cannot be decoded shows almost no colour")
	assert.Greater(t, drawn, 300, "the charts are drawn with their coloured lines")
}

// TestForestSVGRendersInBrowser opens a forest.svg, as report.md links it,
// in Chromium on its own: the document parses as SVG, holds the title and
// every row's label as text, and draws its coloured points and bars. The
// control: the same plot with every row withheld draws no colour.
func TestForestSVGRendersInBrowser(t *testing.T) {
	rep := forestReport()
	svg, err := rep.Forest()
	require.NoError(t, err)

	got := charttest.SVGTexts(t, ForestFile, svg)
	assert.Contains(t, got, rep.forestTitle())
	for _, f := range rep.forestRows() {
		assert.Contains(t, got, rep.forestLabel(f))
	}

	drawn := charttest.ColouredRows(charttest.Screenshot(t, ForestFile, svg, "1200,400"))
	for i := range rep.Findings {
		rep.Findings[i].Withheld = "withheld for the control"
	}
	blank, err := rep.Forest()
	require.NoError(t, err)
	none := charttest.ColouredRows(charttest.Screenshot(t, ForestFile, blank, "1200,400"))
	assert.Zero(t, none, "a plot with nothing drawn on it has no colour")
	// Six rows with an interval, each a point and its bar about seven
	// pixel rows tall at this size (41 rows when written): half of that is
	// the floor.
	assert.Greater(t, drawn, 20, "the points and their intervals are drawn in colour")
}

// TestCommittedPicturesRenderInBrowser opens every picture a committed
// results page links (docs/results/**/*.md) in Chromium on its own: each is
// there, parses whole as SVG, and a forest plot carries the title its link
// gives as text. Every report.md links one. The control: the same picture
// cut short does not parse.
func TestCommittedPicturesRenderInBrowser(t *testing.T) {
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	results := filepath.Join(root, "docs", "results")
	link := regexp.MustCompile(`!\[([^\]]*)\]\(([^)\s]+\.svg)\)`)
	var pages, pictures int
	var first []byte
	require.NoError(t, filepath.WalkDir(results, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		md, err := os.ReadFile(path)
		require.NoError(t, err)
		links := link.FindAllStringSubmatch(string(md), -1)
		if d.Name() == "report.md" {
			pages++
			assert.NotEmpty(t, links, "%s links no picture", path)
		}
		for _, m := range links {
			svg, err := os.ReadFile(filepath.Join(filepath.Dir(path), m[2]))
			if !assert.NoError(t, err, "%s links %s", path, m[2]) {
				continue
			}
			pictures++
			texts := charttest.SVGTexts(t, filepath.Base(m[2]), svg)
			if filepath.Base(m[2]) == ForestFile {
				assert.Contains(t, texts, m[1], "%s: the plot's title is its link's", path)
			}
			if first == nil {
				first = svg
			}
		}
		return nil
	}))
	require.Positive(t, pages)
	require.NotNil(t, first)
	t.Logf("%d pictures of %d report.md pages and the other pages rendered", pictures, pages)

	dir := t.TempDir()
	file := filepath.Join(dir, "cut.svg")
	require.NoError(t, os.WriteFile(file, first[:len(first)/2], 0o644))
	dom := string(charttest.Run(t, dir, file, "--dump-dom"))
	assert.True(t, !strings.Contains(dom, "<svg") || strings.Contains(dom, "parsererror"), "a picture cut short does not parse")
}
