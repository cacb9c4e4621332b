package report

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
)

// blockOrder says how the modes were ordered inside the blocks.
func blockOrder(m record.Meta) string {
	if m.Seed == nil {
		return "the modes alternating in direction from block to block (recorded before block orders were drawn from a seed)"
	}
	return fmt.Sprintf("the modes in an order drawn afresh for each block from seed %d (`-seed %d` lays out the same plan)", *m.Seed, *m.Seed)
}

// cellName names a cell in the headline: workload, driver, the factors the
// report sweeps (the others are the same everywhere) and the level.
func (rep *Report) cellName(c Cell) string {
	parts := []string{c.Workload, c.Driver}
	for _, f := range plan.Factors {
		if len(rep.Meta.Factors.Values(f.Name)) > 1 {
			parts = append(parts, f.Label+" "+c.Factors.Get(f.Name))
		}
	}
	return strings.Join(append(parts, rep.levelName(c.Level)), " · ")
}

// headlineRow is one pair of one cell in the headline.
type headlineRow struct {
	cell Cell
	pair Pair
}

// headlineRows are the headline's pairs: every cell's, but those of cells
// with a load-bound run, whose figures may be the driver's.
func (rep *Report) headlineRows() (rows []headlineRow, left []Cell) {
	for _, c := range rep.cells() {
		fs := rep.findings(c)
		if len(fs) == 0 {
			continue
		}
		if rep.notes[c].loadBound > 0 {
			left = append(left, c)
			continue
		}
		for _, p := range pairsOf(fs) {
			rows = append(rows, headlineRow{c, p})
		}
	}
	return rows, left
}

// headline is the top of the report: every design's effect against the
// baseline and against noop, per cell, on every compared metric, and (in
// HTML) a chart of those effects with their intervals.
func (rep *Report) headline(withCharts bool) []block {
	out := []block{heading{2, "Headline"}}
	if len(rep.Findings) == 0 {
		return append(out, para(fmt.Sprintf("No comparison: no level ran two store-backed designs including the baseline (%s), "+
			"or a store-backed design beside noop, in a common block.", rep.baseline())))
	}
	rows, left := rep.headlineRows()
	metrics := Compared()
	header := []string{"group", "design", "against"}
	for _, m := range metrics {
		header = append(header, m.Label)
	}
	t := table{header: header}
	for _, r := range rows {
		name := rep.cellName(r.cell)
		if n := rep.notes[r.cell].steal; n > 0 {
			name += fmt.Sprintf(" (%d runs with notable steal)", n)
		}
		row := []string{name, r.pair.Design, r.pair.Against}
		for _, m := range metrics {
			if f, ok := rep.finding(r.cell, r.pair, m); ok {
				row = append(row, f.Short())
			} else {
				row = append(row, "— (no block with both figures)")
			}
		}
		t.rows = append(t.rows, row)
	}
	out = append(out, para(fmt.Sprintf("Each design's effect against the baseline (%s) and against noop: the geometric mean of the "+
		"per-block ratios with its 95%% interval, the signed-rank test's p and its Holm-adjusted p_adj over all %d comparisons of "+
		"this report (%s is a difference detected at family-wise level %s). The per-level detail is below.",
		rep.baseline(), len(rep.Findings), "p_adj ≤ "+fmtAlpha(), fmtAlpha())))
	if len(rows) > 0 {
		out = append(out, t)
	}
	if len(left) > 0 {
		var names []string
		for _, c := range left {
			names = append(names, fmt.Sprintf("%s (%d load-bound runs)", rep.cellName(c), rep.notes[c].loadBound))
		}
		out = append(out, para("Left out of the headline, because the driver used nearly all its CPU in some of their runs and may "+
			"have set the pace (their figures and verdicts are in the detail below): "+strings.Join(names, "; ")+"."))
	}
	if note := rep.powerNote(); note != "" {
		out = append(out, para(note))
	}
	if withCharts && len(rows) > 0 {
		for _, m := range metrics {
			out = append(out, rep.effectChart(rows, m))
		}
	}
	return out
}

// levelVerdicts are one level's paired verdicts, below its figures.
func (rep *Report) levelVerdicts(c Cell) []block {
	fs := rep.findings(c)
	if len(fs) == 0 {
		return []block{para("No paired comparison at this level: it has no pair of a store-backed design with the baseline or noop in a common block.")}
	}
	metrics := Compared()
	header := []string{"design", "against"}
	for _, m := range metrics {
		header = append(header, m.Label)
	}
	t := table{header: header}
	for _, p := range pairsOf(fs) {
		row := []string{p.Design, p.Against}
		for _, m := range metrics {
			if f, ok := rep.finding(c, p, m); ok {
				row = append(row, f.Short())
			} else {
				row = append(row, "— (no block with both figures)")
			}
		}
		t.rows = append(t.rows, row)
	}
	out := []block{t}
	var notes []string
	if n := rep.notes[c].loadBound; n > 0 {
		notes = append(notes, fmt.Sprintf("%d of this level's runs were load-bound: the driver may have set their pace, so this level is left out of the headline", n))
	}
	if n := rep.notes[c].steal; n > 0 {
		notes = append(notes, fmt.Sprintf("%d of its runs had notable steal (≥ %.0f%% of their CPUs): the host's other guests took time from them", n, record.NotableSteal*100))
	}
	if len(notes) > 0 {
		out = append(out, para(strings.Join(notes, "; ")+"."))
	}
	return out
}

// effectChart draws the headline's effects on one metric: a point per row
// at its geometric-mean effect, with its 95% interval as a bar, and a line
// at no effect.
func (rep *Report) effectChart(rows []headlineRow, m *Metric) block {
	title := "effects on " + m.Label + " (%, 95% interval)"
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = m.Label + ": effect (%)"
	var labels []string
	var pts struct {
		plotter.XYs
		plotter.XErrors
	}
	lo, hi := 0.0, 0.0
	// NominalY counts from the bottom; the rows are drawn top down, in the
	// table's order.
	labels = make([]string, len(rows))
	for i, r := range rows {
		y := len(rows) - 1 - i
		labels[y] = fmt.Sprintf("%s: %s vs %s", rep.cellName(r.cell), r.pair.Design, r.pair.Against)
		f, ok := rep.finding(r.cell, r.pair, m)
		if !ok {
			continue
		}
		x := 100 * (f.Effect.GeoMean - 1)
		l, h := 0.0, 0.0
		if !math.IsInf(f.Effect.Hi, 1) { // one block: no interval to draw
			l, h = x-100*(f.Effect.Lo-1), 100*(f.Effect.Hi-1)-x
		}
		pts.XYs = append(pts.XYs, plotter.XY{X: x, Y: float64(y)})
		pts.XErrors = append(pts.XErrors, struct{ Low, High float64 }{l, h})
		lo, hi = min(lo, x-l), max(hi, x+h)
	}
	p.NominalY(labels...)
	p.Add(plotter.NewGrid())
	zero, err := plotter.NewLine(plotter.XYs{{X: 0, Y: -0.5}, {X: 0, Y: float64(len(rows)) - 0.5}})
	if err != nil {
		return para("chart " + title + " failed: " + err.Error())
	}
	zero.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	p.Add(zero)
	if len(pts.XYs) > 0 {
		sc, err := plotter.NewScatter(pts.XYs)
		if err != nil {
			return para("chart " + title + " failed: " + err.Error())
		}
		sc.Color = plotutil.Color(0)
		bars, err := plotter.NewXErrorBars(pts)
		if err != nil {
			return para("chart " + title + " failed: " + err.Error())
		}
		bars.Color = plotutil.Color(0)
		p.Add(sc, bars)
	}
	pad := max(1, 0.05*(hi-lo))
	p.X.Min, p.X.Max = lo-pad, hi+pad
	height := 2*vg.Centimeter + vg.Length(len(rows))*0.6*vg.Centimeter
	var buf strings.Builder
	w, err := p.WriterTo(22*vg.Centimeter, height, "svg")
	if err == nil {
		_, err = w.WriteTo(&buf)
	}
	if err != nil {
		return para("chart " + title + " failed: " + err.Error())
	}
	return chart{title: title, svg: []byte(buf.String())}
}
