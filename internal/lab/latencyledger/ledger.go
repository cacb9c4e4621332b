package latencyledger

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/locklab/locklab/internal/lab/instrumented"
	"github.com/locklab/locklab/internal/lab/ledger"
	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
)

// ledgerRuns are a group's runs whose server was traced (-ledger on) and
// that did not fail.
func ledgerRuns(g *report.Group) []*record.Run {
	if g == nil {
		return nil
	}
	var out []*record.Run
	for _, r := range g.Records() {
		if r.Ledger != nil && !r.Failed() {
			out = append(out, r)
		}
	}
	return out
}

// A ledgerBand is one kind of call the section breaks down: its name, and
// its mean breakdown in a run's ledger.
type ledgerBand struct {
	name  string
	short string // in the chart's labels
	of    func(s *ledger.Summary) map[string]float64
}

var (
	bandMedian = ledgerBand{"a median call (ranked 45th to 55th percentile)", "p50", func(s *ledger.Summary) map[string]float64 { return s.AtP50Us }}
	bandP99    = ledgerBand{"a p99 call (ranked 98.5th to 99.5th percentile)", "p99", func(s *ledger.Summary) map[string]float64 { return s.AtP99Us }}
	bandTail   = ledgerBand{"the tail (every call slower than the p99)", "tail", func(s *ledger.Summary) map[string]float64 { return s.TailUs }}
)

// stateOf reads one state's time of a band from a run.
func stateOf(b ledgerBand, state string) func(r *record.Run) (float64, error) {
	return func(r *record.Run) (float64, error) {
		v, ok := b.of(r.Ledger)[state]
		if !ok {
			return 0, fmt.Errorf("run %s: ledger has no state %q (read with another table of states)", r.ID, state)
		}
		return v, nil
	}
}

// totalOf is a band's whole time: its states summed in the table's order.
func totalOf(b ledgerBand) func(r *record.Run) (float64, error) {
	return func(r *record.Run) (float64, error) {
		var t float64
		for _, c := range ledger.Names() {
			t += b.of(r.Ledger)[c]
		}
		return t, nil
	}
}

const ledgerHowToRead = "How to read: in every run marked for the ledger (`-ledger on`), the runner took the server's " +
	"execution trace over the measured window (`/debug/pprof/trace`), and every call — from the handler's first " +
	"interceptor to its return, marked by the server while a trace is taken — had its time put in the state its " +
	"goroutine was in: running, runnable (waiting for a CPU), blocked on a channel, blocked on a lock, in a system call " +
	"or the network poller, the garbage collector's, another wait, and what the trace could not place (unattributed). " +
	"A call's states add up to its time. The median call is the mean breakdown of the calls ranked 45th to 55th " +
	"percentile by their time, the p99 call of those ranked 98.5th to 99.5th, the tail of every call slower than the " +
	"p99. Each design's column is the median over its traced runs; a difference is the mean of the per-block " +
	"differences between two designs' runs of the same block, with its 95% t interval. The ledger is the handler's " +
	"view: an owner design's command runs on the owner, which the caller sees as time blocked on a channel."

// ledgerBlocks is the ledger's section: one group per cell where the
// ledger ran, then what tracing cost where it was measured.
func (rep view) ledgerBlocks(withCharts bool) []report.Piece {
	out, err := rep.ledgerSection(withCharts)
	if err != nil {
		return []report.Piece{report.Para("The ledger's section failed: " + err.Error())}
	}
	return out
}

func (rep view) ledgerSection(withCharts bool) ([]report.Piece, error) {
	cells := instrumented.CellsWith(rep.Report, ledgerRuns)
	if len(cells) == 0 {
		return nil, nil
	}
	out := []report.Piece{report.Heading(2, "Where the time went: each call's server-side time by state"), report.Para(ledgerHowToRead), statesTable()}
	for _, wc := range cells {
		name := rep.CellName(wc.Cell)
		out = append(out, report.Heading(3, "Where the time went · "+name))
		for _, b := range []ledgerBand{bandMedian, bandTail} {
			s, err := ledgerSentences(wc, rep.Baseline(), b)
			if err != nil {
				return nil, err
			}
			for _, line := range s {
				out = append(out, report.Para(line))
			}
		}
		for _, b := range []ledgerBand{bandMedian, bandTail} {
			t, err := ledgerTable(wc, b)
			if err != nil {
				return nil, err
			}
			out = append(out, report.Para("Per call, "+b.name+":"), t.Piece())
		}
		qt, err := stateQuantilesTable(wc)
		if err != nil {
			return nil, err
		}
		out = append(out, report.Para("Each state's own median and p99 over calls (each state ranked on its own, so they do not add up to a call):"), qt.Piece())
		ct, ok, err := clocksTable(wc)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, report.Para(clocksHowToRead), ct.Piece())
		}
		if withCharts {
			out = append(out, ledgerChart(wc, name))
		}
	}
	cost, err := instrumented.OnOffCost(rep.Report, plan.Ledger, "What tracing costs",
		"Every combination ran twice in every block, without the ledger's trace and then with it: each cell is the "+
			"design's effect with tracing against itself without it, the geometric mean of the per-block ratios with its "+
			"95% interval (as the headline's, but outside its family of tests). It covers the whole of what `-ledger on` "+
			"turns on: the runtime's tracer, the server's marks of its calls, and the Prometheus metrics its "+
			"`/debug/pprof` endpoint brings.")
	if err != nil {
		return nil, err
	}
	return append(out, cost...), nil
}

// statesTable says what each state holds, from the ledger's table.
func statesTable() report.Piece {
	t := report.Rows{Header: []string{"state", "holds"}}
	for _, c := range ledger.Categories {
		t.Rows = append(t.Rows, []string{c.Name, c.Help})
	}
	return t.Piece()
}

// ledgerTable is one band's states, a row each, then their total and the
// share of the calls' time the ledger placed.
func ledgerTable(wc instrumented.CellRuns, b ledgerBand) (report.Rows, error) {
	t := report.Rows{Header: wc.Header("state")}
	type part struct {
		name  string
		unit  report.Unit
		value func(r *record.Run) (float64, error)
	}
	var parts []part
	for _, c := range ledger.Names() {
		parts = append(parts, part{c, report.UnitUs, stateOf(b, c)})
	}
	parts = append(parts, part{"total", report.UnitUs, totalOf(b)})
	if b.short == bandMedian.short {
		parts = append(parts, part{"calls traced a run", report.UnitCount, func(r *record.Run) (float64, error) { return float64(r.Ledger.Calls), nil }},
			part{"share placed in a state", report.UnitShare, func(r *record.Run) (float64, error) { return r.Ledger.Accounted, nil }})
	}
	for _, pt := range parts {
		row, err := wc.Row(pt.name, pt.unit, pt.value, pt.unit == report.UnitUs)
		if err != nil {
			return report.Rows{}, err
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// ledgerSentences: for each design against the baseline, the state whose
// time in the band differs most between them, with its interval.
func ledgerSentences(wc instrumented.CellRuns, baseline string, b ledgerBand) ([]string, error) {
	var out []string
	for _, p := range wc.Pairs {
		if p.Against != baseline {
			continue
		}
		best, found := "", false
		var d paired.Difference
		for _, c := range ledger.Names() {
			e, ok, err := instrumented.PairedDifference(wc.Runs[p.Design], wc.Runs[p.Against], stateOf(b, c))
			if err != nil {
				return nil, err
			}
			if ok && (!found || math.Abs(e.Mean) > math.Abs(d.Mean)) {
				best, found, d = c, true, e
			}
		}
		if !found {
			continue // no block with both: the table says so
		}
		var s strings.Builder
		more := "more"
		if d.Mean < 0 {
			more = "less"
		}
		fmt.Fprintf(&s, "In %s, %s spends %s %s than %s in %s, the state whose time differs most", b.name, p.Design,
			report.UnitUs.Format(math.Abs(d.Mean)), more, p.Against, best)
		if math.IsInf(d.Hi, 1) {
			s.WriteString(" (one block: no interval)")
		} else {
			fmt.Fprintf(&s, " (95%% interval %s to %s, %d blocks)", instrumented.Signed(d.Lo, report.UnitUs), instrumented.Signed(d.Hi, report.UnitUs), d.N)
			if d.Contains(0) {
				s.WriteString(", but the interval holds no difference at all")
			}
		}
		out = append(out, s.String()+".")
	}
	return out, nil
}

// ledgerChart stacks each design's states at the median and at the p99,
// side by side: µs per call, medians over runs.
func ledgerChart(wc instrumented.CellRuns, name string) report.Piece {
	title := name + ": a call's time by state at the median and the p99 (µs, medians over runs)"
	bands := []ledgerBand{bandMedian, bandP99}
	var labels []string
	for _, m := range wc.Modes {
		for _, b := range bands {
			labels = append(labels, m+" "+b.short)
		}
	}
	p := plot.New()
	p.Title.Text = "a call's time by state (µs, medians over runs)"
	p.Y.Label.Text = "server-side time per call (µs)"
	p.NominalX(labels...)
	p.Add(plotter.NewGrid())
	var below *plotter.BarChart
	var legend []*plotter.BarChart
	names := ledger.Names()
	for i, c := range names {
		vals := make(plotter.Values, 0, len(labels))
		for _, m := range wc.Modes {
			for _, b := range bands {
				s, err := instrumented.MedianOf(wc.Runs[m], stateOf(b, c))
				if err != nil {
					return report.Para("chart " + title + " failed: " + err.Error())
				}
				vals = append(vals, s.Median)
			}
		}
		bar, err := plotter.NewBarChart(vals, vg.Points(20))
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
	for i := len(legend) - 1; i >= 0; i-- {
		p.Legend.Add(names[i], legend[i])
	}
	top := 0.0
	for _, m := range wc.Modes {
		s, err := instrumented.MedianOf(wc.Runs[m], totalOf(bandP99))
		if err != nil {
			return report.Para("chart " + title + " failed: " + err.Error())
		}
		top = max(top, s.Median)
	}
	p.Legend.Top, p.Legend.Left = true, false
	p.X.Min, p.X.Max = -0.6, float64(len(labels))+1.2
	p.Y.Min, p.Y.Max = 0, top*1.1
	svg, err := report.SVG(p)
	if err != nil {
		return report.Para("chart " + title + " failed: " + err.Error())
	}
	return report.Chart(title, svg)
}

// stateQuantilesTable is each state's median and p99 over a run's calls,
// medians over runs, every design's two columns side by side.
func stateQuantilesTable(wc instrumented.CellRuns) (report.Rows, error) {
	header := []string{"state"}
	for _, m := range wc.Modes {
		header = append(header, m+" p50", m+" p99")
	}
	t := report.Rows{Header: header}
	for _, c := range ledger.Names() {
		row := []string{c}
		for _, m := range wc.Modes {
			for _, of := range []func(s *ledger.Summary) map[string]float64{
				func(s *ledger.Summary) map[string]float64 { return s.StateP50Us },
				func(s *ledger.Summary) map[string]float64 { return s.StateP99Us },
			} {
				st, err := instrumented.MedianOf(wc.Runs[m], stateOf(ledgerBand{of: of}, c))
				if err != nil {
					return report.Rows{}, err
				}
				row = append(row, report.FmtCI(st, report.UnitUs.Format))
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}
