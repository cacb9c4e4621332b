package report

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/summary"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// charts draws, for one section, every charted metric of the catalogue
// against the load level, one line per mode, with the repetitions' range as
// error bars.
func (rep *Report) charts(sec Section) []block {
	unit := "concurrent callers"
	if rep.Meta.Model == "open" {
		unit = "arrival rate (calls/s)"
	}
	prefix := sec.Workload + " · " + sec.Driver + ": "
	var groups []*Group
	for _, g := range rep.Groups {
		if g.Section == sec {
			groups = append(groups, g)
		}
	}
	var out []block
	for _, m := range expand(storeOps(groups)) {
		if m.Chart == "" || !rep.hasFigure(sec, m) {
			continue
		}
		title := prefix + m.Chart
		svg, err := rep.lineChart(sec, title, unit, cmp.Or(m.ChartY, m.Label), m, cmp.Or(m.ChartScale, 1))
		if err != nil {
			out = append(out, para("chart "+title+" failed: "+err.Error()))
			continue
		}
		out = append(out, chart{title: title, svg: svg})
	}
	return out
}

func (rep *Report) hasFigure(sec Section, m *Metric) bool {
	for _, g := range rep.Groups {
		if g.Section == sec && g.fig(m).N > 0 {
			return true
		}
	}
	return false
}

// errPoints are points with vertical error bars, for plotter.YErrorBars.
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

func (rep *Report) lineChart(sec Section, title, xlabel, ylabel string, m *Metric, scale float64) ([]byte, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	levels := rep.levels(sec)
	logX := len(levels) > 1 && levels[0] > 0
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = levelTicks(levels)
	}
	p.Add(plotter.NewGrid())
	var all []errPoints
	for i, mode := range rep.Meta.Modes {
		var pts errPoints
		for _, level := range levels {
			g := rep.group(sec, level, mode)
			if g == nil || g.fig(m).N == 0 {
				continue
			}
			s := g.fig(m)
			pts.XYs = append(pts.XYs, plotter.XY{X: float64(level), Y: s.Median * scale})
			pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{(s.Median - s.Min) * scale, (s.Max - s.Median) * scale})
		}
		if len(pts.XYs) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts.XYs)
		if err != nil {
			return nil, err
		}
		c := plotutil.Color(i)
		line.Color, points.Color = c, c
		points.Shape = plotutil.Shape(i)
		bars, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return nil, err
		}
		bars.Color = c
		p.Add(line, points, bars)
		p.Legend.Add(mode, line, points)
		all = append(all, pts)
	}
	p.Y.Min = 0
	// Latency rises with load and closed-model throughput may fall, so no
	// one corner is always free: the legend goes where the data is not.
	p.Legend.Top, p.Legend.Left = legendCorner(all, logX)
	return svgOf(p)
}

func svgOf(p *plot.Plot) ([]byte, error) {
	var buf bytes.Buffer
	w, err := p.WriterTo(16*vg.Centimeter, 9*vg.Centimeter, "svg")
	if err != nil {
		return nil, err
	}
	if _, err := w.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// legendCorner picks the corner of a chart (y from 0 to the highest error
// bar) that holds the fewest points and error-bar ends, preferring top left,
// then top right, bottom left, bottom right when they tie.
func legendCorner(series []errPoints, logX bool) (top, left bool) {
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

// levelTicks labels exactly the measured levels on a log axis.
type levelTicks []int

func (t levelTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for _, l := range t {
		if v := float64(l); v >= min && v <= max {
			ticks = append(ticks, plot.Tick{Value: v, Label: fmt.Sprint(l)})
		}
	}
	return ticks
}

// percentileChart draws the latency-by-percentile curve of every mode at one
// level, HDR style: the percentile axis is 1/(1-p) on a log scale, so that
// 90%, 99%, 99.9% … are evenly spaced and the tail gets the room.
func (rep *Report) percentileChart(sec Section, level int) block {
	title := fmt.Sprintf("%s · %s · %s: latency by percentile", sec.Workload, sec.Driver, rep.levelName(level))
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "percentile"
	p.Y.Label.Text = "latency (ms)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = percentileTicks{}
	p.Add(plotter.NewGrid())
	drawn := 0
	for i, mode := range rep.Meta.Modes {
		g := rep.group(sec, level, mode)
		if g == nil {
			continue
		}
		pts := mergedCurve(g.records)
		if len(pts) < 2 {
			continue
		}
		var xys plotter.XYs
		for _, pt := range pts {
			xys = append(xys, plotter.XY{X: 1 / (1 - pt[0]/100), Y: pt[1]})
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return para("chart " + title + " failed: " + err.Error())
		}
		line.Color = plotutil.Color(i)
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(mode, line)
		drawn++
	}
	if drawn == 0 {
		return para("No latency curve for " + title + ": the runs carry no percentiles.")
	}
	p.Y.Min = 0
	p.Legend.Top, p.Legend.Left = true, true
	svg, err := svgOf(p)
	if err != nil {
		return para("chart " + title + " failed: " + err.Error())
	}
	return chart{title: title, svg: svg}
}

// maxCurvePercentile is where curves stop: 100% is at infinity on a
// 1/(1-p) axis.
const maxCurvePercentile = 99.999

// mergedCurve is the latency curve of a group's runs, [percentile, ms]: from
// their HDR histograms merged, when every run has one; otherwise the median
// over the runs of each percentile they all report.
func mergedCurve(runs []*record.Run) [][2]float64 {
	sums := make([]*summary.Summary, len(runs))
	for i, r := range runs {
		sums[i] = r.Result
	}
	var out [][2]float64
	if merged, err := summary.MergeHDR(sums...); err == nil && merged.TotalCount() > 0 {
		for _, pt := range summary.PercentilesOf(merged) {
			if pt[0] <= maxCurvePercentile {
				out = append(out, pt)
			}
		}
		return out
	}
	byP := map[float64][]float64{}
	for _, r := range runs {
		for _, pt := range r.Result.Percentiles {
			byP[pt[0]] = append(byP[pt[0]], pt[1])
		}
	}
	for p, vals := range byP {
		if len(vals) == len(runs) && p <= maxCurvePercentile {
			out = append(out, [2]float64{p, statOfValues(vals, nil).Median})
		}
	}
	slices.SortFunc(out, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
	return out
}

// percentileTicks labels the 1/(1-p) axis in percentiles.
type percentileTicks struct{}

func (percentileTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for _, t := range []struct {
		x     float64
		label string
	}{{1, "0%"}, {2, "50%"}, {10, "90%"}, {100, "99%"}, {1000, "99.9%"}, {10000, "99.99%"}, {100000, "99.999%"}} {
		if t.x >= min && t.x <= max {
			ticks = append(ticks, plot.Tick{Value: t.x, Label: t.label})
		}
	}
	return ticks
}
