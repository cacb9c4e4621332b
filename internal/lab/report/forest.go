package report

import (
	"bytes"
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/locklab/locklab/internal/lab/paired"
)

// ForestFile is the forest plot written beside report.md: every primary
// comparison's effect with its 95% interval, against the equivalence
// margin. It is a file of its own, not inline SVG, because a repository
// browser renders a Markdown image link but not SVG or HTML inside the
// Markdown.
const ForestFile = "forest.svg"

// forestTitle heads the plot, and is the image's alt text in report.md.
func (rep *Report) forestTitle() string {
	return fmt.Sprintf("Primary comparisons against %s: effect (%%) with its 95%% interval; dashed lines: the ±%s equivalence margin",
		rep.baseline(), paired.PctAbs(rep.margin()))
}

// forestRows are the primaries the plot draws, in the report's order.
func (rep *Report) forestRows() []Finding {
	var out []Finding
	for _, f := range rep.Findings {
		if f.IsPrimary() {
			out = append(out, f)
		}
	}
	return out
}

// forestLabel names a row: group, pair, metric and outcome. A row with no
// interval says why in place of the outcome.
func (rep *Report) forestLabel(f Finding) string {
	outcome := f.Primary.Outcome.String()
	if f.Withheld != "" {
		outcome = "withheld"
	}
	return fmt.Sprintf("%s: %s vs %s, %s (%s)", rep.cellName(f.Cell), f.Design, f.Against, f.Metric.Label, outcome)
}

// Forest draws the forest plot as SVG with gonum/plot's SVG canvas: a row
// per primary comparison, top down in the report's order, a point at its
// effect and a bar over its 95% interval, a solid line at no effect and
// dashed lines at the margin. A withheld comparison, or one with too few
// blocks, keeps its row and label with nothing drawn on it. It returns
// nil, nil for a report without primaries: there is nothing to plot.
func (rep *Report) Forest() ([]byte, error) {
	rows := rep.forestRows()
	if len(rows) == 0 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = rep.forestTitle()
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.X.Label.Text = "effect against " + rep.baseline() + " (%)"
	labels := make([]string, len(rows))
	var pts struct {
		plotter.XYs
		plotter.XErrors
	}
	margin := 100 * rep.margin()
	lo, hi := -margin, margin
	for i, f := range rows {
		// NominalY counts from the bottom; the rows read top down.
		y := len(rows) - 1 - i
		labels[y] = rep.forestLabel(f)
		if f.Withheld != "" || f.Est.N == 0 || f.Primary.Outcome == paired.OutcomeTooFew {
			continue
		}
		x := 100 * (f.Est.Ratio - 1)
		l, h := 100*(f.Est.Lo-1), 100*(f.Est.Hi-1)
		pts.XYs = append(pts.XYs, plotter.XY{X: x, Y: float64(y)})
		pts.XErrors = append(pts.XErrors, struct{ Low, High float64 }{x - l, h - x})
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
	for _, v := range []struct {
		x      float64
		dashed bool
	}{{0, false}, {-margin, true}, {margin, true}} {
		if err := vline(v.x, v.dashed); err != nil {
			return nil, err
		}
	}
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
	height := 2.5*vg.Centimeter + vg.Length(len(rows))*0.55*vg.Centimeter
	c := vgsvg.New(30*vg.Centimeter, height)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// forestBlock is the plot in the report: in report.md a link to
// ForestFile, in report.html the drawing itself; nothing for a report
// without primaries.
func (rep *Report) forestBlock() []block {
	svg, err := rep.Forest()
	switch {
	case err != nil:
		return []block{para("forest plot failed: " + err.Error())}
	case svg == nil:
		return nil
	}
	return []block{picture{chart: chart{title: rep.forestTitle(), svg: svg}, file: ForestFile}}
}
