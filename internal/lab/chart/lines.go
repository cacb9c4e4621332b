package chart

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Points are points with vertical error bars, for plotter.YErrorBars.
type Points struct {
	plotter.XYs
	plotter.YErrors
}

// Add appends the point (x, y) with its bar from y-below to y+above.
func (p *Points) Add(x, y, below, above float64) {
	p.XYs = append(p.XYs, plotter.XY{X: x, Y: y})
	p.YErrors = append(p.YErrors, struct{ Low, High float64 }{below, above})
}

// Series is one line of a chart: its legend entry and its points.
type Series struct {
	Name string
	Points
}

// Colour is the i-th series' colour. The palette has 7, so Dashes tells
// the 8th on from the first seven.
func Colour(i int) color.Color { return plotutil.Color(i) }

// Dashes is the i-th series' line style: solid for the palette's first
// round, dashed after.
func Dashes(i int) []vg.Length { return plotutil.Dashes(i / len(plotutil.DefaultColors)) }

// Lines adds every series with points to p as a line through its points
// with their error bars, in the look of its index (Colour, Dashes and
// plotutil's shape), so that a series keeps its look across panels when
// the caller keeps the empty ones in place. It returns how many it drew.
func Lines(p *plot.Plot, series []Series) (int, error) {
	drawn := 0
	for i, s := range series {
		if len(s.XYs) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(s.XYs)
		if err != nil {
			return drawn, err
		}
		c := Colour(i)
		line.Color, points.Color = c, c
		line.Dashes = Dashes(i)
		points.Shape = plotutil.Shape(i)
		bars, err := plotter.NewYErrorBars(s.Points)
		if err != nil {
			return drawn, err
		}
		bars.Color = c
		p.Add(line, points, bars)
		p.Legend.Add(s.Name, line, points)
		drawn++
	}
	return drawn, nil
}

// Curve is one line without points: a latency curve.
type Curve struct {
	Name string
	XYs  plotter.XYs
}

// Curves adds every curve of two points or more to p, in its index's
// colour, and returns how many it drew.
func Curves(p *plot.Plot, curves []Curve) (int, error) {
	drawn := 0
	for i, c := range curves {
		if len(c.XYs) < 2 {
			continue
		}
		line, err := plotter.NewLine(c.XYs)
		if err != nil {
			return drawn, err
		}
		line.Color = Colour(i)
		line.Dashes = Dashes(i)
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(c.Name, line)
		drawn++
	}
	return drawn, nil
}

// LegendCorner picks the corner of a chart (y from 0 to the highest error
// bar) that holds the fewest points and error-bar ends, preferring top
// left, then top right, bottom left, bottom right when they tie. logX
// measures x on a log scale, as the chart draws it.
func LegendCorner(series []Points, logX bool) (top, left bool) {
	type pt struct{ x, y float64 }
	var pts []pt
	xMin, xMax, yMax := math.Inf(1), math.Inf(-1), 0.0
	for _, s := range series {
		for i, xy := range s.XYs {
			x := xy.X
			if logX {
				x = math.Log(x)
			}
			lo, hi := xy.Y-s.YErrors[i].Low, xy.Y+s.YErrors[i].High
			pts = append(pts, pt{x, xy.Y}, pt{x, lo}, pt{x, hi})
			xMin, xMax, yMax = min(xMin, x), max(xMax, x), max(yMax, hi)
		}
	}
	corners := []struct{ top, left bool }{{true, true}, {true, false}, {false, true}, {false, false}}
	best, bestN := 0, math.MaxInt
	for c, corner := range corners {
		n := 0
		for _, q := range pts {
			fx, fy := 0.5, 0.5
			if xMax > xMin {
				fx = (q.x - xMin) / (xMax - xMin)
			}
			if yMax > 0 {
				fy = q.y / yMax
			}
			inX := (corner.left && fx <= 0.4) || (!corner.left && fx >= 0.6)
			inY := (corner.top && fy >= 0.7) || (!corner.top && fy <= 0.3)
			if inX && inY {
				n++
			}
		}
		if n < bestN {
			best, bestN = c, n
		}
	}
	return corners[best].top, corners[best].left
}
