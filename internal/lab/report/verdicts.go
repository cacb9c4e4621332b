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

// Family is how many tests the report of these runs will hold: for every
// group of the plan (workload, driver, factors, level), its pairs times the
// compared metrics. The runner warns, before the first run, when its
// repetitions are too few for any of them to reach Alpha after Holm.
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
		n += len(Pairs(modes[c], baseline, func(m string) bool { return m != Noop }))
	}
	return n * len(Compared())
}

// Cell is one group of the report: a section at one level, every mode.
type Cell struct {
	Section
	Level int
}

// Finding is one paired verdict of the report.
type Finding struct {
	Cell
	paired.Verdict
	Metric *Metric
}

// cellNotes is what the report says of a cell's runs beside its verdicts.
type cellNotes struct {
	// loadBound counts the cell's load-bound runs (any mode): the driver
	// limited them, so the cell keeps its figures but leaves the headline.
	loadBound int
	// steal counts its runs with notable steal.
	steal int
}

// analyse pairs every cell's runs by block and judges every comparison of
// the report as one family.
func (rep *Report) analyse() error {
	rep.notes = map[Cell]cellNotes{}
	var cs []paired.Comparison
	var where []Finding
	for _, c := range rep.cells() {
		var modes []string
		backed := map[string]bool{}
		notes := cellNotes{}
		for _, mode := range rep.Meta.Modes {
			g := rep.group(c.Section, c.Level, mode)
			if g == nil {
				continue
			}
			modes = append(modes, mode)
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
		for _, p := range Pairs(modes, rep.baseline(), func(m string) bool { return backed[m] }) {
			d, a := rep.group(c.Section, c.Level, p.Design), rep.group(c.Section, c.Level, p.Against)
			for _, m := range Compared() {
				dv, av, err := blockValues(d, a, m)
				if err != nil {
					return err
				}
				if len(dv) == 0 {
					continue // no block with both: nothing to pair
				}
				cs = append(cs, paired.Comparison{Design: p.Design, Baseline: p.Against, Metric: m.Label, DesignValues: dv, BaselineValues: av})
				where = append(where, Finding{Cell: c, Metric: m})
			}
		}
	}
	if len(cs) == 0 {
		return nil
	}
	vs, err := paired.Analyse(cs, Alpha)
	if err != nil {
		return err
	}
	for i := range vs {
		where[i].Verdict = vs[i]
	}
	rep.Findings = where
	return nil
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
		if f.Cell == c && f.Design == p.Design && f.Baseline == p.Against && f.Metric == m {
			return f, true
		}
	}
	return Finding{}, false
}

// pairsOf are the pairs a cell's findings compare, in order.
func pairsOf(fs []Finding) []Pair {
	var out []Pair
	for _, f := range fs {
		if p := (Pair{f.Design, f.Baseline}); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// powerNote says, when any comparison had too few blocks for a test, how
// many this report's family needs; "" when every one could reach Alpha.
func (rep *Report) powerNote() string {
	tooFew := 0
	for _, f := range rep.Findings {
		if f.State == paired.TooFew {
			tooFew++
		}
	}
	if tooFew == 0 {
		return ""
	}
	family := len(rep.Findings)
	need, err := paired.MinBlocks(Alpha, family)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("Too few repetitions for a test in %d of the %d comparisons: with %d comparisons adjusted together, "+
		"the signed-rank test needs at least %d blocks with both runs for its smallest p (2/2^n) to reach %s after Holm's "+
		"adjustment; their effects and intervals are shown, but no verdict.", tooFew, family, family, need, fmtAlpha())
}

func fmtAlpha() string { return strings.TrimRight(fmt.Sprintf("%.3f", Alpha), "0") }
