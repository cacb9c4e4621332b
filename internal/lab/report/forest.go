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

// forestTitle heads the plot, and is the image's alt text in report.md.
func (rep *Report) forestTitle() string {
	if len(rep.primaries()) == 0 {
		return fmt.Sprintf("Estimates (this study has no primary comparison): effect (%%) with its 95%% interval on %s", labelsOf(primaryMetrics()))
	}
	return fmt.Sprintf("Primary comparisons against %s: effect (%%) with its 95%% interval; dashed lines: the ±%s equivalence margin",
		rep.baseline(), paired.PctAbs(rep.margin()))
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

// forest is the comparison report's plot, for package chart to draw: a
// row per finding, drawn where it has an interval (not withheld, enough
// blocks), and the margin where the report has primaries.
func (rep *Report) forest() labchart.Forest {
	fo := labchart.Forest{Title: rep.forestTitle(), XLabel: "effect (%)"}
	if len(rep.primaries()) > 0 {
		fo.XLabel, fo.Margin = "effect against "+rep.baseline()+" (%)", rep.margin()
	}
	for _, f := range rep.forestRows() {
		drawn := f.Withheld == "" && f.Est.N > 0 && (f.Primary == nil || f.Primary.Outcome != paired.OutcomeTooFew)
		r := labchart.ForestRow{Label: rep.forestLabel(f), Ratio: f.Est.Ratio, Lo: f.Est.Lo, Hi: f.Est.Hi, Drawn: drawn}
		if f.Primary != nil {
			r.Outcome = f.Primary.Outcome
		}
		fo.Rows = append(fo.Rows, r)
	}
	return fo
}

// Forest draws the comparison report's forest plot; nil for a report with
// no comparison to draw.
func (rep *Report) Forest() ([]byte, error) { return rep.forest().SVG() }

// forestBlock is the plot as the report's block: in report.md a link to
// ForestFile, in report.html the drawing itself; nothing without rows.
func (rep *Report) forestBlock() []block {
	fo := rep.forest()
	svg, err := fo.SVG()
	switch {
	case err != nil:
		return []block{para("forest plot failed: " + err.Error())}
	case svg == nil:
		return nil
	}
	return []block{picture{chart: chart{title: fo.Title, svg: svg}, file: ForestFile}}
}
