package main

import (
	"bytes"
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// chartOps are the panels of the critical-section chart: the ops the
// targets are about.
var chartOps = []string{opIncrement, opTransfer}

// errPoints are points with vertical error bars, for plotter.YErrorBars.
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

// csChart draws ns/op (log scale) against the critical-section length, one
// line per design, one panel per op of chartOps, at par=targetPar and the
// highest -cpu; the error bars are the 95% intervals where the run had
// enough samples for one. It returns nil if no panel has data.
func csChart(d *Data) ([]byte, error) {
	var plots []*plot.Plot
	for _, op := range chartOps {
		p, err := csPanel(d, op)
		if err != nil {
			return nil, err
		}
		if p != nil {
			plots = append(plots, p)
		}
	}
	if len(plots) == 0 {
		return nil, nil
	}
	const panelW, h = 13 * vg.Centimeter, 11 * vg.Centimeter
	c := vgimg.NewWith(vgimg.UseWH(panelW*vg.Length(len(plots)), h), vgimg.UseDPI(110))
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Centimeter, PadTop: 2 * vg.Millimeter,
		PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 2 * vg.Millimeter}
	for i, cv := range plot.Align([][]*plot.Plot{plots}, tiles, dc)[0] {
		plots[i].Draw(cv)
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func csPanel(d *Data, op string) (*plot.Plot, error) {
	works := d.worksOf(op)
	if len(works) == 0 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s, par=%d, -cpu %d", op, targetPar, d.MaxCPU())
	p.X.Label.Text = "critical-section work per command"
	p.Y.Label.Text = "ns/op (median, 95% CI)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	// The lengths are 0, 1µs, 10µs: evenly spaced, labelled, since 0 has
	// no place on a log axis.
	var ticks plot.ConstantTicks
	for i, w := range works {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: w.String()})
	}
	p.X.Tick.Marker = ticks
	p.X.Min, p.X.Max = -0.3, float64(len(works))-0.7
	p.Add(plotter.NewGrid())
	drawn := 0
	yMin, yMax := math.Inf(1), math.Inf(-1)
	for i, design := range d.Designs {
		var pts errPoints
		for x, w := range works {
			s, ok := d.NsPerOp(row{Design: design, Op: op, Par: targetPar, Work: w, CPU: d.MaxCPU()})
			if !ok {
				continue
			}
			m := s.Summary.Center
			lo, hi := 0.0, 0.0
			if !math.IsInf(s.Summary.Lo, 0) && !math.IsInf(s.Summary.Hi, 0) {
				lo, hi = m-s.Summary.Lo, s.Summary.Hi-m
			}
			yMin, yMax = min(yMin, m-lo), max(yMax, m+hi)
			pts.XYs = append(pts.XYs, plotter.XY{X: float64(x), Y: m})
			pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{lo, hi})
		}
		if len(pts.XYs) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts.XYs)
		if err != nil {
			return nil, err
		}
		// Colour, dashes and shape follow the design's column, so a design
		// looks the same in both panels; the palette has 7 colours, so the
		// 8th design on is dashed.
		c := plotutil.Color(i)
		line.Color, points.Color = c, c
		line.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
		points.Shape = plotutil.Shape(i)
		bars, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return nil, err
		}
		bars.Color = c
		p.Add(line, points, bars)
		p.Legend.Add(design, line, points)
		drawn++
	}
	if drawn == 0 {
		return nil, nil
	}
	// The legend (one row per design) gets the top third of the panel to
	// itself: the y range is stretched upwards by half the data's span on
	// the log scale, so no line runs under it whatever the data.
	if yMax <= yMin {
		yMin, yMax = yMin/2, yMax*2
	}
	p.Y.Min = yMin / 1.2
	p.Y.Max = yMax * math.Pow(yMax/yMin, 0.5)
	p.Legend.Top, p.Legend.Left = true, true
	return p, nil
}
