package report

import (
	"cmp"
	"fmt"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	labchart "github.com/locklab/locklab/internal/lab/chart"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/summary"
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

// errPoints and levelTicks are package chart's, under the names the
// report's other charts use. (Package chart is imported as labchart here:
// chart is the report's block that holds a picture.)
type (
	errPoints  = labchart.Points
	levelTicks = labchart.LevelTicks
)

// svgOf encodes a report chart at package chart's size.
func svgOf(p *plot.Plot) ([]byte, error) { return labchart.SVG(p, labchart.Width, labchart.Height) }

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
	series := make([]labchart.Series, len(rep.Meta.Modes))
	all := make([]errPoints, len(rep.Meta.Modes))
	for i, mode := range rep.Meta.Modes {
		series[i].Name = mode
		for _, level := range levels {
			g := rep.group(sec, level, mode)
			if g == nil || g.fig(m).N == 0 {
				continue
			}
			s := g.fig(m)
			series[i].Add(float64(level), s.Median*scale, (s.Median-s.Min)*scale, (s.Max-s.Median)*scale)
		}
		all[i] = series[i].Points
	}
	if _, err := labchart.Lines(p, series); err != nil {
		return nil, err
	}
	p.Y.Min = 0
	// Latency rises with load and closed-model throughput may fall, so no
	// one corner is always free: the legend goes where the data is not.
	p.Legend.Top, p.Legend.Left = labchart.LegendCorner(all, logX)
	return svgOf(p)
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
	p.X.Tick.Marker = labchart.PercentileTicks{}
	p.Add(plotter.NewGrid())
	curves := make([]labchart.Curve, len(rep.Meta.Modes))
	for i, mode := range rep.Meta.Modes {
		curves[i].Name = mode
		if g := rep.group(sec, level, mode); g != nil {
			for _, pt := range mergedCurve(g.records) {
				curves[i].XYs = append(curves[i].XYs, plotter.XY{X: labchart.PercentileX(pt[0]), Y: pt[1]})
			}
		}
	}
	drawn, err := labchart.Curves(p, curves)
	if err != nil {
		return para("chart " + title + " failed: " + err.Error())
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
