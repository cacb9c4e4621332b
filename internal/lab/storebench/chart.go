package storebench

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/locklab/locklab/internal/lab/chart"
)

// chartOps are the panels of the critical-section chart: the ops the
// targets are about.
var chartOps = []string{opIncrement, opTransfer}

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
	return chart.Grid(plots, len(plots), panelW, panelH)
}

// panelW and panelH are the size of one panel of the store's charts.
const panelW, panelH = 13 * vg.Centimeter, 11 * vg.Centimeter

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
	var series []chart.Series
	for x, w := range works {
		series = appendPoint(d, series, float64(x), func(design string) row {
			return row{Design: design, Op: op, Par: targetPar, Work: w, CPU: d.MaxCPU()}
		})
	}
	return drawSeries(p, series)
}

// appendPoint adds, for every design that ran at, its median and interval
// at x to its series (one per design of d, in its order).
func appendPoint(d *Data, series []chart.Series, x float64, at func(design string) row) []chart.Series {
	if series == nil {
		series = make([]chart.Series, len(d.Designs))
		for i, name := range d.Designs {
			series[i].Name = name
		}
	}
	for i := range series {
		s, ok := d.NsPerOp(at(series[i].Name))
		if !ok {
			continue
		}
		m := s.Summary.Center
		below, above := 0.0, 0.0
		if bounded(s.Summary) {
			below, above = m-s.Summary.Lo, s.Summary.Hi-m
		}
		series[i].Add(x, m, below, above)
	}
	return series
}

// drawSeries adds the series to p (chart.Lines: a design's colour and
// shape follow its column, so that it looks the same in every panel); nil
// if none has a point.
func drawSeries(p *plot.Plot, series []chart.Series) (*plot.Plot, error) {
	drawn, err := chart.Lines(p, series)
	if err != nil || drawn == 0 {
		return nil, err
	}
	yMin, yMax := math.Inf(1), math.Inf(-1)
	for _, sr := range series {
		for j, pt := range sr.XYs {
			yMin, yMax = min(yMin, pt.Y-sr.YErrors[j].Low), max(yMax, pt.Y+sr.YErrors[j].High)
		}
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
	return chart.Grid(plots, min(cpuChartCols, len(plots)), panelW, panelH)
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
	var series []chart.Series
	for _, c := range d.CPUs {
		series = appendPoint(d, series, math.Log2(float64(c)), func(design string) row {
			return row{Design: design, Op: op, Par: par, Work: work, CPU: c}
		})
	}
	return drawSeries(p, series)
}
