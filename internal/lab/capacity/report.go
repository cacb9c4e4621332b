package capacity

import (
	"cmp"
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/locklab/locklab/internal/lab/chart"
	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
)

// CapacityReport is a finished capacity study: its record, its runs, each
// design's knee per block as a bracket, and the paired comparison of each
// design's latency with the baseline's at every fixed offered rate.
type CapacityReport struct {
	Meta record.Meta
	Cap  *Capacity
	SLO  SLO
	runs map[string]*record.Run
	// latency are the fixed-rate comparisons, one family.
	latency map[latKey]paired.Primary
}

// capKey is one design of one workload and driver.
type capKey struct{ Workload, Driver, Mode string }

// latKey is one design of one workload and driver at one offered rate.
type latKey struct {
	capKey
	Rate int
}

// NewCapacity builds the report of a capacity study.
func NewCapacity(meta record.Meta, c *Capacity, runs []*record.Run) (*CapacityReport, error) {
	slo, err := ParseSLO(c.SLO)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CapacityFile, err)
	}
	rep := &CapacityReport{Meta: meta, Cap: c, SLO: slo, runs: map[string]*record.Run{}, latency: map[latKey]paired.Primary{}}
	for _, r := range runs {
		rep.runs[r.ID] = r
	}
	// The primary comparison: at every ladder rate, each design's latency
	// (the objective's percentile) against the baseline's in the same
	// block, one family over the report.
	var cs []paired.Comparison
	var keys []latKey
	base := rep.baseline()
	for _, sec := range rep.sections() {
		for _, rate := range rep.ladderRates(sec) {
			bv := rep.blockLatency(sec, base, rate)
			for _, m := range meta.Modes {
				if m == base || m == report.Noop {
					continue
				}
				dv := rep.blockLatency(sec, m, rate)
				c := paired.Comparison{Design: m, Baseline: base, Metric: fmt.Sprintf("%s at %s/s", rep.SLO.Pct, report.FmtNum(float64(rate)))}
				for _, b := range slices.Sorted(maps.Keys(dv)) {
					if w, ok := bv[b]; ok {
						c.DesignValues, c.BaselineValues = append(c.DesignValues, dv[b]), append(c.BaselineValues, w)
					}
				}
				if len(c.DesignValues) > 0 {
					cs, keys = append(cs, c), append(keys, latKey{capKey{sec.Workload, sec.Driver, m}, rate})
				}
			}
		}
	}
	if len(cs) > 0 {
		ps, err := paired.Confirm(cs, report.Alpha, rep.margin())
		if err != nil {
			return nil, err
		}
		for i, p := range ps {
			rep.latency[keys[i]] = p
		}
	}
	return rep, nil
}

func (rep *CapacityReport) baseline() string {
	return cmp.Or(rep.Meta.Baseline, report.DefaultBaseline)
}

// margin is the equivalence margin the study was run with.
func (rep *CapacityReport) margin() float64 {
	if rep.Meta.Gate != nil && rep.Meta.Gate.Margin > 0 {
		return rep.Meta.Gate.Margin
	}
	return report.DefaultMargin
}

// blockLatency is a design's latency at a ladder rate in each block where
// the point counts: the gate kept it, the driver offered the rate, and the
// run has a positive figure.
func (rep *CapacityReport) blockLatency(sec capKey, mode string, rate int) map[int]float64 {
	out := map[int]float64{}
	for _, p := range rep.ladderPoints(sec, mode, rate) {
		if r, ok := rep.runs[p.RunID]; ok && r.Result != nil && p.Beyond == "" {
			if v := rep.SLO.LatencyMs(r.Result.LatencyMs); v > 0 {
				out[p.Block] = v
			}
		}
	}
	return out
}

// sections are the workload · driver pairs of the study, in meta's order.
func (rep *CapacityReport) sections() []capKey {
	var out []capKey
	for _, wl := range rep.Meta.Workloads {
		for _, d := range rep.Meta.Drivers {
			if slices.ContainsFunc(rep.Cap.Knees, func(k CapKnee) bool { return k.Workload == wl && k.Driver == d }) {
				out = append(out, capKey{Workload: wl, Driver: d})
			}
		}
	}
	return out
}

// knees are a design's knees, one per block.
func (rep *CapacityReport) knees(k capKey) []CapKnee {
	var out []CapKnee
	for _, kn := range rep.Cap.Knees {
		if kn.Workload == k.Workload && kn.Driver == k.Driver && kn.Mode == k.Mode {
			out = append(out, kn)
		}
	}
	return out
}

// bracket is a knee as the search found it: its last passing and first
// failing rate, "[8,000, 8,600]".
func bracket(pass, fail float64) string {
	return "[" + report.FmtNum(pass) + ", " + report.FmtNum(fail) + "]"
}

// capText is a design's capacity over the blocks: the median of the last
// passing and the median of the first failing rates where the knee was
// found; or, where no block found it but every block passed the whole
// ladder, the ladder's top as a lower bound. The knees lie on the search's
// grid, so they get no interval: the brackets say what the search knows.
func (rep *CapacityReport) capText(k capKey) string {
	var pass, fail []float64
	low, above := math.Inf(1), true
	kns := rep.knees(k)
	for _, kn := range kns {
		if kn.Found {
			pass, fail = append(pass, float64(kn.Rate)), append(fail, float64(kn.Fail))
		}
		above = above && kn.State == KneeAbove.String()
		low = math.Min(low, float64(kn.Rate))
	}
	switch {
	case len(pass) > 0:
		return bracket(capMedian(pass), capMedian(fail)) + " calls/s"
	case above && len(kns) > 0:
		return "≥ " + report.FmtNum(low) + "/s (above the ladder)"
	}
	return "not found"
}

func capMedian(vs []float64) float64 {
	s := slices.Sorted(slices.Values(vs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Headline is the report's first line per workload and driver: "capacity
// at p99 ≤ 6 ms: mutex [8,000, 8,600] calls/s, …".
func (rep *CapacityReport) Headline(sec capKey) string {
	var parts []string
	for _, m := range rep.Meta.Modes {
		k := capKey{sec.Workload, sec.Driver, m}
		if len(rep.knees(k)) == 0 {
			continue
		}
		parts = append(parts, m+" "+rep.capText(k))
	}
	return fmt.Sprintf("%s · %s: capacity at %s, between the last passing and the first failing rate (medians over the blocks): %s",
		sec.Workload, sec.Driver, rep.SLO.Title(), strings.Join(parts, ", "))
}

func (rep *CapacityReport) blocks(withCharts bool) []report.Piece {
	out := append(report.DirtyWarning(rep.Meta), report.Heading(1, "locklab capacity study"))
	for _, sec := range rep.sections() {
		out = append(out, report.Para(rep.Headline(sec)))
	}
	out = append(out, rep.forestPicture()...)
	ladder := "-steps " + joinPct(rep.Cap.Steps) + " of the noop server's ceiling"
	if len(rep.Cap.Rates) > 0 {
		ladder = "-rates " + report.JoinInts(rep.Cap.Rates) + " calls/s"
	}
	out = append(out, report.Para(fmt.Sprintf("Command: `%s`, from %s. Objective `%s`: a run meets it when its %s latency, timed from each call's intended start, is at most %s ms, "+
		"it completed at least %s%% of the offered calls, and it had at most %d unexpected errors. Ladder: %s; then %d bisection steps per design and block "+
		"between its last passing and first failing rate. %d blocks (seed %s), each every design at every rate in the block's own order; the open model, "+
		"%s measured after %s of warm-up, at most %d calls in flight.",
		rep.Meta.Command, report.CommitText(rep.Meta), rep.Cap.SLO, rep.SLO.Pct, plan.FormatFloat(rep.SLO.BoundMs()), plan.FormatFloat(100*rep.SLO.Achieved), rep.SLO.Errors,
		ladder, rep.Cap.Refine, rep.Meta.Reps, seedText(rep.Meta.Seed), rep.Meta.Duration, rep.Meta.Warmup, rep.Meta.MaxVUsOpen)), report.TOC())
	if len(rep.Cap.Floors) > 0 {
		var fs []string
		for _, f := range rep.Cap.Floors {
			f1 := fmt.Sprintf("%s ms on %s · %s at %s calls/s (run %s)", plan.FormatFloat(math.Round(f.P99Ms*1000)/1000), f.Workload, f.Driver, report.FmtNum(float64(f.Rate)), f.RunID)
			if f.Spoiled != "" {
				f1 += ", measured beside something else every time: " + f.Spoiled
			}
			fs = append(fs, f1)
		}
		out = append(out, report.Para(fmt.Sprintf("The objective's bound comes from the harness's floor, measured before the search: the %s server's p99 in the open model at the ladder's lowest rate was %s; "+
			"the bound is %s× the highest (-floor-multiple), rounded up to 0.1 ms. A design's latency stands on this floor, so an objective below it finds no capacity.",
			report.Noop, strings.Join(fs, "; "), plan.FormatFloat(rep.Cap.FloorMultiple))))
	} else {
		out = append(out, report.Para("The objective was given with -slo."))
	}
	for _, c := range rep.Cap.Ceilings {
		out = append(out, report.Para(fmt.Sprintf("Ceiling of %s · %s: the noop server served %s calls/s to %d closed-model callers (run %s).",
			c.Workload, c.Driver, report.FmtNum(c.CallsPerS), rep.Cap.ProbeCallers, c.RunID)))
	}
	out = append(out, report.Para(rep.gateText()))
	out = append(out, report.Heading(2, "Capacity under the objective"))
	out = append(out, report.Para(fmt.Sprintf("A design's knee in a block is a bracket: its highest rate that met the objective and its lowest that did not, "+
		"[last passing, first failing]; it is claimed only when every rate tried below it passed and every one above failed (else *not found*, with why). "+
		"The ladder sets the brackets and %d bisection steps halve each one as many times, so a knee is known to within its bracket and no closer: "+
		"the brackets are given as they are, each block's and the medians of their ends, with no interval, for the knees lie on the search's grid. "+
		"The comparison of the designs is the latency at fixed offered rates, below.", rep.Cap.Refine)))
	for _, sec := range rep.sections() {
		out = append(out, report.Heading(3, sec.Workload+" · "+sec.Driver))
		out = append(out, rep.capacityTable(sec).Piece())
		if withCharts {
			out = append(out, rep.curveChart(sec))
		}
	}
	if len(rep.latency) > 0 {
		out = append(out, rep.latencyBlocks()...)
	}
	out = append(out, report.Heading(2, "Latency against offered load"))
	out = append(out, report.Para("Every ladder rate, per design: medians over the blocks (range) of the driver's percentiles from intended start, the achieved share of "+
		"the offered rate, unexpected errors summed, and in how many blocks the rate met the objective. A rate the driver could not offer is listed below the "+
		"table instead of plotted."))
	for _, sec := range rep.sections() {
		out = append(out, report.Heading(3, sec.Workload+" · "+sec.Driver+": the curves"))
		out = append(out, rep.curveTable(sec).Piece())
		if lim := rep.driverLimits(sec); len(lim) > 0 {
			out = append(out, report.Para(fmt.Sprintf("%s could not offer these rates on its CPUs (it dropped calls with its CPUs busy): %s. They are not plotted.",
				sec.Driver, strings.Join(lim, "; "))))
		}
	}
	if len(rep.Cap.Overruns) > 0 {
		out = append(out, report.Heading(2, "Overload"))
		out = append(out, report.Para(fmt.Sprintf("Past capacity, in every block: every design at %s× the best design's capacity (the highest median last passing rate) "+
			"for the overload phase, then at %s× for the phase after it, under each admission policy; the bound N of a policy is the best capacity × the "+
			"objective's latency (Little's law), the same for every design. Goodput is OK calls/s in the overload phase, and its share of the best capacity; "+
			"the p99 is that of the calls answered OK; peaks are over both phases, RSS against the server's RSS after its warm-up at capacity; recovery is "+
			"the time from the drop until every %s interval after it met the objective's latency (the whole phase when it never did). Over the blocks the "+
			"gate kept: means (geometric for the p99 and the RSS) with 95%% t intervals, errors summed, the highest peak of goroutines.",
			plan.FormatFloat(rep.Cap.Overload), plan.FormatFloat(rep.Cap.Recover), "100 ms")))
		for _, p := range Policies {
			if slices.Contains(rep.Cap.Policies, p.Name) {
				out = append(out, report.Para(fmt.Sprintf("`%s`: %s.", p.Name, p.Doc)))
			}
		}
		out = append(out, rep.overloadTable().Piece())
	}
	if probs := rep.problems(); len(probs) > 0 {
		out = append(out, report.Heading(2, "Problems"), report.Rows{Header: []string{"run", "problem"}, Rows: probs}.Piece())
	}
	return out
}

func joinPct(fs []float64) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = plan.FormatFloat(math.Round(f*100)) + "%"
	}
	return strings.Join(s, ", ")
}

func seedText(seed *int) string {
	if seed == nil {
		return "unrecorded"
	}
	return fmt.Sprint(*seed)
}

func (rep *CapacityReport) capacityTable(sec capKey) report.Rows {
	t := report.Rows{Header: []string{"design", "capacity: medians of the brackets (calls/s)", "brackets per block", "blocks found", "not found"}}
	for _, m := range rep.Meta.Modes {
		k := capKey{sec.Workload, sec.Driver, m}
		kns := rep.knees(k)
		if len(kns) == 0 {
			continue
		}
		var found int
		var brackets, why []string
		for _, kn := range kns {
			if kn.Found {
				found++
				brackets = append(brackets, fmt.Sprintf("%d: %s", kn.Block, bracket(float64(kn.Rate), float64(kn.Fail))))
				continue
			}
			w := fmt.Sprintf("block %d: %s", kn.Block, kn.State)
			if kn.Rate > 0 {
				w += fmt.Sprintf(" (≥ %s/s)", report.FmtNum(float64(kn.Rate)))
			}
			why = append(why, w)
		}
		t.Rows = append(t.Rows, []string{m, rep.capText(k), cmp.Or(strings.Join(brackets, "; "), "—"), fmt.Sprintf("%d of %d", found, len(kns)), cmp.Or(strings.Join(why, "; "), "—")})
	}
	return t
}

// latencyTable is the fixed-rate comparison of one workload and driver:
// per rate and design, the median latency over the clean blocks and the
// paired effect against the baseline.
func (rep *CapacityReport) latencyTable(sec capKey) report.Rows {
	t := report.Rows{Header: []string{"offered (calls/s)", "design", rep.SLO.Pct + ": median over the blocks", rep.baseline() + "'s", "against " + rep.baseline() + " (blocks)"}}
	for _, rate := range rep.ladderRates(sec) {
		base := rep.blockLatency(sec, rep.baseline(), rate)
		for _, m := range rep.Meta.Modes {
			p, ok := rep.latency[latKey{capKey{sec.Workload, sec.Driver, m}, rate}]
			if !ok {
				continue
			}
			dv := rep.blockLatency(sec, m, rate)
			t.Rows = append(t.Rows, []string{report.FmtNum(float64(rate)), m, report.FmtMs(capMedian(slices.Collect(maps.Values(dv)))), report.FmtMs(capMedian(slices.Collect(maps.Values(base)))),
				fmt.Sprintf("%s (%d)", p.Short(), p.N)})
		}
	}
	return t
}

// latencyBlocks are the section of the fixed-rate comparison.
func (rep *CapacityReport) latencyBlocks() []report.Piece {
	var out []report.Piece
	out = append(out, report.Heading(2, "Latency at fixed offered rates"))
	out = append(out, report.Para(fmt.Sprintf("The primary comparison: at every ladder rate, which every design was offered in every block, each design's %s against %s's "+
		"in the same block. Per comparison, Yuen's trimmed mean of the per-block log ratios with its 95%% interval; Holm-adjusted over the %d comparisons of "+
		"this report; equivalence within ±%s by two one-sided tests; fewer than %d clean blocks is too few for a verdict. Negative is faster than %s.",
		rep.SLO.Pct, rep.baseline(), len(rep.latency), paired.PctAbs(rep.margin()), paired.MinBlocksRobust, rep.baseline())))
	for _, sec := range rep.sections() {
		out = append(out, report.Heading(3, sec.Workload+" · "+sec.Driver+": "+rep.SLO.Pct+" against "+rep.baseline()))
		out = append(out, rep.latencyTable(sec).Piece())
	}
	return out
}

// forest is the capacity study's forest plot: its title and axis, every
// fixed-rate comparison in the latency tables' order, and the margin.
func (rep *CapacityReport) forest() chart.Forest {
	fo := chart.Forest{Title: fmt.Sprintf("%s against %s at each fixed offered rate: effect (%%) with its 95%% interval; dashed lines: the ±%s equivalence margin",
		rep.SLO.Pct, rep.baseline(), paired.PctAbs(rep.margin())), XLabel: rep.SLO.Pct + " against " + rep.baseline() + " (%)", Margin: rep.margin()}
	for _, sec := range rep.sections() {
		for _, rate := range rep.ladderRates(sec) {
			for _, m := range rep.Meta.Modes {
				p, ok := rep.latency[latKey{capKey{sec.Workload, sec.Driver, m}, rate}]
				if !ok {
					continue
				}
				fo.Rows = append(fo.Rows, chart.ForestRow{Label: fmt.Sprintf("%s · %s: %s at %s calls/s (%s)", sec.Workload, sec.Driver, m, report.FmtNum(float64(rate)), p.Outcome),
					Ratio: p.Ratio, Lo: p.Lo, Hi: p.Hi, Drawn: p.N > 0 && p.Outcome != paired.OutcomeTooFew, Outcome: p.Outcome})
			}
		}
	}
	return fo
}

// Forest draws the capacity study's forest plot; nil without comparisons.
func (rep *CapacityReport) Forest() ([]byte, error) {
	return rep.forest().SVG()
}

// forestPicture is the plot as the report's piece: in report.md a link to
// report.ForestFile, in report.html the drawing; nothing without rows.
func (rep *CapacityReport) forestPicture() []report.Piece {
	svg, err := rep.Forest()
	switch {
	case err != nil:
		return []report.Piece{report.Para("forest plot failed: " + err.Error())}
	case svg == nil:
		return nil
	}
	return []report.Piece{report.Picture(rep.forest().Title, svg, report.ForestFile)}
}

// gateText says what the validity gate did in the study.
func (rep *CapacityReport) gateText() string {
	g := rep.Cap.Gate
	rule := "no rule recorded"
	if mg := rep.Meta.Gate; mg != nil {
		if mg.MaxForeign > 0 {
			rule = fmt.Sprintf("a run that something else took more than %s of its CPUs from spoils its cell, which runs again up to %d more times",
				report.UnitShare.Format(mg.MaxForeign), mg.Reruns)
		} else {
			rule = "the rule was off (-max-foreign 0)"
		}
	}
	text := fmt.Sprintf("The validity gate (%s): of %d cells (a ladder rate with every design, a refinement run, a design under a policy, each in a block), "+
		"%d were rerun and %d dropped after every rerun, with %d spoiled runs in all. A dropped cell's points are kept in capacity.json but neither judged nor compared.",
		rule, g.Cells, g.Rerun, g.Dropped, g.SpoiledRuns)
	if median, most, ok := report.ForeignSpread(slices.Collect(maps.Values(rep.runs))); ok {
		text += fmt.Sprintf(" During the runs something else took a median %s of a run's CPUs (at most %s).",
			report.UnitShare.Format(median), report.UnitShare.Format(most))
	}
	return text
}

// ladderPoints are the ladder's points of a design at a rate, over blocks.
func (rep *CapacityReport) ladderPoints(sec capKey, mode string, rate int) []CapPoint {
	var out []CapPoint
	for _, p := range rep.Cap.Points {
		if p.Phase == "ladder" && p.Workload == sec.Workload && p.Driver == sec.Driver && p.Mode == mode && p.Rate == rate && p.Spoiled == "" {
			out = append(out, p)
		}
	}
	return out
}

func (rep *CapacityReport) ladderRates(sec capKey) []int {
	var out []int
	for _, p := range rep.Cap.Points {
		if p.Phase == "ladder" && p.Workload == sec.Workload && p.Driver == sec.Driver && !slices.Contains(out, p.Rate) {
			out = append(out, p.Rate)
		}
	}
	slices.Sort(out)
	return out
}

// figure is a figure of the runs behind points, over the blocks.
func (rep *CapacityReport) figure(pts []CapPoint, f func(*record.Run) float64) report.Stat {
	var vals []float64
	var ids []string
	for _, p := range pts {
		if r, ok := rep.runs[p.RunID]; ok && r.Result != nil && p.Beyond == "" {
			vals, ids = append(vals, f(r)), append(ids, r.ID)
		}
	}
	return report.StatOf(vals, ids)
}

func (rep *CapacityReport) curveTable(sec capKey) report.Rows {
	t := report.Rows{Header: []string{"offered (calls/s)", "design", "p50", "p99", "p99.9", "achieved", "errors", "dropped", "met objective"}}
	for _, rate := range rep.ladderRates(sec) {
		for _, m := range rep.Meta.Modes {
			pts := rep.ladderPoints(sec, m, rate)
			if len(pts) == 0 {
				continue
			}
			lat := func(g func(*record.Run) float64) string { return report.FmtCI(rep.figure(pts, g), report.FmtMs) }
			achieved := report.FmtCI(rep.figure(pts, func(r *record.Run) float64 { return r.Result.CallsPerS / float64(rate) }), func(v float64) string {
				return fmt.Sprintf("%.1f%%", 100*v)
			})
			var errs, dropped int64
			pass := 0
			for _, p := range pts {
				if r, ok := rep.runs[p.RunID]; ok && r.Result != nil {
					errs += r.Result.UnexpectedErrors
					dropped += r.Result.Dropped // k6: its dropped_iterations
				}
				if p.Pass {
					pass++
				}
			}
			t.Rows = append(t.Rows, []string{report.FmtNum(float64(rate)), m,
				lat(func(r *record.Run) float64 { return r.Result.LatencyMs.P50 }),
				lat(func(r *record.Run) float64 { return r.Result.LatencyMs.P99 }),
				lat(func(r *record.Run) float64 { return r.Result.LatencyMs.P999 }),
				achieved, fmt.Sprint(errs), fmt.Sprint(dropped), fmt.Sprintf("%d of %d", pass, len(pts))})
		}
	}
	return t
}

func (rep *CapacityReport) driverLimits(sec capKey) []string {
	var out []string
	for _, p := range rep.Cap.Points {
		if p.Workload == sec.Workload && p.Driver == sec.Driver && p.Beyond != "" {
			out = append(out, fmt.Sprintf("%s/s (%s, block %d: %s)", report.FmtNum(float64(p.Rate)), p.Mode, p.Block, p.Beyond))
		}
	}
	return out
}

// curveChart draws the objective's percentile against the offered rate
// per design, log latency, the blocks' range as error bars, and the
// objective as a horizontal line.
func (rep *CapacityReport) curveChart(sec capKey) report.Piece {
	title := fmt.Sprintf("%s · %s: %s latency against offered load", sec.Workload, sec.Driver, rep.SLO.Pct)
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "offered rate (calls/s)"
	p.Y.Label.Text = rep.SLO.Pct + " from intended start (ms, log)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	rates := rep.ladderRates(sec)
	for i, m := range rep.Meta.Modes {
		var pts report.ErrPoints
		for _, rate := range rates {
			s := rep.figure(rep.ladderPoints(sec, m, rate), func(r *record.Run) float64 { return rep.SLO.LatencyMs(r.Result.LatencyMs) })
			if s.N == 0 || s.Min <= 0 {
				continue
			}
			pts.XYs = append(pts.XYs, plotter.XY{X: float64(rate), Y: s.Median})
			pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{s.Median - s.Min, s.Max - s.Median})
		}
		if len(pts.XYs) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts.XYs)
		if err != nil {
			return report.Para("chart " + title + " failed: " + err.Error())
		}
		c := plotutil.Color(i)
		line.Color, points.Color, points.Shape = c, c, plotutil.Shape(i)
		bars, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return report.Para("chart " + title + " failed: " + err.Error())
		}
		bars.Color = c
		p.Add(line, points, bars)
		p.Legend.Add(m, line, points)
	}
	bound := rep.SLO.BoundMs()
	obj := plotter.NewFunction(func(float64) float64 { return bound })
	obj.Color = color.Gray{Y: 80}
	obj.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(obj)
	p.Legend.Add("objective "+rep.SLO.Title(), obj)
	p.Legend.Top, p.Legend.Left = true, true
	svg, err := report.SVG(p)
	if err != nil {
		return report.Para("chart " + title + " failed: " + err.Error())
	}
	return report.Chart(title, svg)
}

func boundText(n int) string {
	if n == 0 {
		return "—"
	}
	return fmt.Sprint(n)
}

// codesText lists the status codes other than OK, most frequent first.
func codesText(by map[string]int64) string {
	type kv struct {
		k string
		v int64
	}
	var xs []kv
	for k, v := range by {
		if k != "OK" && v > 0 {
			xs = append(xs, kv{k, v})
		}
	}
	if len(xs) == 0 {
		return "none"
	}
	slices.SortFunc(xs, func(a, b kv) int { return cmp.Or(cmp.Compare(b.v, a.v), cmp.Compare(a.k, b.k)) })
	var parts []string
	for _, x := range xs {
		parts = append(parts, fmt.Sprintf("%s %s", x.k, report.FmtNum(float64(x.v))))
	}
	return strings.Join(parts, ", ")
}

func (rep *CapacityReport) problems() [][]string {
	var ids []string
	for id, r := range rep.runs {
		if r.Failed() {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var out [][]string
	for _, id := range ids {
		out = append(out, []string{id, strings.Join(rep.runs[id].Problems, "; ")})
	}
	return out
}

// Markdown renders the capacity report.
func (rep *CapacityReport) Markdown() string { return report.RenderMarkdown(rep.blocks(false)) }

// HTML renders the capacity report as one self-contained page.
func (rep *CapacityReport) HTML() (string, error) {
	return report.RenderHTML("locklab capacity study", rep.blocks(true))
}
