package chart

import (
	"encoding/xml"
	"fmt"
	"image/color"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/locklab/locklab/internal/lab/paired"
)

// stroke is how the SVG canvas writes a line of colour c.
func stroke(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("stroke:#%02X%02X%02X", r>>8, g>>8, b>>8)
}

// parses checks that doc is one well-formed XML document with an svg root.
func parses(t *testing.T, doc []byte) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(string(doc)))
	root := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	assert.Equal(t, "svg", root)
}

// size is the width and height an SVG document declares.
func size(t *testing.T, doc []byte) (w, h float64) {
	t.Helper()
	m := regexp.MustCompile(`<svg width="([\d.]+)pt" height="([\d.]+)pt"`).FindSubmatch(doc)
	require.NotNil(t, m, "an SVG header")
	w, err := strconv.ParseFloat(string(m[1]), 64)
	require.NoError(t, err)
	h, err = strconv.ParseFloat(string(m[2]), 64)
	require.NoError(t, err)
	return w, h
}

func twoPoints() Points {
	var p Points
	p.Add(1, 10, 1, 2)
	p.Add(2, 20, 3, 4)
	return p
}

// TestLinesKeepTheirLookByIndex: a series is drawn in its index's colour
// whether or not the ones before it have points, an empty one is not
// drawn (its colour is absent), and the 8th on are dashed. The control is
// the same chart with the empty series filled: its colour appears.
func TestLinesKeepTheirLookByIndex(t *testing.T) {
	n := 8 // the palette once, and the first colour again, dashed
	draw := func(emptyAt int) ([]byte, int) {
		series := make([]Series, n)
		for i := range series {
			series[i].Name = fmt.Sprint("series ", i)
			if i != emptyAt {
				series[i].Points = twoPoints()
			}
		}
		p := plot.New()
		drawn, err := Lines(p, series)
		require.NoError(t, err)
		svg, err := SVG(p, Width, Height)
		require.NoError(t, err)
		parses(t, svg)
		return svg, drawn
	}
	svg, drawn := draw(1)
	assert.Equal(t, n-1, drawn)
	assert.Contains(t, string(svg), stroke(Colour(0)))
	assert.NotContains(t, string(svg), stroke(Colour(1)), "the empty series is not drawn")
	assert.Contains(t, string(svg), stroke(Colour(2)))
	assert.Contains(t, string(svg), "stroke-dasharray", "the 8th series on are dashed")
	assert.Equal(t, Colour(0), Colour(7), "the palette has 7 colours: dashes tell them apart")
	assert.NotEqual(t, Dashes(0), Dashes(7))

	control, drawn := draw(-1)
	assert.Equal(t, n, drawn)
	assert.Contains(t, string(control), stroke(Colour(1)))
}

func TestPointsAdd(t *testing.T) {
	p := twoPoints()
	assert.Equal(t, plotter.XYs{{X: 1, Y: 10}, {X: 2, Y: 20}}, p.XYs)
	low, high := p.YError(1)
	assert.Equal(t, []float64{3, 4}, []float64{low, high})
}

// TestCurvesNeedTwoPoints: a curve of one point is not a line.
func TestCurvesNeedTwoPoints(t *testing.T) {
	p := plot.New()
	drawn, err := Curves(p, []Curve{
		{Name: "one point", XYs: plotter.XYs{{X: 1, Y: 1}}},
		{Name: "a line", XYs: plotter.XYs{{X: 1, Y: 1}, {X: 10, Y: 2}}},
		{Name: "none"},
	})
	require.NoError(t, err)
	assert.Equal(t, 1, drawn)
	svg, err := SVG(p, Width, Height)
	require.NoError(t, err)
	assert.NotContains(t, string(svg), stroke(Colour(0)))
	assert.Contains(t, string(svg), stroke(Colour(1)))
}

func series(levels []float64, ys ...float64) Points {
	var s Points
	for i, y := range ys {
		s.Add(levels[i], y, 0, 0)
	}
	return s
}

// TestLegendCorner: the legend goes to the corner the curves leave empty.
func TestLegendCorner(t *testing.T) {
	ladder := []float64{10, 100, 200, 300, 500, 1000}
	cases := []struct {
		name      string
		series    []Points
		top, left bool
	}{
		// latency: low, then rising steeply at the right
		{"rising", []Points{series(ladder, 4, 30, 62, 83, 151, 319)}, true, true},
		// closed-model throughput: flat near the top, falling a little
		{"flat high", []Points{series(ladder, 9000, 9700, 9000, 9400, 8400, 7600)}, false, true},
		// open-model throughput: rising from bottom left to top right
		{"diagonal", []Points{series([]float64{1000, 3000, 6000}, 1000, 3000, 5900)}, true, true},
		// falling from top left to bottom right
		{"falling", []Points{series(ladder, 300, 250, 120, 60, 20, 5)}, true, false},
		{"no data", nil, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			top, left := LegendCorner(c.series, true)
			assert.Equal(t, c.top, top, "top")
			assert.Equal(t, c.left, left, "left")
		})
	}
}

func labels(ticks []plot.Tick) []string {
	var out []string
	for _, t := range ticks {
		out = append(out, t.Label)
	}
	return out
}

// TestTicks: exactly the given levels within the axis, and percentiles
// where PercentileX puts them.
func TestTicks(t *testing.T) {
	assert.Equal(t, []string{"10", "100"}, labels(LevelTicks{1, 10, 100, 1000}.Ticks(5, 500)))
	assert.Empty(t, LevelTicks{1, 2}.Ticks(5, 500))
	got := PercentileTicks{}.Ticks(1.5, 1500)
	assert.Equal(t, []string{"50%", "90%", "99%", "99.9%"}, labels(got))
	for _, tk := range got {
		pct, err := strconv.ParseFloat(strings.TrimSuffix(tk.Label, "%"), 64)
		require.NoError(t, err)
		assert.InDelta(t, PercentileX(pct), tk.Value, 1e-6*tk.Value, tk.Label)
	}
}

// TestGridLaysPanelsOut: the canvas is cols panels wide and as many rows
// tall as the plots need; a nil plot leaves its panel empty.
func TestGridLaysPanelsOut(t *testing.T) {
	panel := func() *plot.Plot {
		p := plot.New()
		_, err := Lines(p, []Series{{Name: "a", Points: twoPoints()}})
		require.NoError(t, err)
		return p
	}
	tests := []struct {
		name       string
		plots      []*plot.Plot
		cols       int
		wide, tall float64
	}{
		{"one row", []*plot.Plot{panel(), panel(), panel()}, 3, 3, 1},
		{"one column", []*plot.Plot{panel(), panel(), panel()}, 1, 1, 3},
		{"two rows, a gap", []*plot.Plot{panel(), nil, panel()}, 2, 2, 2},
	}
	pw, ph := Width.Points(), Height.Points()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svg, err := Grid(tt.plots, tt.cols, Width, Height)
			require.NoError(t, err)
			parses(t, svg)
			w, h := size(t, svg)
			assert.InDelta(t, tt.wide*pw, w, 0.1)
			assert.InDelta(t, tt.tall*ph, h, 0.1)
		})
	}
}

func TestForest(t *testing.T) {
	fo := Forest{Title: "effects", XLabel: "effect (%)", Margin: 0.03, Rows: []ForestRow{
		{Label: "a difference", Ratio: 1.2, Lo: 1.1, Hi: 1.3, Drawn: true, Outcome: paired.OutcomeDetected},
		{Label: "the same", Ratio: 1.0, Lo: 0.99, Hi: 1.01, Drawn: true, Outcome: paired.OutcomeEquivalent},
		{Label: "neither", Ratio: 1.0, Lo: 0.9, Hi: 1.1, Drawn: true, Outcome: paired.OutcomeNotShown},
		{Label: "withheld"},
	}}
	svg, err := fo.SVG()
	require.NoError(t, err)
	parses(t, svg)
	for _, r := range fo.Rows {
		assert.Contains(t, string(svg), ">"+r.Label+"<")
		if r.Drawn {
			assert.Contains(t, string(svg), stroke(OutcomeColour(r.Outcome)), r.Label)
		}
	}
	assert.Contains(t, string(svg), "stroke-dasharray", "the margin's dashed lines")
	assert.NotEqual(t, OutcomeColour(paired.OutcomeDetected), OutcomeColour(paired.OutcomeEquivalent))
	assert.NotEqual(t, OutcomeColour(paired.OutcomeDetected), OutcomeColour(paired.OutcomeNotShown))

	// The control: nothing drawn, no colour; no margin, no dashes.
	for i := range fo.Rows {
		fo.Rows[i].Drawn = false
	}
	fo.Margin = 0
	blank, err := fo.SVG()
	require.NoError(t, err)
	for _, r := range fo.Rows[:3] {
		assert.NotContains(t, string(blank), stroke(OutcomeColour(r.Outcome)))
	}
	assert.NotContains(t, string(blank), "stroke-dasharray")

	none, err := Forest{Title: "nothing"}.SVG()
	require.NoError(t, err)
	assert.Nil(t, none)
}
