package storeverdict

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/locklab/locklab/internal/lab/cpuset"
	"github.com/locklab/locklab/internal/lab/paired"
)

// row is one design in one group.
type row struct {
	Design   string
	Rounds   int              // the design's rounds in the group
	Paired   int              // rounds paired with the baseline's (the fewer of the two)
	Median   float64          // of the design's values, in the input's unit
	Clusters []paired.Cluster // two when the rounds split (see clusters)
	// Primary is the verdict, nil when the design has no ratio to the
	// baseline here (a value that is not positive, or no baseline rounds).
	Primary *paired.Primary
	Note    string // why Primary is nil
}

// section is one group: the baseline and every other design that ran in it.
type section struct {
	Group    group
	Baseline *row // nil when the baseline did not run in this group
	Rows     []row
}

// report is the whole verdict.
type report struct {
	cfg      Config
	higher   bool // the unit is better when higher
	sections []section
	family   int
	results  int
	designs  []string
	gate     gated
}

// higherIsBetter: rates (a unit per second) are better high; everything
// else a benchmark reports per op (sec/op, B/op, allocs/op) is better low.
func higherIsBetter(unit string) bool { return strings.HasSuffix(unit, "/s") }

// analyse checks that the input can be judged and judges it.
func analyse(d *data, cfg Config) (*report, error) {
	cfg.MaxForeign = cmp.Or(cfg.MaxForeign, cpuset.DefaultMaxForeign) // the zero Config takes the lab's rule
	if d.results == 0 {
		msg := "no storetest.Benchmark results in the input: want go test -bench lines named like BenchmarkX/design=mutex/par=8"
		switch {
		case d.noUnit > 0:
			msg += fmt.Sprintf(" (%d such lines lack %s: see -unit)", d.noUnit, cfg.Unit)
		case d.other > 0:
			msg += fmt.Sprintf(" (%d benchmark lines without design=)", d.other)
		}
		return nil, bad("%s", msg)
	}
	designs := d.designOrder()
	if len(designs) == 1 {
		return nil, bad("only one design (%s) in the input: a verdict compares designs, and needs the baseline and at least one other", designs[0])
	}
	if !slices.Contains(designs, cfg.Baseline) {
		return nil, bad("the baseline %q is not among the designs in the input (%s): choose one with -baseline", cfg.Baseline, strings.Join(designs, ", "))
	}
	if d.recorded > 0 && d.unrecorded > 0 {
		return nil, bad("the input mixes %d results with a round record (%s, from storeverdict rounds) and %d without: their rounds cannot be paired; judge them apart",
			d.recorded, RoundKey, d.unrecorded)
	}
	gd := gate(d, cfg.MaxForeign)
	rep := &report{cfg: cfg, higher: higherIsBetter(cfg.Unit), results: d.results, designs: designs, gate: gd}
	var cs []paired.Comparison
	var where [][2]int // section, row of each comparison
	most := 0
	pkgs := map[string]bool{}
	for _, g := range d.groups {
		pkgs[g.Pkg] = true
	}
	for _, g := range d.groups {
		vals := gd.values[g]
		sec := section{Group: g}
		if len(pkgs) == 1 {
			sec.Group.Pkg = "" // one package: no need to name it
		}
		base, hasBase := vals[cfg.Baseline]
		if hasBase {
			b := describe(cfg.Baseline, base)
			sec.Baseline = &b
		}
		for _, name := range designs {
			xs, ok := vals[name]
			if !ok || name == cfg.Baseline {
				continue
			}
			r := describe(name, xs)
			if !hasBase {
				r.Note = "no " + cfg.Baseline + " rounds here"
				if len(d.values[g][cfg.Baseline]) > 0 {
					r.Note = "every " + cfg.Baseline + " round here was dropped by the validity gate"
				}
				sec.Rows = append(sec.Rows, r)
				continue
			}
			xv, bv := pairs(xs, base)
			r.Paired = len(xv)
			dv, bv, ok := rep.oriented(xv, bv)
			if !ok {
				r.Note = "no ratio: a round of " + cfg.Unit + " is not a positive number"
				sec.Rows = append(sec.Rows, r)
				continue
			}
			most = max(most, r.Paired)
			cs = append(cs, paired.Comparison{Design: name, Baseline: cfg.Baseline, Metric: cfg.Unit, DesignValues: dv, BaselineValues: bv})
			where = append(where, [2]int{len(rep.sections), len(sec.Rows)})
			sec.Rows = append(sec.Rows, r)
		}
		rep.sections = append(rep.sections, sec)
	}
	why := ""
	if n := gd.dropped(); n > 0 {
		why = fmt.Sprintf(" after the validity gate dropped %d of %d runs, whose CPUs something else took more than %s of (-max-foreign)", n, len(gd.runs), paired.PctAbs(cfg.MaxForeign))
	}
	if len(cs) == 0 {
		return nil, bad("no design ran beside the baseline %s under the same name%s: nothing to pair", cfg.Baseline, why)
	}
	if most < paired.MinBlocksRobust {
		return nil, bad("too few rounds: at most %d per design paired with %s%s; the verdict needs at least %d (run %d or more rounds: storeverdict rounds -rounds 10)",
			most, cfg.Baseline, why, paired.MinBlocksRobust, paired.MinBlocksRobust)
	}
	ps, err := paired.Confirm(cs, Alpha, cfg.Margin)
	if err != nil {
		return nil, &ExitError{Status: 2, Err: err}
	}
	rep.family = len(ps)
	for i, w := range where {
		rep.sections[w[0]].Rows[w[1]].Primary = &ps[i]
	}
	return rep, nil
}

// describe summarises one design's rounds.
func describe(name string, rounds []obs) row {
	xs := values(rounds)
	return row{Design: name, Rounds: len(xs), Median: median(slices.Sorted(slices.Values(xs))), Clusters: paired.Clusters(xs)}
}

func values(rounds []obs) []float64 {
	xs := make([]float64, len(rounds))
	for i, o := range rounds {
		xs[i] = o.v
	}
	return xs
}

// pairs matches a design's rounds with the baseline's by round, in round
// order: the values of the rounds both have.
func pairs(design, base []obs) (dv, bv []float64) {
	byKey := map[roundKey]float64{}
	for _, o := range base {
		byKey[o.key] = o.v
	}
	sorted := slices.SortedStableFunc(slices.Values(design), func(a, b obs) int { return a.key.compare(b.key) })
	for _, o := range sorted {
		if b, ok := byKey[o.key]; ok {
			dv, bv = append(dv, o.v), append(bv, b)
		}
	}
	return dv, bv
}

// oriented returns the values whose ratio, design over baseline, is above
// 1 when the design is better: as read for a rate, inverted (a rate per op)
// for a cost per op, so that for sec/op the ratio is the baseline's time
// over the design's — how many times faster. ok is false if a value is
// not finite and positive.
func (rep *report) oriented(design, base []float64) (dv, bv []float64, ok bool) {
	f := func(xs []float64) ([]float64, bool) {
		out := make([]float64, len(xs))
		for i, x := range xs {
			if !(x > 0) || math.IsInf(x, 0) {
				return nil, false
			}
			out[i] = x
			if !rep.higher {
				out[i] = 1 / x
			}
		}
		return out, true
	}
	dv, ok1 := f(design)
	bv, ok2 := f(base)
	return dv, bv, ok1 && ok2
}

// better and worse are the words for a ratio above and below 1.
func (rep *report) better() string {
	if rep.cfg.Unit == "sec/op" {
		return "faster"
	}
	return "better"
}

func (rep *report) worse() string {
	if rep.cfg.Unit == "sec/op" {
		return "slower"
	}
	return "worse"
}

// value prints a measurement in the input's unit (sec/op as ns/op, as go
// test prints it).
func (rep *report) value(v float64) string {
	if rep.cfg.Unit == "sec/op" {
		return strconv.FormatFloat(v*1e9, 'g', 4, 64) + " ns/op"
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + " " + rep.cfg.Unit
}

// factor prints a ratio with three significant digits.
func factor(x float64) string { return fmt.Sprintf("%#.3g", x) }

// pval prints "=p" or "<0.001", to follow "p_adj".
func pval(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return "=" + strconv.FormatFloat(p, 'g', 2, 64)
}

// outcome is a row's verdict for the table.
func (rep *report) outcome(r row) string {
	p := r.Primary
	if p == nil {
		return r.Note
	}
	switch p.Outcome {
	case paired.OutcomeDetected:
		w := rep.better()
		if p.Ratio < 1 {
			w = rep.worse()
		}
		return fmt.Sprintf("%s (p_adj%s)", w, pval(p.AdjP))
	case paired.OutcomeEquivalent:
		return fmt.Sprintf("the same within ±%s (%s interval [%s×, %s×])", pctAbs(p.Margin), eqLevel(p.Alpha), factor(p.EqLo), factor(p.EqHi))
	case paired.OutcomeNotShown:
		if p.Lo > 1 || p.Hi < 1 {
			// The interval is the comparison's own; the verdict is the family's.
			return fmt.Sprintf("not shown: its own 95%% interval excludes 1, but p_adj%s after Holm over the %d comparisons", pval(p.AdjP), p.Family)
		}
		return fmt.Sprintf("not shown (neither a difference nor within ±%s; p_adj%s)", pctAbs(p.Margin), pval(p.AdjP))
	}
	return fmt.Sprintf("too few rounds (%d; needs %d)", p.N, paired.MinBlocksRobust)
}

// phrase is a row's part of its group's ranking sentence.
func (rep *report) phrase(r row, first bool) string {
	p := r.Primary
	than := ""
	if first {
		than = " than " + rep.cfg.Baseline
	}
	if p == nil {
		return r.Design + ": " + r.Note
	}
	switch p.Outcome {
	case paired.OutcomeDetected:
		if p.Ratio >= 1 {
			return fmt.Sprintf("%s %s× [%s, %s] %s%s", r.Design, factor(p.Ratio), factor(p.Lo), factor(p.Hi), rep.better(), than)
		}
		// Slower: the factor by which it is slower, baseline over design.
		return fmt.Sprintf("%s %s× [%s, %s] %s%s", r.Design, factor(1/p.Ratio), factor(1/p.Hi), factor(1/p.Lo), rep.worse(), than)
	case paired.OutcomeEquivalent:
		return fmt.Sprintf("%s the same as %s within ±%s", r.Design, rep.cfg.Baseline, pctAbs(p.Margin))
	case paired.OutcomeNotShown:
		return fmt.Sprintf("%s not shown to differ from %s nor to be within ±%s of it (%s× [%s, %s])", r.Design, rep.cfg.Baseline,
			pctAbs(p.Margin), factor(p.Ratio), factor(p.Lo), factor(p.Hi))
	}
	return fmt.Sprintf("%s too few rounds for a verdict (%d; needs %d)", r.Design, p.N, paired.MinBlocksRobust)
}

// ranking is one sentence per group: the designs from the most to the
// least better than the baseline by their estimate; designs without one last.
func (rep *report) ranking(sec section) string {
	rows := slices.Clone(sec.Rows)
	est := func(r row) float64 {
		if r.Primary == nil || r.Primary.N < 3 {
			return math.Inf(-1)
		}
		return r.Primary.Ratio
	}
	slices.SortStableFunc(rows, func(a, b row) int { return cmp.Compare(est(b), est(a)) })
	var parts []string
	first := true
	for _, r := range rows {
		detected := r.Primary != nil && r.Primary.Outcome == paired.OutcomeDetected
		parts = append(parts, rep.phrase(r, first && detected))
		first = first && !detected
	}
	return sec.Group.where() + ": " + strings.Join(parts, "; ")
}

func (rep *report) write(w io.Writer) error {
	var b strings.Builder
	c := rep.cfg
	ratio := c.Baseline + "'s " + c.Unit + " over the design's"
	if rep.higher {
		ratio = "the design's " + c.Unit + " over " + c.Baseline + "'s"
	}
	fmt.Fprintf(&b, "# Every design against %s, on %s\n\n", c.Baseline, c.Unit)
	which := "the k-th result of each name is round k"
	if rep.gate.recorded {
		which = "the round its go test's record names"
	}
	fmt.Fprintf(&b, "%d results, %d designs (%s), %d groups. Round k of a design is paired with round k of %s (%s); ",
		rep.results, len(rep.designs), strings.Join(rep.designs, ", "), len(rep.sections), c.Baseline, which)
	fmt.Fprintf(&b, "the effect is the ratio %s, above 1 when the design is %s: Yuen's trimmed mean of the per-round log ratios with its 95%% interval, ", ratio, rep.better())
	fmt.Fprintf(&b, "Holm's adjustment over all %d comparisons as one family at α = %g; a design not shown to differ is the same as %s when its %s interval lies within ±%s. ",
		rep.family, Alpha, c.Baseline, eqLevel(Alpha), pctAbs(c.Margin))
	fmt.Fprintf(&b, "At least %d rounds are needed for a verdict.\n\n", paired.MinBlocksRobust)
	b.WriteString(rep.gate.paragraph() + "\n")
	for _, sec := range rep.sections {
		fmt.Fprintf(&b, "\n## %s\n\n", sec.Group)
		if sec.Baseline != nil {
			fmt.Fprintf(&b, "%s (baseline): %d rounds, median %s\n\n", c.Baseline, sec.Baseline.Rounds, rep.value(sec.Baseline.Median))
		} else {
			fmt.Fprintf(&b, "%s did not run here.\n\n", c.Baseline)
		}
		col := c.Baseline + " ÷ design"
		if rep.higher {
			col = "design ÷ " + c.Baseline
		}
		fmt.Fprintf(&b, "| design | rounds | median | %s | 95%% interval | outcome |\n| --- | --- | --- | --- | --- | --- |\n", col)
		for _, r := range sec.Rows {
			est, ci := "", ""
			if p := r.Primary; p != nil && p.N >= 3 {
				est, ci = factor(p.Ratio)+"×", "["+factor(p.Lo)+", "+factor(p.Hi)+"]"
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s |\n", r.Design, r.Rounds, rep.value(r.Median), est, ci, rep.outcome(r))
		}
		var notes []string
		all := sec.Rows
		if sec.Baseline != nil {
			all = append([]row{*sec.Baseline}, sec.Rows...)
		}
		for _, r := range all {
			if cl := r.Clusters; cl != nil {
				n := fmt.Sprintf("%s is bimodal: its rounds fall in two clusters, %d near %s and %d near %s; the median describes neither, and the ratio swings with the cluster each round fell into",
					r.Design, cl[0].N, rep.value(cl[0].Median), cl[1].N, rep.value(cl[1].Median))
				if r.Design == c.Baseline {
					n += " (for every design here)"
				}
				notes = append(notes, n)
			}
			if r.Design != c.Baseline && sec.Baseline != nil && (r.Rounds != sec.Baseline.Rounds || r.Paired != r.Rounds) {
				notes = append(notes, fmt.Sprintf("%s has %d rounds here and %s %d: the %d rounds both ran are paired", r.Design, r.Rounds, c.Baseline, sec.Baseline.Rounds, r.Paired))
			}
		}
		b.WriteString("\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "Note: %s.\n", n)
		}
		if len(notes) > 0 {
			b.WriteString("\n")
		}
		b.WriteString(capitalise(rep.ranking(sec)) + ".\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// pctAbs prints a fraction as a percentage: 0.03 is 3%.
func pctAbs(f float64) string { return strconv.FormatFloat(100*f, 'g', 3, 64) + "%" }

// eqLevel names the equivalence interval's level, 1 − 2α.
func eqLevel(alpha float64) string { return strconv.FormatFloat(100*(1-2*alpha), 'g', 3, 64) + "%" }

// median of sorted values (the mean of the middle two for an even count).
func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
