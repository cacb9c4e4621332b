package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
)

// DefaultBaseline is the design the others are compared with unless
// -baseline says otherwise: the lock, the design a Go engineer reaches for
// first. Records written before the baseline could be chosen use it.
const DefaultBaseline = "mutex"

// Noop is the mode that answers without touching any store: the harness's
// ceiling, against which every store-backed design is also compared. The
// report knows a run's mode kept no state from the server's stats; the plan,
// which has no stats yet, knows it by this name.
const Noop = "noop"

// Alpha is the family-wise level of every report's tests: Holm's
// adjustment keeps the chance of any false "difference detected" among all
// the report's comparisons at or below it.
const Alpha = 0.05

// Pair is one comparison of a group: Design against Against.
type Pair struct{ Design, Against string }

// Pairs are the comparisons a group makes among the modes that ran in it,
// in the modes' order: every store-backed design other than the baseline
// against the baseline, then every store-backed design against noop when
// noop ran. The report and the plan's count of tests (Family) both range
// over it.
func Pairs(modes []string, baseline string, storeBacked func(mode string) bool) []Pair {
	var out []Pair
	if slices.Contains(modes, baseline) && storeBacked(baseline) {
		for _, m := range modes {
			if m != baseline && storeBacked(m) {
				out = append(out, Pair{m, baseline})
			}
		}
	}
	if slices.Contains(modes, Noop) {
		for _, m := range modes {
			if storeBacked(m) {
				out = append(out, Pair{m, Noop})
			}
		}
	}
	return out
}

// Compared are the metrics every pair is compared on: the catalogue's rows
// marked Compare, decided before any run and the same for every group,
// whatever its runs' classes.
func Compared() []*Metric {
	var out []*Metric
	for _, m := range Catalogue {
		if m.Compare {
			out = append(out, m)
		}
	}
	return out
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

// Family is how many primaries the report of these runs will judge
// together: for every group of the plan (workload, driver, factors,
// level), its designs against the baseline times the primary metrics.
func Family(specs []plan.Spec, baseline string) int {
	type cell struct {
		wl, drv, pt string
		level       int
	}
	modes := map[cell][]string{}
	var order []cell
	for _, s := range specs {
		c := cell{s.Workload, s.Driver, s.Factors.Key(), s.Level}
		if _, ok := modes[c]; !ok {
			order = append(order, c)
		}
		if !slices.Contains(modes[c], s.Mode) {
			modes[c] = append(modes[c], s.Mode)
		}
	}
	n := 0
	for _, c := range order {
		for _, p := range Pairs(modes[c], baseline, func(m string) bool { return m != Noop }) {
			if p.Against == baseline {
				n++
			}
		}
	}
	return n * len(primaryMetrics())
}

// Cell is one group of the report: a section at one level, every mode.
type Cell struct {
	Section
	Level int
}

// Finding is one paired comparison of the report: a primary, judged in
// the confirmatory family, or an estimate with its interval.
type Finding struct {
	Cell
	Pair
	Metric *Metric
	// Est is the effect: Yuen's trimmed mean of the per-block log ratios (a
	// tenth of the blocks, at least one, set aside at each end) with its 95%
	// interval; N is 0 where too few blocks paired.
	Est paired.Robust
	// Primary is the confirmatory verdict; nil for an estimate.
	Primary *paired.Primary
	// Withheld says why the cell's verdicts are withheld ("too noisy: …"),
	// or is empty.
	Withheld string
}

// IsPrimary reports whether the finding is one of the confirmatory family.
func (f Finding) IsPrimary() bool { return f.Primary != nil }

// Short renders the finding for a table cell.
func (f Finding) Short() string {
	switch {
	case f.Withheld != "":
		return "withheld: " + f.Withheld
	case f.Primary != nil:
		return f.Primary.Short()
	case f.Est.N == 0:
		return "— (too few blocks for an interval)"
	}
	return fmt.Sprintf("%s [%s, %s]", paired.Pct(f.Est.Ratio-1), paired.Pct(f.Est.Lo-1), paired.Pct(f.Est.Hi-1))
}

// cellNotes is what the report says of a cell's runs beside its verdicts.
type cellNotes struct {
	// loadBound counts the cell's load-bound runs (any mode): the driver
	// limited them, so the cell keeps its figures but leaves the headline.
	loadBound int
	// steal counts its runs with notable steal.
	steal int
}

// isPrimary says whether a pair on a metric belongs to the confirmatory
// family: a design against the baseline on a Primary metric.
func (rep *Report) isPrimary(p Pair, m *Metric) bool {
	return m.Primary && p.Against == rep.baseline() && !strings.HasSuffix(p.Design, plan.TwinSuffix)
}

// analyse pairs every cell's runs by block: the primaries are judged as
// one family (paired.Confirm), everything else is estimated
// (paired.Estimates), and the A/A control, where it ran, is estimated on
// every compared metric.
func (rep *Report) analyse() error {
	rep.notes = map[Cell]cellNotes{}
	type pending struct {
		f      Finding
		c      paired.Comparison
		enough bool
	}
	var all []pending
	for _, c := range rep.cells() {
		var modes []string
		backed := map[string]bool{}
		notes := cellNotes{}
		for _, mode := range rep.arms() {
			g := rep.group(c.Section, c.Level, mode)
			if g == nil {
				continue
			}
			if !strings.HasSuffix(mode, plan.TwinSuffix) {
				modes = append(modes, mode)
			}
			backed[mode] = g.StoreBacked
			for _, r := range g.records {
				if r.Derived.Class == record.ClassLoadBound {
					notes.loadBound++
				}
				if r.Derived.HighSteal {
					notes.steal++
				}
			}
		}
		rep.notes[c] = notes
		pairs := Pairs(modes, rep.baseline(), func(m string) bool { return backed[m] })
		if twin := rep.baseline() + plan.TwinSuffix; rep.group(c.Section, c.Level, twin) != nil && backed[rep.baseline()] {
			pairs = append(pairs, Pair{twin, rep.baseline()})
		}
		withheld := rep.gate.withheld(c, paired.MinBlocksRobust)
		compare := func(p Pair, d, a *Group) error {
			for _, m := range Compared() {
				dv, av, err := blockValues(d, a, m)
				if err != nil {
					return err
				}
				f := Finding{Cell: c, Pair: p, Metric: m}
				if rep.isPrimary(p, m) {
					f.Withheld = withheld
				}
				all = append(all, pending{f: f, enough: len(dv) >= 3,
					c: paired.Comparison{Design: p.Design, Baseline: p.Against, Metric: m.Label, DesignValues: dv, BaselineValues: av}})
			}
			return nil
		}
		for _, p := range pairs {
			if err := compare(p, rep.group(c.Section, c.Level, p.Design), rep.group(c.Section, c.Level, p.Against)); err != nil {
				return err
			}
		}
		// Each mode against itself under the first value of an arm factor
		// (the first Go runtime), from the same blocks.
		for _, ap := range rep.armPairs(c) {
			if err := compare(ap.Pair, rep.group(c.Section, c.Level, ap.Design), rep.group(ap.against.Section, ap.against.Level, ap.Design)); err != nil {
				return err
			}
		}
	}
	// The family is every primary the plan declared, withheld or not:
	// one with too few clean blocks counts as untested (p = 1) rather than
	// leaving the family smaller after the data.
	var prim, est []int
	for i, p := range all {
		if rep.isPrimary(p.f.Pair, p.f.Metric) {
			prim = append(prim, i)
		} else if p.enough {
			est = append(est, i)
		}
	}
	if len(prim) > 0 {
		var cs []paired.Comparison
		for _, i := range prim {
			cs = append(cs, all[i].c)
		}
		ps, err := paired.Confirm(cs, Alpha, rep.margin())
		if err != nil {
			return err
		}
		for k, i := range prim {
			p := ps[k]
			all[i].f.Primary, all[i].f.Est = &p, p.Robust
		}
	}
	if len(est) > 0 {
		var cs []paired.Comparison
		for _, i := range est {
			cs = append(cs, all[i].c)
		}
		rs, err := paired.Estimates(cs, Alpha)
		if err != nil {
			return err
		}
		for k, i := range est {
			all[i].f.Est = rs[k]
		}
	}
	rep.Findings = nil
	for _, p := range all {
		rep.Findings = append(rep.Findings, p.f)
	}
	return nil
}

// margin is the equivalence margin of the report's primaries.
func (rep *Report) margin() float64 {
	if rep.Meta.Gate != nil && rep.Meta.Gate.Margin > 0 {
		return rep.Meta.Gate.Margin
	}
	return DefaultMargin
}

// DefaultMargin is the equivalence margin of records from before it could
// be chosen.
const DefaultMargin = 0.03

// arms are the modes the report groups runs by: the plan's modes, and the
// A/A control's second arm where it ran.
func (rep *Report) arms() []string {
	out := slices.Clone(rep.Meta.Modes)
	if g := rep.Meta.Gate; g != nil && g.Twin != "" {
		out = append(out, g.Twin+plan.TwinSuffix)
	}
	return out
}

// WidestPrimary is the largest half-width of the primaries' intervals
// (paired.Robust.HalfWidth), the figure -precision sizes the plan by;
// ok is false when no primary has an interval.
func (rep *Report) WidestPrimary() (hw float64, ok bool) {
	for _, f := range rep.Findings {
		if f.Primary != nil && f.Est.N >= paired.MinBlocksRobust {
			hw, ok = max(hw, f.Est.HalfWidth()), true
		}
	}
	return hw, ok
}

// blockValues are a metric's values of two groups, paired by block (the
// repetition) in block order. A block is left out where either run failed
// or has no usable figure (none, zero, or not finite): a ratio needs two
// positive values.
func blockValues(d, a *Group, m *Metric) (dv, av []float64, err error) {
	byBlock := func(g *Group) (map[int]float64, error) {
		out := map[int]float64{}
		seen := map[int]bool{}
		for _, r := range g.records {
			if seen[r.Rep] {
				return nil, fmt.Errorf("report: %s at %d, mode %s: two runs in block %d; a block holds one run of each mode", g.Section, g.Level, g.Mode, r.Rep)
			}
			seen[r.Rep] = true
			v, ok, err := m.value(r)
			if err != nil {
				return nil, fmt.Errorf("run %s: %w", r.ID, err)
			}
			if ok && !r.Failed() && v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
				out[r.Rep] = v
			}
		}
		return out, nil
	}
	dm, err := byBlock(d)
	if err != nil {
		return nil, nil, err
	}
	am, err := byBlock(a)
	if err != nil {
		return nil, nil, err
	}
	var blocks []int
	for b := range dm {
		if _, ok := am[b]; ok {
			blocks = append(blocks, b)
		}
	}
	slices.Sort(blocks)
	for _, b := range blocks {
		dv, av = append(dv, dm[b]), append(av, am[b])
	}
	return dv, av, nil
}

// cells are the report's groups without their modes, in the groups' order.
func (rep *Report) cells() []Cell {
	var out []Cell
	for _, g := range rep.Groups {
		c := Cell{g.Section, g.Level}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// baseline is the design the report compares the others with.
func (rep *Report) baseline() string { return cmp.Or(rep.Meta.Baseline, DefaultBaseline) }

// findings are a cell's verdicts against one mode, in the order analysed.
func (rep *Report) findings(c Cell) []Finding {
	var out []Finding
	for _, f := range rep.Findings {
		if f.Cell == c {
			out = append(out, f)
		}
	}
	return out
}

// finding is one cell's verdict of design against another on m.
func (rep *Report) finding(c Cell, p Pair, m *Metric) (Finding, bool) {
	for _, f := range rep.Findings {
		if f.Cell == c && f.Pair == p && f.Metric == m {
			return f, true
		}
	}
	return Finding{}, false
}

// pairsOf are the pairs a cell's findings compare, in order.
func pairsOf(fs []Finding) []Pair {
	var out []Pair
	for _, f := range fs {
		if !slices.Contains(out, f.Pair) {
			out = append(out, f.Pair)
		}
	}
	return out
}

func fmtAlpha() string { return strings.TrimRight(fmt.Sprintf("%.3f", Alpha), "0") }
