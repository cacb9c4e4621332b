package report

import (
	"fmt"

	labchart "github.com/locklab/locklab/internal/lab/chart"
	"github.com/locklab/locklab/internal/lab/paired"
)

// ForestFile is the forest plot written beside report.md: every primary
// comparison's effect with its 95% interval, against the equivalence
// margin. It is a file of its own, not inline SVG, because a repository
// browser renders a Markdown image link but not SVG or HTML inside the
// Markdown.
const ForestFile = "forest.svg"

// forestRow is one row of the plot, as chart.ForestRow: its label, and
// its effect with the 95% interval on the ratio scale; drawn is false for
// a row kept with nothing on it (a verdict withheld, too few blocks).
type forestRow struct {
	label         string
	ratio, lo, hi float64
	drawn         bool
	outcome       paired.Outcome // 0 for an estimate
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

// drawForest draws the plot with package chart (chart.Forest); nil, nil
// for no rows.
func drawForest(fo forest) ([]byte, error) {
	out := labchart.Forest{Title: fo.title, XLabel: fo.xlabel, Margin: fo.margin}
	for _, r := range fo.rows {
		out.Rows = append(out.Rows, labchart.ForestRow{Label: r.label, Ratio: r.ratio, Lo: r.lo, Hi: r.hi, Drawn: r.drawn, Outcome: r.outcome})
	}
	return out.SVG()
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
