package chart

import (
	"bytes"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Width and Height are a report chart's size: two fit side by side on a
// report.html page.
const (
	Width  = 16 * vg.Centimeter
	Height = 9 * vg.Centimeter
)

// SVG draws p on a w×h SVG canvas and returns the document.
func SVG(p *plot.Plot, w, h vg.Length) ([]byte, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	return encode(c)
}

// Grid lays plots out in rows of cols panels, each w×h, their axes
// aligned across the grid, and returns the SVG document. A nil plot leaves
// its panel empty.
func Grid(plots []*plot.Plot, cols int, w, h vg.Length) ([]byte, error) {
	cols = max(1, cols)
	rows := (len(plots) + cols - 1) / cols
	c := vgsvg.New(w*vg.Length(cols), h*vg.Length(max(1, rows)))
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Centimeter, PadY: vg.Centimeter, PadTop: 2 * vg.Millimeter,
		PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 2 * vg.Millimeter}
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
		for j := range grid[i] {
			if n := i*cols + j; n < len(plots) {
				grid[i][j] = plots[n]
			}
		}
	}
	for i, row := range plot.Align(grid, tiles, dc) {
		for j, cv := range row {
			if grid[i][j] != nil {
				grid[i][j].Draw(cv)
			}
		}
	}
	return encode(c)
}

func encode(c *vgsvg.Canvas) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
