package report

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/locklab/locklab/internal/lab/attrib"
	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
)

// attributed: the run's server was profiled and its CPU folded
// (-attribute).
func attributed(r *record.Run) bool { return r.Attribution != nil }

// whyMetrics are the catalogue's rows of CPU attribution: each category's
// CPU per call (figures.json; the Why section shows them), and the system
// calls per call (the level table).
func whyMetrics() []*Metric {
	var out []*Metric
	for _, c := range attrib.CategoryNames() {
		out = append(out, &Metric{Key: "cpu_us_per_call." + c, Label: "server CPU per call in " + c, Unit: UnitUs, Better: Lower,
			Applies: attributed, Read: func(r *record.Run) (float64, error) { return r.CategoryUs(c) }})
	}
	return append(out, mWritesPerCall, mReadsPerCall)
}

var (
	mWritesPerCall = &Metric{Key: "write_syscalls_per_call", Label: "write system calls per call", Unit: UnitPerCall, Better: Lower,
		Block: BlockServer, HideEmpty: true, Applies: attributed, Read: func(r *record.Run) (float64, error) {
			_, w, err := r.Attribution.PerCall()
			return w, err
		}}
	mReadsPerCall = &Metric{Key: "read_syscalls_per_call", Label: "read system calls per call", Unit: UnitPerCall, Better: Lower,
		Block: BlockServer, HideEmpty: true, Applies: attributed, Read: func(r *record.Run) (float64, error) {
			r0, _, err := r.Attribution.PerCall()
			return r0, err
		}}
)

// whyPart is one row of a Why table: how it reads a run's figure, and
// whether the rows above it add up to it.
type whyPart struct {
	name  string
	unit  Unit
	value func(r *record.Run) (float64, error)
	// category: one of attrib's, whose differences split the total's.
	category bool
}

// whyParts are the rows: every category, their total (the server's CPU per
// call), then the system calls.
func whyParts() []whyPart {
	var out []whyPart
	for _, c := range attrib.CategoryNames() {
		out = append(out, whyPart{name: c, unit: UnitUs, category: true, value: func(r *record.Run) (float64, error) { return r.CategoryUs(c) }})
	}
	return append(out,
		whyPart{name: "total: " + mServerCPUPerCall.Label, unit: UnitUs, value: mServerCPUPerCall.Read},
		whyPart{name: mWritesPerCall.Label, unit: UnitPerCall, value: mWritesPerCall.Read},
		whyPart{name: mReadsPerCall.Label, unit: UnitPerCall, value: mReadsPerCall.Read},
	)
}

// whyRuns are a group's runs that attribution can speak for: profiled and
// not failed.
func whyRuns(g *Group) []*record.Run {
	if g == nil {
		return nil
	}
	var out []*record.Run
	for _, r := range g.records {
		if attributed(r) && !r.Failed() {
			out = append(out, r)
		}
	}
	return out
}

// whyCell is one group of the Why section: a cell's modes with profiled
// runs, and the pairs among them.
type whyCell struct {
	Cell
	modes []string
	runs  map[string][]*record.Run
	pairs []Pair
}

func (rep *Report) whyCells() []whyCell { return rep.cellsWith(whyRuns) }

// cellsWith is every cell where runsOf finds runs of some mode: the cells
// of a section that speaks for only some runs (attributed, traced).
func (rep *Report) cellsWith(runsOf func(*Group) []*record.Run) []whyCell {
	var out []whyCell
	for _, c := range rep.cells() {
		wc := whyCell{Cell: c, runs: map[string][]*record.Run{}}
		backed := map[string]bool{}
		for _, mode := range rep.Meta.Modes {
			g := rep.group(c.Section, c.Level, mode)
			if rs := runsOf(g); len(rs) > 0 {
				wc.modes = append(wc.modes, mode)
				wc.runs[mode] = rs
				backed[mode] = g.StoreBacked
			}
		}
		if len(wc.modes) == 0 {
			continue
		}
		wc.pairs = Pairs(wc.modes, rep.baseline(), func(m string) bool { return backed[m] })
		out = append(out, wc)
	}
	return out
}

// pairedDifference is a figure's per-block differences between two modes'
// runs, paired by block (a block where either lacks it is left out), and
// their mean with its interval; ok is false when no block has both.
func pairedDifference(d, a []*record.Run, value func(*record.Run) (float64, error)) (paired.Difference, bool, error) {
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

// medianOf is a figure's median over runs, with its interval.
func medianOf(runs []*record.Run, value func(*record.Run) (float64, error)) (Stat, error) {
	var vals []float64
	var ids []string
	for _, r := range runs {
		v, err := value(r)
		if err != nil {
			return Stat{}, err
		}
		vals, ids = append(vals, v), append(ids, r.ID)
	}
	return statOfValues(vals, ids), nil
}

const whyHowToRead = "How to read: in every run marked for attribution (`-attribute`), the runner took the server's CPU profile " +
	"over the measured window (`/debug/pprof/profile`, 100 samples a second of CPU) and folded each sample into one category " +
	"by the first frame from the leaf that a category claims: a mechanism (a channel operation, a lock, the scheduler, a " +
	"system call, the GC) wins over the code that called it, so the same store code under two designs shows where their " +
	"costs part. A category's CPU per call is its share of the profile times the server's CPU per call (its own account " +
	"over the window), so the categories add up to the total. Each design's column is the median over its profiled runs; " +
	"a difference is the mean of the per-block differences between two designs' runs of the same block, with its 95% " +
	"t interval — differences, not ratios, since a category a design never enters is zero. A category is a count of " +
	"samples: one with a few dozen samples in a run is known to tens of percent. The stacked bars are each category's " +
	"median, so they need not add up to the median total exactly. System calls are counted from /proc/PID/io over the " +
	"same window as the calls they are divided by (a ceiling on the socket writes: the runtime writes a few to wake " +
	"its poller). A profile shows CPU, not waiting: a design's commands waiting for its owner show here only as the CPU " +
	"that parking and waking cost."

// whyBlocks is the Why section: one group per cell where attribution ran,
// then what attribution cost where it was measured. Every figure it reads
// the catalogue has read before (Aggregate fails a record that lacks one),
// so an error here is a bug, said in the report rather than lost.
func (rep *Report) whyBlocks(withCharts bool) []block {
	out, err := rep.why(withCharts)
	if err != nil {
		return []block{para("The Why section failed: " + err.Error())}
	}
	return out
}

func (rep *Report) why(withCharts bool) ([]block, error) {
	cells := rep.whyCells()
	if len(cells) == 0 {
		return nil, nil
	}
	out := []block{heading{2, "Why: where the server's CPU went"}, para(whyHowToRead), categoriesTable()}
	for _, wc := range cells {
		name := rep.cellName(wc.Cell)
		out = append(out, heading{3, "Why · " + name})
		sentences, err := whySentences(wc, rep.baseline())
		if err != nil {
			return nil, err
		}
		for _, s := range sentences {
			out = append(out, para(s))
		}
		t, err := whyTable(wc)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		if withCharts {
			out = append(out, whyChart(wc, name))
		}
	}
	cost, err := rep.attributionCost()
	if err != nil {
		return nil, err
	}
	return append(out, cost...), nil
}

// categoriesTable says what each category holds, from attrib's table.
func categoriesTable() table {
	t := table{header: []string{"category", "holds"}}
	for _, c := range attrib.Categories() {
		t.rows = append(t.rows, []string{c.Name, c.Holds})
	}
	return t
}

func whyTable(wc whyCell) (table, error) {
	header := []string{"per call"}
	for _, m := range wc.modes {
		header = append(header, fmt.Sprintf("%s (%d runs)", m, len(wc.runs[m])))
	}
	for _, p := range wc.pairs {
		header = append(header, p.Design+" − "+p.Against)
	}
	t := table{header: header}
	for _, part := range whyParts() {
		row := []string{part.name}
		for _, m := range wc.modes {
			s, err := medianOf(wc.runs[m], part.value)
			if err != nil {
				return table{}, err
			}
			row = append(row, fmtCI(s, part.unit.Format))
		}
		for _, p := range wc.pairs {
			e, ok, err := pairedDifference(wc.runs[p.Design], wc.runs[p.Against], part.value)
			if err != nil {
				return table{}, err
			}
			if !ok {
				row = append(row, "— (no block with both)")
				continue
			}
			row = append(row, fmtDifference(e, part.unit))
		}
		t.rows = append(t.rows, row)
	}
	samples := []string{"profile samples a run"}
	for _, m := range wc.modes {
		s, _ := medianOf(wc.runs[m], func(r *record.Run) (float64, error) { return float64(r.Attribution.Samples), nil })
		samples = append(samples, fmtCI(s, UnitCount.Format))
	}
	for range wc.pairs {
		samples = append(samples, "")
	}
	t.rows = append(t.rows, samples)
	return t, nil
}

// fmtDifference prints a mean difference with its interval, signed.
func fmtDifference(e paired.Difference, u Unit) string {
	f := func(v float64) string { return signed(v, u) }
	if zero := u.Format(0); f(e.Lo) == zero && f(e.Hi) == zero {
		return zero
	}
	if math.IsInf(e.Hi, 1) {
		return f(e.Mean) + " [no interval: one block]"
	}
	return fmt.Sprintf("%s [%s, %s]", f(e.Mean), f(e.Lo), f(e.Hi))
}

// signed prints a value of the unit with its sign, a true minus; none on
// what prints as zero.
func signed(v float64, u Unit) string {
	s := u.Format(math.Abs(v))
	switch {
	case s == u.Format(0):
		return s
	case v < 0:
		return "−" + s
	}
	return "+" + s
}

// whySentences: for each design against the baseline, how much more (or
// less) CPU it costs per call and the two categories that explain most of
// the difference, with their shares of it. The categories' mean
// differences add up to the total's (each run's categories add up to its
// total, and a mean is additive), so the shares are parts of one whole; a
// category that moved against the difference makes the others' shares add
// up to more than 100%.
func whySentences(wc whyCell, baseline string) ([]string, error) {
	var out []string
	for _, p := range wc.pairs {
		if p.Against != baseline {
			continue
		}
		total, ok, err := pairedDifference(wc.runs[p.Design], wc.runs[p.Against], mServerCPUPerCall.Read)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // no block with both: the table says so
		}
		var parts []namedDiff
		for _, wp := range whyParts() {
			if !wp.category {
				continue
			}
			e, ok, err := pairedDifference(wc.runs[p.Design], wc.runs[p.Against], wp.value)
			if err != nil {
				return nil, err
			}
			if ok {
				parts = append(parts, namedDiff{wp.name, e.Mean})
			}
		}
		out = append(out, whySentence(p, total, parts))
	}
	return out, nil
}

// namedDiff is one category's mean difference.
type namedDiff struct {
	name string
	diff float64
}

// whySentence words one pair's difference and its two largest parts.
func whySentence(p Pair, total paired.Difference, parts []namedDiff) string {
	var b strings.Builder
	more := "more"
	if total.Mean < 0 {
		more = "less"
	}
	fmt.Fprintf(&b, "%s costs %s %s per call than %s", p.Design, UnitUs.Format(math.Abs(total.Mean)), more, p.Against)
	if math.IsInf(total.Hi, 1) {
		b.WriteString(" (one block: no interval)")
	} else {
		fmt.Fprintf(&b, " (95%% interval %s to %s, %d blocks)", signed(total.Lo, UnitUs), signed(total.Hi, UnitUs), total.N)
	}
	if total.Mean == 0 {
		return b.String() + "."
	}
	type share struct {
		name string
		of   float64
	}
	var shares []share
	for _, d := range parts {
		// Below half a percent a part prints as 0%: rounding, not a part.
		if s := d.diff / total.Mean; s >= 0.005 {
			shares = append(shares, share{d.name, s})
		}
	}
	slices.SortStableFunc(shares, func(x, y share) int { return cmp.Compare(y.of, x.of) })
	pc := func(s share) string {
		return fmt.Sprintf("%s (%s)", s.name, strconv.FormatFloat(100*s.of, 'f', 0, 64)+"%")
	}
	switch {
	case len(shares) == 0:
	case len(shares) == 1:
		fmt.Fprintf(&b, "; %s explains it", pc(shares[0]))
	case shares[0].of+shares[1].of >= 0.5:
		fmt.Fprintf(&b, "; %s and %s explain most of it", pc(shares[0]), pc(shares[1]))
	default:
		fmt.Fprintf(&b, "; its largest parts are %s and %s", pc(shares[0]), pc(shares[1]))
	}
	if !math.IsInf(total.Hi, 1) && total.Contains(0) {
		b.WriteString(", but the interval holds no difference at all")
	}
	return b.String() + "."
}

// whyChart stacks each design's categories, µs per call.
func whyChart(wc whyCell, name string) block {
	title := name + ": server CPU per call by category (µs, medians)"
	p := plot.New()
	p.Title.Text = "server CPU per call by category (µs, medians)"
	p.Y.Label.Text = "server CPU per call (µs)"
	p.NominalX(wc.modes...)
	p.Add(plotter.NewGrid())
	var below *plotter.BarChart
	var legend []*plotter.BarChart
	top := 0.0
	for i, c := range attrib.CategoryNames() {
		vals := make(plotter.Values, len(wc.modes))
		for j, m := range wc.modes {
			s, err := medianOf(wc.runs[m], func(r *record.Run) (float64, error) { return r.CategoryUs(c) })
			if err != nil {
				return para("chart " + title + " failed: " + err.Error())
			}
			vals[j] = s.Median
		}
		bar, err := plotter.NewBarChart(vals, vg.Points(28))
		if err != nil {
			return para("chart " + title + " failed: " + err.Error())
		}
		bar.Color = categoryColors[i%len(categoryColors)]
		bar.LineStyle.Width = 0
		if below != nil {
			bar.StackOn(below)
		}
		p.Add(bar)
		legend = append(legend, bar)
		below = bar
	}
	// Top down, as the stacks read.
	names := attrib.CategoryNames()
	for i := len(legend) - 1; i >= 0; i-- {
		p.Legend.Add(names[i], legend[i])
	}
	for _, m := range wc.modes {
		s, _ := medianOf(wc.runs[m], mServerCPUPerCall.Read)
		top = max(top, s.Median)
	}
	// The legend on the right, beside the bars rather than over them.
	p.Legend.Top, p.Legend.Left = true, false
	p.X.Min, p.X.Max = -0.6, float64(len(wc.modes))+0.8
	p.Y.Min, p.Y.Max = 0, top*1.1
	svg, err := svgOf(p)
	if err != nil {
		return para("chart " + title + " failed: " + err.Error())
	}
	return chart{title: title, svg: svg}
}

// categoryColors tell ten categories apart (Tableau 10); plotutil's
// palette has seven.
var categoryColors = []color.Color{
	color.RGBA{0x4e, 0x79, 0xa7, 0xff}, color.RGBA{0xf2, 0x8e, 0x2b, 0xff}, color.RGBA{0xe1, 0x57, 0x59, 0xff},
	color.RGBA{0x76, 0xb7, 0xb2, 0xff}, color.RGBA{0x59, 0xa1, 0x4f, 0xff}, color.RGBA{0xed, 0xc9, 0x48, 0xff},
	color.RGBA{0xb0, 0x7a, 0xa1, 0xff}, color.RGBA{0xff, 0x9d, 0xa7, 0xff}, color.RGBA{0x9c, 0x75, 0x5f, 0xff},
	color.RGBA{0xba, 0xb0, 0xac, 0xff},
}

// attributionCost is what attribution cost, where the plan measured it:
// with -attribute off,on every combination ran both ways in every block.
func (rep *Report) attributionCost() ([]block, error) {
	return rep.onOffCost(plan.Attribute, "What attribution costs",
		"Every combination ran twice in every block, without attribution and then with it: each cell is "+
			"the design's effect with attribution against itself without it, the geometric mean of the per-block ratios with "+
			"its 95% interval (as the headline's, but outside its family of tests). It covers the whole of what `-attribute` "+
			"turns on: the profiler's signals and the server's Prometheus metrics, which its `/debug/pprof` endpoint brings.")
}

// onOffCost is what a factor of values off and on cost where the plan ran
// both: each design's runs with it on against its runs with it off in the
// same block, on the metrics every pair is compared on, under title with
// the paragraph text.
func (rep *Report) onOffCost(factor, title, text string) ([]block, error) {
	vals := rep.Meta.Factors.Values(factor)
	if !slices.Contains(vals, "off") || !slices.Contains(vals, "on") {
		return nil, nil
	}
	metrics := Compared()
	header := []string{"group", "design"}
	for _, m := range metrics {
		header = append(header, m.Label+": on vs off")
	}
	t := table{header: header}
	for _, c := range rep.cells() {
		if c.Factors.Get(factor) != "on" {
			continue
		}
		off := Cell{Section: c.Section, Level: c.Level}
		off.Factors = c.Factors.With(factor, "off")
		for _, mode := range rep.Meta.Modes {
			on, plain := rep.group(c.Section, c.Level, mode), rep.group(off.Section, off.Level, mode)
			if on == nil || plain == nil {
				continue
			}
			row := []string{rep.cellNameWithout(off, factor), mode}
			for _, m := range metrics {
				dv, av, err := blockValues(on, plain, m)
				if err != nil {
					return nil, err
				}
				row = append(row, fmtRatioEffect(dv, av))
			}
			t.rows = append(t.rows, row)
		}
	}
	if len(t.rows) == 0 {
		return nil, nil
	}
	return []block{heading{3, title}, para(text), t}, nil
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
	f := func(x float64) string { return signed(100*(x-1), UnitPercent) }
	if math.IsInf(e.Hi, 1) {
		return f(e.GeoMean) + " [no interval: one block]"
	}
	return fmt.Sprintf("%s [%s, %s] (%d blocks)", f(e.GeoMean), f(e.Lo), f(e.Hi), e.N)
}

// cellNameWithout is cellName without one factor: the name of the cells
// that differ only in it.
func (rep *Report) cellNameWithout(c Cell, factor string) string {
	parts := []string{c.Workload, c.Driver}
	for _, f := range plan.Factors {
		if f.Name != factor && len(rep.Meta.Factors.Values(f.Name)) > 1 {
			parts = append(parts, f.Label+" "+c.Factors.Get(f.Name))
		}
	}
	return strings.Join(append(parts, rep.levelName(c.Level)), " · ")
}
