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

// forestRow is one row of a forest plot: its label, and its effect with
// the 95% interval on the ratio scale; drawn is false for a row kept with
// nothing on it (a verdict withheld, too few blocks).
type forestRow struct {
	label         string
	ratio, lo, hi float64
	drawn         bool
	outcome       paired.Outcome // 0 for an estimate
}

// forestColour colours a row by what it concluded, as its label says: a
// difference, the same within the margin, or neither (not shown, or an
// estimate, which concludes nothing).
func forestColour(o paired.Outcome) color.Color {
	switch o {
	case paired.OutcomeDetected:
		return plotutil.Color(0)
	case paired.OutcomeEquivalent:
		return plotutil.Color(1)
	}
	return plotutil.Color(2)
}

// forest is what a report gives its forest plot: the title, the axis, the
// rows top down, and the equivalence margin (0: none drawn).
type forest struct {
	title, xlabel string
	rows          []forestRow
	margin        float64
}

// forestTitle heads the plot, and is the image's alt text in report.md.
func (rep *Report) forestTitle() string {
	if len(rep.primaries()) == 0 {
		return fmt.Sprintf("Estimates (this study has no primary comparison): effect (%%) with its 95%% interval on %s", labelsOf(primaryMetrics()))
	}
	return fmt.Sprintf("Primary comparisons against %s: effect (%%) with its 95%% interval; dashed lines: the ±%s equivalence margin",
		rep.baseline(), paired.PctAbs(rep.margin()))
}

// primaryMetrics are the catalogue's primary metrics, in its order.
func primaryMetrics() []*Metric {
	var out []*Metric
	for _, m := range Compared() {
		if m.Primary {
			out = append(out, m)
		}
	}
	return out
}

// primaries are the report's primary findings, in its order.
func (rep *Report) primaries() []Finding {
	var out []Finding
	for _, f := range rep.Findings {
		if f.IsPrimary() {
			out = append(out, f)
		}
	}
	return out
}

// forestRows are the findings the plot draws, in the report's order: the
// primaries, or in a report without any (a study of designs against noop
// alone) the estimates on the primary metrics, so that every comparison
// report opens with a picture.
func (rep *Report) forestRows() []Finding {
	if ps := rep.primaries(); len(ps) > 0 {
		return ps
	}
	var out []Finding
	for _, f := range rep.Findings {
		if f.Metric.Primary && f.Est.N > 0 {
			out = append(out, f)
		}
	}
	return out
}

// forestLabel names a row: group, pair, metric and outcome. A row with no
// interval says why in place of the outcome.
func (rep *Report) forestLabel(f Finding) string {
	outcome := "estimate"
	switch {
	case f.Withheld != "":
		outcome = "withheld"
	case f.Primary != nil:
		outcome = f.Primary.Outcome.String()
	}
	return fmt.Sprintf("%s: %s vs %s, %s (%s)", rep.cellName(f.Cell), f.Design, f.Against, f.Metric.Label, outcome)
}

// forest is the comparison report's plot.
func (rep *Report) forest() forest {
	fo := forest{title: rep.forestTitle(), xlabel: "effect (%)"}
	if len(rep.primaries()) > 0 {
		fo.xlabel, fo.margin = "effect against "+rep.baseline()+" (%)", rep.margin()
	}
	for _, f := range rep.forestRows() {
		drawn := f.Withheld == "" && f.Est.N > 0 && (f.Primary == nil || f.Primary.Outcome != paired.OutcomeTooFew)
		r := forestRow{label: rep.forestLabel(f), ratio: f.Est.Ratio, lo: f.Est.Lo, hi: f.Est.Hi, drawn: drawn}
		if f.Primary != nil {
			r.outcome = f.Primary.Outcome
		}
		fo.rows = append(fo.rows, r)
	}
	return fo
}

// Forest draws the comparison report's forest plot (drawForest); nil for
// a report with no comparison to draw.
func (rep *Report) Forest() ([]byte, error) { return drawForest(rep.forest()) }

// drawForest draws a forest plot as SVG with gonum/plot's SVG canvas: a
// row per comparison, top down, a point at its effect and a bar over its
// 95% interval, coloured by its outcome (forestColour), a solid line at no
// effect and dashed lines at the margin.
// A row not drawn keeps its label with nothing on it. It returns nil, nil
// for no rows: there is nothing to plot.
func drawForest(fo forest) ([]byte, error) {
	rows := fo.rows
	if len(rows) == 0 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = fo.title
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.X.Label.Text = fo.xlabel
	labels := make([]string, len(rows))
	type mark struct {
		pts struct {
			plotter.XYs
			plotter.XErrors
		}
		colour color.Color
	}
	var marks []mark
	margin := 100 * fo.margin
	lo, hi := -margin, margin
	for i, r := range rows {
		// NominalY counts from the bottom; the rows read top down.
		y := len(rows) - 1 - i
		labels[y] = r.label
		if !r.drawn {
			continue
		}
		x := 100 * (r.ratio - 1)
		l, h := 100*(r.lo-1), 100*(r.hi-1)
		m := mark{colour: forestColour(r.outcome)}
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
	c := vgsvg.New(30*vg.Centimeter, height)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// pictureOf is a forest plot as the report's block: in report.md a link to
// ForestFile, in report.html the drawing itself; nothing without rows.
func pictureOf(fo forest) []block {
	svg, err := drawForest(fo)
	switch {
	case err != nil:
		return []block{para("forest plot failed: " + err.Error())}
	case svg == nil:
		return nil
	}
	return []block{picture{chart: chart{title: fo.title, svg: svg}, file: ForestFile}}
}

// forestBlock is the comparison report's plot as a block (pictureOf).
func (rep *Report) forestBlock() []block { return pictureOf(rep.forest()) }

// ForestRow is one row of a forest plot drawn for results that are not a
// Report (side-by-side rounds): its label, its effect and 95% interval on
// the ratio scale, whether it has them (Drawn), and what it concluded.
type ForestRow struct {
	Label         string
	Ratio, Lo, Hi float64
	Drawn         bool
	Outcome       paired.Outcome
}

// DrawForest draws rows as a report's forest plot is drawn, with the same
// colours and margin lines (margin 0: none); nil, nil for no rows.
func DrawForest(title, xlabel string, rows []ForestRow, margin float64) ([]byte, error) {
	fo := forest{title: title, xlabel: xlabel, margin: margin}
	for _, r := range rows {
		fo.rows = append(fo.rows, forestRow{label: r.Label, ratio: r.Ratio, lo: r.Lo, hi: r.Hi, drawn: r.Drawn, outcome: r.Outcome})
	}
	return drawForest(fo)
}
