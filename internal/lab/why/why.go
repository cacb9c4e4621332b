package why

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/locklab/locklab/internal/lab/attrib"
	"github.com/locklab/locklab/internal/lab/instrumented"
	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
)

// whyPart is one row of a Why table: how it reads a run's figure, and
// whether the rows above it add up to it.
type whyPart struct {
	name  string
	unit  report.Unit
	value func(r *record.Run) (float64, error)
	// category: one of attrib's, whose differences split the total's.
	category bool
}

// whyParts are the rows: every category, their total (the server's CPU per
// call), then the system calls.
func whyParts() []whyPart {
	var out []whyPart
	for _, c := range attrib.CategoryNames() {
		out = append(out, whyPart{name: c, unit: report.UnitUs, category: true, value: func(r *record.Run) (float64, error) { return r.CategoryUs(c) }})
	}
	return append(out,
		whyPart{name: "total: " + report.ServerCPUPerCall.Label, unit: report.UnitUs, value: report.ServerCPUPerCall.Read},
		whyPart{name: report.WritesPerCall.Label, unit: report.UnitPerCall, value: report.WritesPerCall.Read},
		whyPart{name: report.ReadsPerCall.Label, unit: report.UnitPerCall, value: report.ReadsPerCall.Read},
	)
}

// whyRuns are a group's runs that attribution can speak for: profiled and
// not failed.
func whyRuns(g *report.Group) []*record.Run {
	if g == nil {
		return nil
	}
	var out []*record.Run
	for _, r := range g.Records() {
		if report.Attributed(r) && !r.Failed() {
			out = append(out, r)
		}
	}
	return out
}

func (rep view) whyCells() []instrumented.CellRuns {
	return instrumented.CellsWith(rep.Report, whyRuns)
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
func (rep view) whyBlocks(withCharts bool) []report.Piece {
	out, err := rep.why(withCharts)
	if err != nil {
		return []report.Piece{report.Para("The Why section failed: " + err.Error())}
	}
	return out
}

func (rep view) why(withCharts bool) ([]report.Piece, error) {
	cells := rep.whyCells()
	if len(cells) == 0 {
		return nil, nil
	}
	out := []report.Piece{report.Heading(2, "Why: where the server's CPU went"), report.Para(whyHowToRead), categoriesTable()}
	for _, wc := range cells {
		name := rep.CellName(wc.Cell)
		out = append(out, report.Heading(3, "Why · "+name))
		sentences, err := whySentences(wc, rep.Baseline())
		if err != nil {
			return nil, err
		}
		for _, s := range sentences {
			out = append(out, report.Para(s))
		}
		t, err := whyTable(wc)
		if err != nil {
			return nil, err
		}
		out = append(out, t.Piece())
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
func categoriesTable() report.Piece {
	t := report.Rows{Header: []string{"category", "holds"}}
	for _, c := range attrib.Categories() {
		t.Rows = append(t.Rows, []string{c.Name, c.Holds})
	}
	return t.Piece()
}

func whyTable(wc instrumented.CellRuns) (report.Rows, error) {
	t := report.Rows{Header: wc.Header("per call")}
	for _, part := range whyParts() {
		row, err := wc.Row(part.name, part.unit, part.value, true)
		if err != nil {
			return report.Rows{}, err
		}
		t.Rows = append(t.Rows, row)
	}
	samples := []string{"profile samples a run"}
	for _, m := range wc.Modes {
		s, _ := instrumented.MedianOf(wc.Runs[m], func(r *record.Run) (float64, error) { return float64(r.Attribution.Samples), nil })
		samples = append(samples, report.FmtCI(s, report.UnitCount.Format))
	}
	for range wc.Pairs {
		samples = append(samples, "")
	}
	t.Rows = append(t.Rows, samples)
	return t, nil
}

// whySentences: for each design against the baseline, how much more (or
// less) CPU it costs per call and the two categories that explain most of
// the difference, with their shares of it. The categories' mean
// differences add up to the total's (each run's categories add up to its
// total, and a mean is additive), so the shares are parts of one whole; a
// category that moved against the difference makes the others' shares add
// up to more than 100%.
func whySentences(wc instrumented.CellRuns, baseline string) ([]string, error) {
	var out []string
	for _, p := range wc.Pairs {
		if p.Against != baseline {
			continue
		}
		total, ok, err := instrumented.PairedDifference(wc.Runs[p.Design], wc.Runs[p.Against], report.ServerCPUPerCall.Read)
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
			e, ok, err := instrumented.PairedDifference(wc.Runs[p.Design], wc.Runs[p.Against], wp.value)
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
func whySentence(p report.Pair, total paired.Difference, parts []namedDiff) string {
	var b strings.Builder
	more := "more"
	if total.Mean < 0 {
		more = "less"
	}
	fmt.Fprintf(&b, "%s costs %s %s per call than %s", p.Design, report.UnitUs.Format(math.Abs(total.Mean)), more, p.Against)
	if math.IsInf(total.Hi, 1) {
		b.WriteString(" (one block: no interval)")
	} else {
		fmt.Fprintf(&b, " (95%% interval %s to %s, %d blocks)", instrumented.Signed(total.Lo, report.UnitUs), instrumented.Signed(total.Hi, report.UnitUs), total.N)
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
func whyChart(wc instrumented.CellRuns, name string) report.Piece {
	title := name + ": server CPU per call by category (µs, medians)"
	p := plot.New()
	p.Title.Text = "server CPU per call by category (µs, medians)"
	p.Y.Label.Text = "server CPU per call (µs)"
	p.NominalX(wc.Modes...)
	p.Add(plotter.NewGrid())
	var below *plotter.BarChart
	var legend []*plotter.BarChart
	top := 0.0
	for i, c := range attrib.CategoryNames() {
		vals := make(plotter.Values, len(wc.Modes))
		for j, m := range wc.Modes {
			s, err := instrumented.MedianOf(wc.Runs[m], func(r *record.Run) (float64, error) { return r.CategoryUs(c) })
			if err != nil {
				return report.Para("chart " + title + " failed: " + err.Error())
			}
			vals[j] = s.Median
		}
		bar, err := plotter.NewBarChart(vals, vg.Points(28))
		if err != nil {
			return report.Para("chart " + title + " failed: " + err.Error())
		}
		bar.Color = instrumented.CategoryColors[i%len(instrumented.CategoryColors)]
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
	for _, m := range wc.Modes {
		s, _ := instrumented.MedianOf(wc.Runs[m], report.ServerCPUPerCall.Read)
		top = max(top, s.Median)
	}
	// The legend on the right, beside the bars rather than over them.
	p.Legend.Top, p.Legend.Left = true, false
	p.X.Min, p.X.Max = -0.6, float64(len(wc.Modes))+0.8
	p.Y.Min, p.Y.Max = 0, top*1.1
	svg, err := report.SVG(p)
	if err != nil {
		return report.Para("chart " + title + " failed: " + err.Error())
	}
	return report.Chart(title, svg)
}

// attributionCost is what attribution cost, where the plan measured it:
// with -attribute off,on every combination ran both ways in every block.
func (rep view) attributionCost() ([]report.Piece, error) {
	return instrumented.OnOffCost(rep.Report, plan.Attribute, "What attribution costs",
		"Every combination ran twice in every block, without attribution and then with it: each cell is "+
			"the design's effect with attribution against itself without it, the geometric mean of the per-block ratios with "+
			"its 95% interval (as the headline's, but outside its family of tests). It covers the whole of what `-attribute` "+
			"turns on: the profiler's signals and the server's Prometheus metrics, which its `/debug/pprof` endpoint brings.")
}
