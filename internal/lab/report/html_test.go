package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"gonum.org/v1/plot/plotter"
)

func series(levels []float64, ys ...float64) errPoints {
	var s errPoints
	for i, y := range ys {
		s.XYs = append(s.XYs, plotter.XY{X: levels[i], Y: y})
		s.YErrors = append(s.YErrors, struct{ Low, High float64 }{0, 0})
	}
	return s
}

// TestLegendCorner: the legend goes to the corner the curves leave empty.
func TestLegendCorner(t *testing.T) {
	ladder := []float64{10, 100, 200, 300, 500, 1000}
	cases := []struct {
		name      string
		series    []errPoints
		top, left bool
	}{
		// latency: low, then rising steeply at the right
		{"rising", []errPoints{series(ladder, 4, 30, 62, 83, 151, 319)}, true, true},
		// closed-model throughput: flat near the top, falling a little
		{"flat high", []errPoints{series(ladder, 9000, 9700, 9000, 9400, 8400, 7600)}, false, true},
		// open-model throughput: rising from bottom left to top right
		{"diagonal", []errPoints{series([]float64{1000, 3000, 6000}, 1000, 3000, 5900)}, true, true},
		// falling from top left to bottom right
		{"falling", []errPoints{series(ladder, 300, 250, 120, 60, 20, 5)}, true, false},
		{"no data", nil, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			top, left := legendCorner(c.series, true)
			assert.Equal(t, c.top, top, "top")
			assert.Equal(t, c.left, left, "left")
		})
	}
}
