//go:build browser

// The browser test opens the store's charts as store.md links them, each
// SVG file on its own, in a real headless Chromium with the network cut
// off (package charttest): `make browser-test`, and `make test` with
// -tags=browser.

package storebench

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/locklab/locklab/internal/lab/chart"
	"github.com/locklab/locklab/internal/lab/chart/charttest"
)

// TestStoreChartsRenderInBrowser: each chart of the sample's report parses
// as SVG in Chromium, holds its panels' titles and the designs' names as
// text, and draws its coloured lines. The control: the same grid of
// panels with no line on them draws no colour.
func TestStoreChartsRenderInBrowser(t *testing.T) {
	dir, _ := readSample(t)
	d := sampleData(t)
	for _, file := range []string{ChartFile, CPUChartFile} {
		t.Run(file, func(t *testing.T) {
			svg, err := os.ReadFile(filepath.Join(dir, file))
			require.NoError(t, err)
			texts := charttest.SVGTexts(t, file, svg)
			for _, design := range d.Designs {
				assert.Contains(t, texts, design)
			}
			assert.True(t, slices.ContainsFunc(texts, func(s string) bool { return strings.HasPrefix(s, opIncrement+", par=") }), "a panel's title")
			drawn := charttest.ColouredRows(charttest.Screenshot(t, file, svg, "1600,900"))
			// Each panel's lines, error bars and legend span most of its
			// 11 cm (about 415 px): a third of one panel is the floor.
			assert.Greater(t, drawn, 130, "the lines are drawn in colour")
		})
	}

	var empty []*plot.Plot
	for range 2 {
		p := plot.New()
		p.Title.Text = "no data"
		p.Add(plotter.NewGrid())
		empty = append(empty, p)
	}
	blank, err := chart.Grid(empty, 2, panelW, panelH)
	require.NoError(t, err)
	assert.Zero(t, charttest.ColouredRows(charttest.Screenshot(t, ChartFile, blank, "1600,900")))
}

// sampleData is the sample parsed as Write parses it.
func sampleData(t *testing.T) *Data {
	t.Helper()
	f, err := os.Open(samplePath)
	require.NoError(t, err)
	defer f.Close()
	d, err := parse(f, samplePath)
	require.NoError(t, err)
	return d
}
