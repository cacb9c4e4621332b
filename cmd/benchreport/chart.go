package main

import (
	"bytes"
	"fmt"
	"math"
	"slices"

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
	return render(plots, len(plots))
}

// render lays plots out in a grid of cols columns and encodes it as PNG.
func render(plots []*plot.Plot, cols int) ([]byte, error) {
	const panelW, panelH = 13 * vg.Centimeter, 11 * vg.Centimeter
	rows := (len(plots) + cols - 1) / cols
	c := vgimg.NewWith(vgimg.UseWH(panelW*vg.Length(cols), panelH*vg.Length(rows)), vgimg.UseDPI(110))
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
	var series []designSeries
	for x, w := range works {
		series = appendPoint(d, series, float64(x), func(design string) row {
			return row{Design: design, Op: op, Par: targetPar, Work: w, CPU: d.MaxCPU()}
		})
	}
	return drawSeries(p, series)
}

// designSeries is one design's points with their error bars.
type designSeries struct {
	design string
	pts    errPoints
}

// appendPoint adds, for every design that ran at, its median and interval
// at x to its series.
func appendPoint(d *Data, series []designSeries, x float64, at func(design string) row) []designSeries {
	if series == nil {
		series = make([]designSeries, len(d.Designs))
		for i, name := range d.Designs {
			series[i].design = name
		}
	}
	for i := range series {
		s, ok := d.NsPerOp(at(series[i].design))
		if !ok {
			continue
		}
		m := s.Summary.Center
		lo, hi := 0.0, 0.0
		if bounded(s.Summary) {
			lo, hi = m-s.Summary.Lo, s.Summary.Hi-m
		}
		series[i].pts.XYs = append(series[i].pts.XYs, plotter.XY{X: x, Y: m})
		series[i].pts.YErrors = append(series[i].pts.YErrors, struct{ Low, High float64 }{lo, hi})
	}
	return series
}

// drawSeries adds the series to p, a design's colour and shape following
// its column so that it looks the same in every panel; nil if none has a
// point.
func drawSeries(p *plot.Plot, series []designSeries) (*plot.Plot, error) {
	drawn := 0
	yMin, yMax := math.Inf(1), math.Inf(-1)
	for i, sr := range series {
		if len(sr.pts.XYs) == 0 {
			continue
		}
		for j, pt := range sr.pts.XYs {
			yMin, yMax = min(yMin, pt.Y-sr.pts.YErrors[j].Low), max(yMax, pt.Y+sr.pts.YErrors[j].High)
		}
		line, points, err := plotter.NewLinePoints(sr.pts.XYs)
		if err != nil {
			return nil, err
		}
		// The palette has 7 colours, so the 8th design on is dashed.
		c := plotutil.Color(i)
		line.Color, points.Color = c, c
		line.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
		points.Shape = plotutil.Shape(i)
		bars, err := plotter.NewYErrorBars(sr.pts)
		if err != nil {
			return nil, err
		}
		bars.Color = c
		p.Add(line, points, bars)
		p.Legend.Add(sr.design, line, points)
		drawn++
	}
	if drawn == 0 {
		return nil, nil
	}
	// The legend (one row per design) gets the top third of the panel to
	// itself: the y range is stretched upwards by half the data's span on
	// the log scale, so no line runs under it whatever the data.
	if yMin <= 0 {
		yMin = yMax / 1e3 // an interval reaching 0 has no place on a log axis
	}
	if yMax <= yMin {
		yMin, yMax = yMin/2, yMax*2
	}
	p.Y.Min = yMin / 1.2
	p.Y.Max = yMax * math.Pow(yMax/yMin, 0.5)
	p.Legend.Top, p.Legend.Left = true, true
	return p, nil
}

// cpuChartCols is how many panels the CPU chart puts side by side.
const cpuChartCols = 3

// cpuChart draws ns/op (log scale) against GOMAXPROCS (log-2 scale), one
// line per design, one panel per op, at par=targetPar (or the op's highest
// parallelism) and the op's shortest critical section. It returns nil if
// the input has fewer than two CPU counts.
func cpuChart(d *Data) ([]byte, error) {
	if len(d.CPUs) < 2 {
		return nil, nil
	}
	var plots []*plot.Plot
	for _, op := range d.Ops {
		p, err := cpuPanel(d, op)
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
	return render(plots, min(cpuChartCols, len(plots)))
}

func cpuPanel(d *Data, op string) (*plot.Plot, error) {
	work := d.worksOf(op)[0]
	par := d.Pars[len(d.Pars)-1]
	if slices.Contains(d.Pars, targetPar) {
		par = targetPar
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s, par=%d, work=%v", op, par, work)
	p.X.Label.Text = "GOMAXPROCS (-cpu)"
	p.Y.Label.Text = "ns/op (median, 95% CI)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	// x is log2 of the CPU count, ticked with the counts themselves, so
	// that every doubling is one step.
	var ticks plot.ConstantTicks
	for _, c := range d.CPUs {
		ticks = append(ticks, plot.Tick{Value: math.Log2(float64(c)), Label: fmt.Sprint(c)})
	}
	p.X.Tick.Marker = ticks
	lo, hi := math.Log2(float64(d.CPUs[0])), math.Log2(float64(d.MaxCPU()))
	p.X.Min, p.X.Max = lo-0.3, hi+0.3
	p.Add(plotter.NewGrid())
	var series []designSeries
	for _, c := range d.CPUs {
		series = appendPoint(d, series, math.Log2(float64(c)), func(design string) row {
			return row{Design: design, Op: op, Par: par, Work: work, CPU: c}
		})
	}
	return drawSeries(p, series)
}
