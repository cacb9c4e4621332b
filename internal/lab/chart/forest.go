package chart

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/locklab/locklab/internal/lab/paired"
)

// Forest is a forest plot: the title, the x axis's label, the rows top
// down, and the equivalence margin (0: none drawn).
type Forest struct {
	Title, XLabel string
	Rows          []ForestRow
	Margin        float64
}

// ForestRow is one row of a forest plot: its label, and its effect with
// the 95% interval on the ratio scale; Drawn is false for a row kept with
// nothing on it (a verdict withheld, too few blocks); Outcome is what it
// concluded (0 for an estimate).
type ForestRow struct {
	Label         string
	Ratio, Lo, Hi float64
	Drawn         bool
	Outcome       paired.Outcome
}

// OutcomeColour colours a forest row by what it concluded, as its label
// says: a difference, the same within the margin, or neither (not shown,
// or an estimate, which concludes nothing).
func OutcomeColour(o paired.Outcome) color.Color {
	switch o {
	case paired.OutcomeDetected:
		return Colour(0)
	case paired.OutcomeEquivalent:
		return Colour(1)
	}
	return Colour(2)
}

// SVG draws the forest plot: a row per comparison, top down, a point at
// its effect and a bar over its 95% interval, coloured by its outcome
// (OutcomeColour), a solid line at no effect and dashed lines at the
// margin. A row not drawn keeps its label with nothing on it. It returns
// nil, nil for no rows: there is nothing to plot.
func (fo Forest) SVG() ([]byte, error) {
	rows := fo.Rows
	if len(rows) == 0 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = fo.Title
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.X.Label.Text = fo.XLabel
	labels := make([]string, len(rows))
	type mark struct {
		pts struct {
			plotter.XYs
			plotter.XErrors
		}
		colour color.Color
	}
	var marks []mark
	margin := 100 * fo.Margin
	lo, hi := -margin, margin
	for i, r := range rows {
		// NominalY counts from the bottom; the rows read top down.
		y := len(rows) - 1 - i
		labels[y] = r.Label
		if !r.Drawn {
			continue
		}
		x := 100 * (r.Ratio - 1)
		l, h := 100*(r.Lo-1), 100*(r.Hi-1)
		m := mark{colour: OutcomeColour(r.Outcome)}
		m.pts.XYs = plotter.XYs{{X: x, Y: float64(y)}}
		m.pts.XErrors = plotter.XErrors{{Low: x - l, High: h - x}}
		marks = append(marks, m)
		lo, hi = min(lo, l), max(hi, h)
	}
	p.NominalY(labels...)
	p.Add(plotter.NewGrid())
	vline := func(x float64, dashed bool) error {
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: -0.5}, {X: x, Y: float64(len(rows)) - 0.5}})
		if err != nil {
			return err
		}
		l.Color = color.Gray{Y: 0x60}
		if dashed {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l)
		return nil
	}
	if err := vline(0, false); err != nil {
		return nil, err
	}
	if margin > 0 {
		for _, x := range []float64{-margin, margin} {
			if err := vline(x, true); err != nil {
				return nil, err
			}
		}
	}
	for _, m := range marks {
		sc, err := plotter.NewScatter(m.pts.XYs)
		if err != nil {
			return nil, err
		}
		bars, err := plotter.NewXErrorBars(m.pts)
		if err != nil {
			return nil, err
		}
		sc.Color, bars.Color = m.colour, m.colour
		p.Add(sc, bars)
	}
	pad := max(1, 0.05*(hi-lo))
	p.X.Min, p.X.Max = lo-pad, hi+pad
	height := 2.5*vg.Centimeter + vg.Length(len(rows))*0.55*vg.Centimeter
	return SVG(p, 30*vg.Centimeter, height)
}
