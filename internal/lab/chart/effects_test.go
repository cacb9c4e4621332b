package chart

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/plotutil"
)

// TestEffects: every row keeps its label, a drawn row is a mark in the
// series' colour, and no effect is a dashed line; the control, no row
// drawn, has the labels and the line but no mark.
func TestEffects(t *testing.T) {
	ec := Effects{Title: "effects on calls/s", XLabel: "calls/s: effect (%)", Rows: []EffectRow{
		{Label: "inputQ vs mutex", Ratio: 0.8, Lo: 0.74, Hi: 0.86, Drawn: true},
		{Label: "rwmutex vs mutex", Ratio: 1.01, Lo: 0.99, Hi: 1.03, Drawn: true},
		{Label: "withheld"},
	}}
	svg, err := ec.SVG()
	require.NoError(t, err)
	parses(t, svg)
	for _, r := range ec.Rows {
		assert.Contains(t, string(svg), ">"+r.Label+"<")
	}
	assert.Contains(t, string(svg), stroke(plotutil.Color(0)), "the drawn rows' marks")
	assert.Contains(t, string(svg), "stroke-dasharray", "the line at no effect")

	for i := range ec.Rows {
		ec.Rows[i].Drawn = false
	}
	blank, err := ec.SVG()
	require.NoError(t, err)
	parses(t, blank)
	assert.Contains(t, string(blank), ">withheld<")
	assert.NotContains(t, string(blank), stroke(plotutil.Color(0)), "the control: nothing drawn, no mark")
	assert.Contains(t, string(blank), "stroke-dasharray")
}
