package storebench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/locklab/locklab/internal/lab/chart"
)

// TestColoursLeavesGreysOut is the control of TestReportChart's colour
// count: a panel with its axes, grid and title but no line has none.
func TestColoursLeavesGreysOut(t *testing.T) {
	p := plot.New()
	p.Title.Text = "empty"
	p.Add(plotter.NewGrid())
	svg, err := chart.Grid([]*plot.Plot{p, p}, 2, panelW, panelH)
	require.NoError(t, err)
	assert.Zero(t, colours(svg))
}
