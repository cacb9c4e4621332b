package report

import (
	"fmt"
	"math"
	"strings"

	"slices"

	labchart "github.com/locklab/locklab/internal/lab/chart"
	"github.com/locklab/locklab/internal/lab/paired"
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
// with a load-bound run, whose figures may be the driver's. primary rows
// compare a design with the baseline; the others are calibrations (against
// noop) and the A/A control.
func (rep *Report) headlineRows() (primary, other []headlineRow, left []Cell) {
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
			if slices.ContainsFunc(fs, func(f Finding) bool { return f.Pair == p && f.IsPrimary() }) {
				primary = append(primary, headlineRow{c, p})
			} else {
				other = append(other, headlineRow{c, p})
			}
		}
	}
	return primary, other, left
}

// answer opens the report, under its title: one sentence per group for
// its primaries (or why it has none) and the forest plot of them all. The
// headline below it gives the machine, the noise floor and the tables.
func (rep *Report) answer() []block {
	// Every figure names how it was measured: the runner's default is side
	// by side (internal/lab/duet), whose reports say so in their place.
	out := []block{para("Measured isolated: each run a server of its own with the server CPUs to itself, the arms one after another in blocks — not side by side " +
		"(docs/methodology.md, \"Side by side\").")}
	// A group the gate left too few clean blocks has no findings to say
	// it: its verdicts are withheld here, by name.
	withheld := false
	for _, c := range rep.gate.cells() {
		if w := rep.gate.withheld(c, paired.MinBlocksRobust); w != "" && len(rep.findings(c)) == 0 {
			out = append(out, para(fmt.Sprintf("**%s** — every verdict withheld, %s.", rep.cellName(c), w)))
			withheld = true
		}
	}
	if len(rep.Findings) == 0 {
		if !withheld {
			out = append(out, para(fmt.Sprintf("No comparison: no level ran two store-backed designs including the baseline (%s), "+
				"or a store-backed design beside noop, in a common block.", rep.baseline())))
		}
		return out
	}
	if len(rep.primaries()) == 0 {
		shown := "the headline gives every estimate (95% intervals)"
		if len(rep.forestRows()) > 0 {
			shown = fmt.Sprintf("the plot shows the estimates on %s (95%% intervals), and the headline every estimate", labelsOf(primaryMetrics()))
		}
		out = append(out, para(fmt.Sprintf("No primary comparison: no group ran a design against the baseline (%s), so nothing here is tested; %s.",
			rep.baseline(), shown)))
	}
	primary, _, _ := rep.headlineRows()
	for _, c := range rep.cells() {
		if s := rep.cellSentence(c, primary); s != "" {
			out = append(out, para(s))
		}
	}
	return append(out, rep.forestBlock()...)
}

// headline follows the answer and the setup: how busy the machine was and
// what the gate did, the A/A floor, the primaries' table, and the
// calibrations' estimates in a table of their own.
func (rep *Report) headline(withCharts bool) []block {
	out := []block{heading{2, "Headline"}, para(rep.gate.machine())}
	if len(rep.Findings) == 0 {
		return out
	}
	if s := rep.aaFloor(); s != "" {
		out = append(out, para(s))
	}
	primary, other, left := rep.headlineRows()
	metrics, pm := Compared(), primaryMetrics()
	if len(primary) > 0 {
		out = append(out, para(fmt.Sprintf("The primary comparisons, declared before the runs: each design against the baseline (%s) on %s, "+
			"in every group, %d in all, tested together (Holm, family-wise level %s). Each effect is the trimmed mean of the per-block "+
			"log ratios (Yuen's: a tenth of the blocks, at least one, set aside at each end), with its 95%% interval; a difference is claimed where the adjusted p is at most %s, and \"within ±%s\" only where "+
			"the 90%% interval lies inside that margin (two one-sided tests); anything else is \"not shown\".",
			rep.baseline(), labelsOf(pm), rep.primaryCount(), fmtAlpha(), fmtAlpha(), paired.PctAbs(rep.margin()))))
		out = append(out, rep.findingTable(primary, pm, true))
	}
	if len(other) > 0 || len(primary) > 0 {
		calib := "Outside the confirmatory family, estimates only (95% intervals, no test): every design against noop, p99 latency against the baseline, " +
			"and the A/A control. They say how far each design is from the harness's ceiling and how large a difference this machine shows " +
			"between two identical servers."
		if s := rep.armsSwept(); s != "" {
			calib += " Beside them, " + s + ", paired by block as the designs are: how far that alone moves the design."
		}
		out = append(out, heading{3, "Calibrations and estimates"}, para(calib))
		out = append(out, rep.findingTable(append(slices.Clone(primary), other...), metrics, false))
		if s, err := rep.knownSentence(); err != nil {
			out = append(out, para("The known answer could not be read: "+err.Error()))
		} else if s != "" {
			out = append(out, para(s))
		}
	}
	if len(left) > 0 {
		var names []string
		for _, c := range left {
			names = append(names, fmt.Sprintf("%s (%d load-bound runs)", rep.cellName(c), rep.notes[c].loadBound))
		}
		out = append(out, para("Left out of the headline, because the driver used nearly all its CPU in some of their runs and may "+
			"have set the pace (their figures and verdicts are in the detail below): "+strings.Join(names, "; ")+"."))
	}
	if withCharts && len(primary)+len(other) > 0 {
		for _, m := range metrics {
			out = append(out, rep.effectChart(append(slices.Clone(primary), other...), m))
		}
	}
	return out
}

// primaryCount is the size of the confirmatory family.
func (rep *Report) primaryCount() int {
	n := 0
	for _, f := range rep.Findings {
		if f.IsPrimary() {
			n++
		}
	}
	return n
}

func labelsOf(ms []*Metric) string {
	var ls []string
	for _, m := range ms {
		ls = append(ls, m.Label)
	}
	return strings.Join(ls, " and ")
}

// findingTable is a table of rows × metrics; primaries only shows the
// primaries' cells, otherwise the estimates (a primary's cell shows its
// estimate there too only where it is not a primary).
func (rep *Report) findingTable(rows []headlineRow, metrics []*Metric, primaries bool) table {
	header := []string{"group", "design", "against"}
	for _, m := range metrics {
		header = append(header, m.Label)
	}
	t := table{header: header}
	for _, r := range rows {
		row := []string{rep.cellName(r.cell), r.pair.Design, r.pair.Against}
		any := false
		for _, m := range metrics {
			f, ok := rep.finding(r.cell, r.pair, m)
			switch {
			case !ok:
				row = append(row, "— (no block with both figures)")
			case f.IsPrimary() != primaries:
				row = append(row, "(primary: above)")
			default:
				row = append(row, f.Short())
				any = true
			}
		}
		if any {
			t.rows = append(t.rows, row)
		}
	}
	return t
}

// aaFloor is the A/A control's sentence: how far apart two identical
// servers came out on each compared metric, the widest across the groups.
func (rep *Report) aaFloor() string {
	twin := rep.baseline() + plan.TwinSuffix
	var parts []string
	for _, m := range Compared() {
		widest, n := 0.0, 0
		var at Finding
		for _, f := range rep.Findings {
			if f.Pair.Design != twin || f.Metric != m || f.Est.N == 0 {
				continue
			}
			n++
			if w := max(f.Est.Hi-1, 1-f.Est.Lo); w > widest {
				widest, at = w, f
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s within ±%s (widest in %s: %s)", m.Label, paired.PctAbs(widest), rep.cellName(at.Cell), at.Short()))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("The noise floor: an A/A control ran %s twice in every block, as two servers; the two came out %s. "+
		"A difference inside these bounds is what two identical servers show on this machine today.", rep.baseline(), strings.Join(parts, "; "))
}

// cellSentence is a group's primaries in one plain sentence, or its
// withheld verdict; "" for a group with no primary in the headline.
func (rep *Report) cellSentence(c Cell, rows []headlineRow) string {
	var parts []string
	for _, r := range rows {
		if r.cell != c {
			continue
		}
		var ms []string
		withheld := ""
		for _, m := range Compared() {
			f, ok := rep.finding(c, r.pair, m)
			if !ok || !f.IsPrimary() {
				continue
			}
			if f.Withheld != "" {
				withheld = f.Withheld
				break
			}
			ms = append(ms, primaryPhrase(f))
		}
		if withheld != "" {
			parts = append(parts, fmt.Sprintf("%s against %s: verdict withheld, %s", r.pair.Design, r.pair.Against, withheld))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s against %s: %s", r.pair.Design, r.pair.Against, strings.Join(ms, "; ")))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("**%s** — %s.", rep.cellName(c), strings.Join(parts, ". "))
}

// primaryPhrase says one primary in words: which way and by how much,
// with its interval, or that it lies within the margin, or neither.
func primaryPhrase(f Finding) string {
	p := f.Primary
	switch p.Outcome {
	case paired.OutcomeDetected:
		lo, hi := math.Abs(p.Lo-1), math.Abs(p.Hi-1)
		dir := "higher"
		if p.Ratio < 1 {
			dir = "lower"
		}
		return fmt.Sprintf("%s %s [%s, %s] %s (p_adj=%s)", f.Metric.Label, paired.PctAbs(math.Abs(p.Ratio-1)), paired.PctAbs(min(lo, hi)), paired.PctAbs(max(lo, hi)), dir, paired.PValue(p.AdjP))
	case paired.OutcomeEquivalent:
		return fmt.Sprintf("%s the same within ±%s (%s [%s, %s])", f.Metric.Label, paired.PctAbs(p.Margin), paired.Pct(p.Ratio-1), paired.Pct(p.EqLo-1), paired.Pct(p.EqHi-1))
	case paired.OutcomeTooFew:
		return fmt.Sprintf("%s: too few blocks for a verdict (n=%d)", f.Metric.Label, p.N)
	}
	return fmt.Sprintf("%s neither shown to differ nor shown within ±%s (%s [%s, %s])", f.Metric.Label, paired.PctAbs(p.Margin), paired.Pct(p.Ratio-1), paired.Pct(p.Lo-1), paired.Pct(p.Hi-1))
}

// levelVerdicts are one level's paired comparisons, below its figures.
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
	if rep.gate.rule != nil {
		notes = append(notes, fmt.Sprintf("%d of its %d blocks were clean", rep.gate.clean[c], rep.gate.planned[c]))
	}
	if len(notes) > 0 {
		out = append(out, para(strings.Join(notes, "; ")+"."))
	}
	return out
}

// effectChart draws the headline's effects on one metric (chart.Effects):
// a point per row at its geometric-mean effect, with its 95% interval as a
// bar, and a line at no effect.
func (rep *Report) effectChart(rows []headlineRow, m *Metric) block {
	ec := labchart.Effects{Title: "effects on " + m.Label + " (%, 95% interval)", XLabel: m.Label + ": effect (%)"}
	for _, r := range rows {
		row := labchart.EffectRow{Label: fmt.Sprintf("%s: %s vs %s", rep.cellName(r.cell), r.pair.Design, r.pair.Against)}
		if f, ok := rep.finding(r.cell, r.pair, m); ok && f.Est.N > 0 && f.Withheld == "" {
			row.Ratio, row.Lo, row.Hi, row.Drawn = f.Est.Ratio, f.Est.Lo, f.Est.Hi, true
		}
		ec.Rows = append(ec.Rows, row)
	}
	svg, err := ec.SVG()
	if err != nil {
		return para("chart " + ec.Title + " failed: " + err.Error())
	}
	return chart{title: ec.Title, svg: svg}
}
