package instrumented

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
)

// CellRuns is one cell of such a section: its modes with runs the section
// speaks for (profiled, traced), and the pairs among them.
type CellRuns struct {
	report.Cell
	Modes []string                 // the modes with runs here, in the report's order
	Runs  map[string][]*record.Run // each mode's runs the section speaks for
	Pairs []report.Pair            // the pairs among Modes, as the verdicts pair them
}

// CellsWith is every cell of rep where runsOf finds runs of some mode: the
// cells of a section that speaks for only some runs (attributed, traced).
func CellsWith(rep *report.Report, runsOf func(*report.Group) []*record.Run) []CellRuns {
	var out []CellRuns
	for _, c := range rep.Cells() {
		wc := CellRuns{Cell: c, Runs: map[string][]*record.Run{}}
		backed := map[string]bool{}
		for _, mode := range rep.Meta.Modes {
			g := rep.Group(c.Section, c.Level, mode)
			if rs := runsOf(g); len(rs) > 0 {
				wc.Modes = append(wc.Modes, mode)
				wc.Runs[mode] = rs
				backed[mode] = g.StoreBacked
			}
		}
		if len(wc.Modes) == 0 {
			continue
		}
		wc.Pairs = report.Pairs(wc.Modes, rep.Baseline(), func(m string) bool { return backed[m] })
		out = append(out, wc)
	}
	return out
}

// Header is the header of a table of the cell's figures: first, then
// every mode with its runs, then every pair's difference.
func (wc CellRuns) Header(first string) []string {
	header := []string{first}
	for _, m := range wc.Modes {
		header = append(header, fmt.Sprintf("%s (%d runs)", m, len(wc.Runs[m])))
	}
	for _, p := range wc.Pairs {
		header = append(header, p.Design+" − "+p.Against)
	}
	return header
}

// Row is one figure's row of such a table: its median in every mode with
// its interval, then every pair's paired difference, or empty cells where
// differences says the figure has none.
func (wc CellRuns) Row(name string, unit report.Unit, value func(*record.Run) (float64, error), differences bool) ([]string, error) {
	row := []string{name}
	for _, m := range wc.Modes {
		s, err := MedianOf(wc.Runs[m], value)
		if err != nil {
			return nil, err
		}
		row = append(row, report.FmtCI(s, unit.Format))
	}
	for _, p := range wc.Pairs {
		if !differences {
			row = append(row, "")
			continue
		}
		e, ok, err := PairedDifference(wc.Runs[p.Design], wc.Runs[p.Against], value)
		if err != nil {
			return nil, err
		}
		if !ok {
			row = append(row, "— (no block with both)")
			continue
		}
		row = append(row, FmtDifference(e, unit))
	}
	return row, nil
}

// PairedDifference is a figure's per-block differences between two modes'
// runs, paired by block (a block where either lacks it is left out), and
// their mean with its interval; ok is false when no block has both.
func PairedDifference(d, a []*record.Run, value func(*record.Run) (float64, error)) (paired.Difference, bool, error) {
	byBlock := func(runs []*record.Run) (map[int]float64, error) {
		out := map[int]float64{}
		for _, r := range runs {
			v, err := value(r)
			if err != nil {
				return nil, err
			}
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				out[r.Rep] = v
			}
		}
		return out, nil
	}
	dm, err := byBlock(d)
	if err != nil {
		return paired.Difference{}, false, err
	}
	am, err := byBlock(a)
	if err != nil {
		return paired.Difference{}, false, err
	}
	var blocks []int
	for b := range dm {
		if _, ok := am[b]; ok {
			blocks = append(blocks, b)
		}
	}
	if len(blocks) == 0 {
		return paired.Difference{}, false, nil
	}
	slices.Sort(blocks)
	var dv, av []float64
	for _, b := range blocks {
		dv, av = append(dv, dm[b]), append(av, am[b])
	}
	diffs, err := paired.Differences(dv, av)
	if err != nil {
		return paired.Difference{}, false, err
	}
	e, err := paired.EstimateDifference(diffs)
	return e, err == nil, err
}

// MedianOf is a figure's median over runs, with its interval.
func MedianOf(runs []*record.Run, value func(*record.Run) (float64, error)) (report.Stat, error) {
	var vals []float64
	var ids []string
	for _, r := range runs {
		v, err := value(r)
		if err != nil {
			return report.Stat{}, err
		}
		vals, ids = append(vals, v), append(ids, r.ID)
	}
	return report.StatOf(vals, ids), nil
}

// FmtDifference prints a mean difference with its interval, signed.
func FmtDifference(e paired.Difference, u report.Unit) string {
	f := func(v float64) string { return Signed(v, u) }
	if zero := u.Format(0); f(e.Lo) == zero && f(e.Hi) == zero {
		return zero
	}
	if math.IsInf(e.Hi, 1) {
		return f(e.Mean) + " [no interval: one block]"
	}
	return fmt.Sprintf("%s [%s, %s]", f(e.Mean), f(e.Lo), f(e.Hi))
}

// Signed prints a value of the unit with its sign, a true minus; none on
// what prints as zero.
func Signed(v float64, u report.Unit) string {
	s := u.Format(math.Abs(v))
	switch {
	case s == u.Format(0):
		return s
	case v < 0:
		return "−" + s
	}
	return "+" + s
}

// OnOffCost is what a factor of values off and on cost where the plan ran
// both: each design's runs with it on against its runs with it off in the
// same block, on the metrics every pair is compared on, under title with
// the paragraph text.
func OnOffCost(rep *report.Report, factor, title, text string) ([]report.Piece, error) {
	vals := rep.Meta.Factors.Values(factor)
	if !slices.Contains(vals, "off") || !slices.Contains(vals, "on") {
		return nil, nil
	}
	metrics := report.Compared()
	t := report.Rows{Header: []string{"group", "design"}}
	for _, m := range metrics {
		t.Header = append(t.Header, m.Label+": on vs off")
	}
	for _, c := range rep.Cells() {
		if c.Factors.Get(factor) != "on" {
			continue
		}
		off := report.Cell{Section: c.Section, Level: c.Level}
		off.Factors = c.Factors.With(factor, "off")
		for _, mode := range rep.Meta.Modes {
			on, plain := rep.Group(c.Section, c.Level, mode), rep.Group(off.Section, off.Level, mode)
			if on == nil || plain == nil {
				continue
			}
			row := []string{cellNameWithout(rep, off, factor), mode}
			for _, m := range metrics {
				dv, av, err := report.BlockValues(on, plain, m)
				if err != nil {
					return nil, err
				}
				row = append(row, fmtRatioEffect(dv, av))
			}
			t.Rows = append(t.Rows, row)
		}
	}
	if len(t.Rows) == 0 {
		return nil, nil
	}
	return []report.Piece{report.Heading(3, title), report.Para(text), t.Piece()}, nil
}

// fmtRatioEffect is the geometric mean ratio of paired values with its
// interval, as a signed percentage.
func fmtRatioEffect(dv, av []float64) string {
	if len(dv) == 0 {
		return "— (no block with both)"
	}
	r, err := paired.Ratios(dv, av)
	if err != nil {
		return "— (" + err.Error() + ")"
	}
	e, err := paired.Estimate(r)
	if err != nil {
		return "— (" + err.Error() + ")"
	}
	f := func(x float64) string { return Signed(100*(x-1), report.UnitPercent) }
	if math.IsInf(e.Hi, 1) {
		return f(e.GeoMean) + " [no interval: one block]"
	}
	return fmt.Sprintf("%s [%s, %s] (%d blocks)", f(e.GeoMean), f(e.Lo), f(e.Hi), e.N)
}

// cellNameWithout is the report's name of a cell without one factor: the
// name of the cells that differ only in it.
func cellNameWithout(rep *report.Report, c report.Cell, factor string) string {
	parts := []string{c.Workload, c.Driver}
	for _, f := range plan.Factors {
		if f.Name != factor && len(rep.Meta.Factors.Values(f.Name)) > 1 {
			parts = append(parts, f.Label+" "+c.Factors.Get(f.Name))
		}
	}
	return strings.Join(append(parts, rep.LevelName(c.Level)), " · ")
}

// CategoryColors tell ten categories apart (Tableau 10); plotutil's
// palette has seven.
var CategoryColors = []color.Color{
	color.RGBA{0x4e, 0x79, 0xa7, 0xff}, color.RGBA{0xf2, 0x8e, 0x2b, 0xff}, color.RGBA{0xe1, 0x57, 0x59, 0xff},
	color.RGBA{0x76, 0xb7, 0xb2, 0xff}, color.RGBA{0x59, 0xa1, 0x4f, 0xff}, color.RGBA{0xed, 0xc9, 0x48, 0xff},
	color.RGBA{0xb0, 0x7a, 0xa1, 0xff}, color.RGBA{0xff, 0x9d, 0xa7, 0xff}, color.RGBA{0x9c, 0x75, 0x5f, 0xff},
	color.RGBA{0xba, 0xb0, 0xac, 0xff},
}
