package chart

import (
	"bytes"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Effects is a chart of effects on one metric, as a comparison report's
// headline draws one per compared metric: the title, the x axis's label
// and the rows top down.
type Effects struct {
	Title, XLabel string
	Rows          []EffectRow
}

// EffectRow is one row of an effects chart: its label, and its effect with
// the 95% interval on the ratio scale; Drawn is false for a row kept with
// nothing on it (no interval, or a verdict withheld).
type EffectRow struct {
	Label         string
	Ratio, Lo, Hi float64
	Drawn         bool
}

// SVG draws the chart: a point per drawn row at its effect (%), its 95%
// interval as a bar, all in one colour, and a dashed line at no effect.
func (e Effects) SVG() ([]byte, error) {
	rows := e.Rows
	p := plot.New()
	p.Title.Text = e.Title
	p.X.Label.Text = e.XLabel
	var pts struct {
		plotter.XYs
		plotter.XErrors
	}
	lo, hi := 0.0, 0.0
	// NominalY counts from the bottom; the rows are drawn top down.
	labels := make([]string, len(rows))
	for i, r := range rows {
		y := len(rows) - 1 - i
		labels[y] = r.Label
		if !r.Drawn {
			continue
		}
		x := 100 * (r.Ratio - 1)
		l, h := x-100*(r.Lo-1), 100*(r.Hi-1)-x
		pts.XYs = append(pts.XYs, plotter.XY{X: x, Y: float64(y)})
		pts.XErrors = append(pts.XErrors, struct{ Low, High float64 }{l, h})
		lo, hi = min(lo, x-l), max(hi, x+h)
	}
	p.NominalY(labels...)
	p.Add(plotter.NewGrid())
	zero, err := plotter.NewLine(plotter.XYs{{X: 0, Y: -0.5}, {X: 0, Y: float64(len(rows)) - 0.5}})
	if err != nil {
		return nil, err
	}
	zero.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	p.Add(zero)
	if len(pts.XYs) > 0 {
		sc, err := plotter.NewScatter(pts.XYs)
		if err != nil {
			return nil, err
		}
		sc.Color = plotutil.Color(0)
		bars, err := plotter.NewXErrorBars(pts)
		if err != nil {
			return nil, err
		}
		bars.Color = plotutil.Color(0)
		p.Add(sc, bars)
	}
	pad := max(1, 0.05*(hi-lo))
	p.X.Min, p.X.Max = lo-pad, hi+pad
	height := 2*vg.Centimeter + vg.Length(len(rows))*0.6*vg.Centimeter
	w, err := p.WriterTo(22*vg.Centimeter, height, "svg")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
