package report

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
)

// CapacityReport is a finished capacity study: its record, its runs, and
// the paired comparison of each design's per-block capacity with the
// baseline's.
type CapacityReport struct {
	Meta     record.Meta
	Cap      *record.Capacity
	SLO      plan.SLO
	runs     map[string]*record.Run
	verdicts map[capKey]paired.Verdict
}

// capKey is one design of one workload and driver.
type capKey struct{ Workload, Driver, Mode string }

// NewCapacity builds the report of a capacity study.
func NewCapacity(meta record.Meta, c *record.Capacity, runs []*record.Run) (*CapacityReport, error) {
	slo, err := plan.ParseSLO(c.SLO)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", record.CapacityFile, err)
	}
	rep := &CapacityReport{Meta: meta, Cap: c, SLO: slo, runs: map[string]*record.Run{}, verdicts: map[capKey]paired.Verdict{}}
	for _, r := range runs {
		rep.runs[r.ID] = r
	}
	var cs []paired.Comparison
	var keys []capKey
	base := cmp.Or(meta.Baseline, DefaultBaseline)
	for _, sec := range rep.sections() {
		bv := rep.blockCaps(capKey{sec.Workload, sec.Driver, base})
		for _, m := range meta.Modes {
			if m == base || m == Noop {
				continue
			}
			dv := rep.blockCaps(capKey{sec.Workload, sec.Driver, m})
			var c paired.Comparison
			c.Design, c.Baseline, c.Metric = m, base, "capacity"
			for b, v := range dv {
				if w, ok := bv[b]; ok {
					c.DesignValues, c.BaselineValues = append(c.DesignValues, v), append(c.BaselineValues, w)
				}
			}
			if len(c.DesignValues) > 0 {
				cs, keys = append(cs, c), append(keys, capKey{sec.Workload, sec.Driver, m})
			}
		}
	}
	if len(cs) > 0 {
		vs, err := paired.Analyse(cs, Alpha)
		if err != nil {
			return nil, err
		}
		for i, v := range vs {
			rep.verdicts[keys[i]] = v
		}
	}
	return rep, nil
}

// sections are the workload · driver pairs of the study, in meta's order.
func (rep *CapacityReport) sections() []capKey {
	var out []capKey
	for _, wl := range rep.Meta.Workloads {
		for _, d := range rep.Meta.Drivers {
			if slices.ContainsFunc(rep.Cap.Knees, func(k record.CapKnee) bool { return k.Workload == wl && k.Driver == d }) {
				out = append(out, capKey{Workload: wl, Driver: d})
			}
		}
	}
	return out
}

// blockCaps is a design's capacity in each block where its knee was found.
func (rep *CapacityReport) blockCaps(k capKey) map[int]float64 {
	out := map[int]float64{}
	for _, kn := range rep.Cap.Knees {
		if kn.Workload == k.Workload && kn.Driver == k.Driver && kn.Mode == k.Mode && kn.Found {
			out[kn.Block] = float64(kn.Rate)
		}
	}
	return out
}

// capStat is a design's capacity over the blocks where it was found.
func (rep *CapacityReport) capStat(k capKey) (Stat, int) {
	var vals []float64
	var ids []string
	blocks := 0
	for _, kn := range rep.Cap.Knees {
		if kn.Workload == k.Workload && kn.Driver == k.Driver && kn.Mode == k.Mode {
			blocks++
			if kn.Found {
				vals = append(vals, float64(kn.Rate))
				ids = append(ids, fmt.Sprintf("block %d", kn.Block))
			}
		}
	}
	return statOfValues(vals, ids), blocks
}

// Headline is the report's first line per workload and driver: "capacity
// at p99 ≤ 1 ms: mutex X, inputQ Y (−z% [a, b]), …".
func (rep *CapacityReport) Headline(sec capKey) string {
	var parts []string
	for _, m := range rep.Meta.Modes {
		k := capKey{sec.Workload, sec.Driver, m}
		st, blocks := rep.capStat(k)
		if blocks == 0 {
			continue
		}
		s := m + " " + rep.capText(k, st)
		if v, ok := rep.verdicts[k]; ok {
			s += " (" + pctRange(v) + ")"
		}
		parts = append(parts, s)
	}
	return fmt.Sprintf("%s · %s: capacity at %s: %s", sec.Workload, sec.Driver, rep.SLO.Title(), strings.Join(parts, ", "))
}

// capText is a design's capacity, or, where no block found it but every
// block passed the whole ladder, the ladder's top as a lower bound.
func (rep *CapacityReport) capText(k capKey, st Stat) string {
	if st.N > 0 {
		return fmtRate(st)
	}
	low, above := math.Inf(1), true
	for _, kn := range rep.Cap.Knees {
		if kn.Workload == k.Workload && kn.Driver == k.Driver && kn.Mode == k.Mode {
			above = above && kn.State == plan.KneeAbove.String()
			low = math.Min(low, float64(kn.Rate))
		}
	}
	if above && !math.IsInf(low, 1) {
		return "≥ " + fmtNum(low) + "/s (above the ladder)"
	}
	return "not found"
}

func fmtRate(s Stat) string {
	if s.N == 0 {
		return "not found"
	}
	if s.N == 1 {
		return fmtNum(s.Median) + "/s"
	}
	return fmt.Sprintf("%s/s (%s–%s)", fmtNum(s.Median), fmtNum(s.Min), fmtNum(s.Max))
}

// pctRange is a verdict's effect and interval: "−12% [−15%, −9%]".
func pctRange(v paired.Verdict) string {
	short := v.Short()
	if i := strings.Index(short, "]"); i >= 0 {
		return short[:i+1]
	}
	return short
}

func (rep *CapacityReport) blocks(withCharts bool) []block {
	out := append(dirtyWarning(rep.Meta), heading{1, "locklab capacity study"})
	for _, sec := range rep.sections() {
		out = append(out, para(rep.Headline(sec)))
	}
	ladder := "-steps " + joinPct(rep.Cap.Steps) + " of the noop server's ceiling"
	if len(rep.Cap.Rates) > 0 {
		ladder = "-rates " + joinInts(rep.Cap.Rates) + " calls/s"
	}
	out = append(out, para(fmt.Sprintf("Command: `%s`, from %s. Objective `%s`: a run meets it when its %s latency, timed from each call's intended start, is at most %s ms, "+
		"it completed at least %s%% of the offered calls, and it had at most %d unexpected errors. Ladder: %s; then %d bisection steps per design and block "+
		"between its last passing and first failing rate. %d blocks (seed %s), each every design at every rate in the block's own order; the open model, "+
		"%s measured after %s of warm-up, at most %d calls in flight.",
		rep.Meta.Command, commitText(rep.Meta), rep.Cap.SLO, rep.SLO.Pct, plan.FormatFloat(rep.SLO.BoundMs()), plan.FormatFloat(100*rep.SLO.Achieved), rep.SLO.Errors,
		ladder, rep.Cap.Refine, rep.Meta.Reps, seedText(rep.Meta.Seed), rep.Meta.Duration, rep.Meta.Warmup, rep.Meta.MaxVUsOpen)), toc{})
	for _, c := range rep.Cap.Ceilings {
		out = append(out, para(fmt.Sprintf("Ceiling of %s · %s: the noop server served %s calls/s to %d closed-model callers (run %s).",
			c.Workload, c.Driver, fmtNum(c.CallsPerS), rep.Cap.ProbeCallers, c.RunID)))
	}
	out = append(out, heading{2, "Capacity under the objective"})
	out = append(out, para(fmt.Sprintf("A design's capacity in a block is its highest rate that met the objective below its lowest that did not; it is claimed only "+
		"when every rate tried below it passed and every one above failed (else *not found*, with why). Median over the blocks where it was found (range); "+
		"against %s, the geometric mean of the per-block capacity ratios with a 95%% interval and a signed-rank test, Holm-adjusted over this table.",
		cmp.Or(rep.Meta.Baseline, DefaultBaseline))))
	for _, sec := range rep.sections() {
		out = append(out, heading{3, sec.Workload + " · " + sec.Driver})
		out = append(out, rep.capacityTable(sec))
		if withCharts {
			out = append(out, rep.curveChart(sec))
		}
	}
	out = append(out, heading{2, "Latency against offered load"})
	out = append(out, para("Every ladder rate, per design: medians over the blocks (range) of the driver's percentiles from intended start, the achieved share of "+
		"the offered rate, unexpected errors summed, and in how many blocks the rate met the objective. A rate the driver could not offer is listed below the "+
		"table instead of plotted."))
	for _, sec := range rep.sections() {
		out = append(out, heading{3, sec.Workload + " · " + sec.Driver + ": the curves"})
		out = append(out, rep.curveTable(sec))
		if lim := rep.driverLimits(sec); len(lim) > 0 {
			out = append(out, para(fmt.Sprintf("%s could not offer these rates on its CPUs (it dropped calls with its CPUs busy): %s. They are not plotted.",
				sec.Driver, strings.Join(lim, "; "))))
		}
	}
	if len(rep.Cap.Overruns) > 0 {
		out = append(out, heading{2, "Overload"})
		out = append(out, para(fmt.Sprintf("Past capacity: every design at %s× the best design's capacity for the overload phase, then at %s× for the phase after it, "+
			"under each admission policy; the bound N of a policy is the best capacity × the objective's latency (Little's law), the same for every design. "+
			"Goodput is OK calls/s in the overload phase; the p99 is that of the calls answered OK; peaks are over both phases, RSS against the server's "+
			"RSS after its warm-up at capacity; recovery is the time from the drop until every %s interval after it met the objective's latency.",
			plan.FormatFloat(rep.Cap.Overload), plan.FormatFloat(rep.Cap.Recover), "100 ms")))
		for _, p := range plan.Policies {
			if slices.Contains(rep.Cap.Policies, p.Name) {
				out = append(out, para(fmt.Sprintf("`%s`: %s.", p.Name, p.Doc)))
			}
		}
		out = append(out, rep.overloadTable())
	}
	if probs := rep.problems(); len(probs) > 0 {
		out = append(out, heading{2, "Problems"}, table{header: []string{"run", "problem"}, rows: probs})
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

func (rep *CapacityReport) capacityTable(sec capKey) table {
	t := table{header: []string{"design", "capacity (calls/s)", "blocks found", "vs " + cmp.Or(rep.Meta.Baseline, DefaultBaseline), "not found"}}
	for _, m := range rep.Meta.Modes {
		k := capKey{sec.Workload, sec.Driver, m}
		st, blocks := rep.capStat(k)
		if blocks == 0 {
			continue
		}
		vs := "—"
		if v, ok := rep.verdicts[k]; ok {
			vs = v.Short()
		}
		var why []string
		for _, kn := range rep.Cap.Knees {
			if kn.Workload == sec.Workload && kn.Driver == sec.Driver && kn.Mode == m && !kn.Found {
				w := fmt.Sprintf("block %d: %s", kn.Block, kn.State)
				if kn.Rate > 0 {
					w += fmt.Sprintf(" (≥ %s/s)", fmtNum(float64(kn.Rate)))
				}
				why = append(why, w)
			}
		}
		t.rows = append(t.rows, []string{m, rep.capText(k, st), fmt.Sprintf("%d of %d", st.N, blocks), vs, cmp.Or(strings.Join(why, "; "), "—")})
	}
	return t
}

// ladderPoints are the ladder's points of a design at a rate, over blocks.
func (rep *CapacityReport) ladderPoints(sec capKey, mode string, rate int) []record.CapPoint {
	var out []record.CapPoint
	for _, p := range rep.Cap.Points {
		if p.Phase == "ladder" && p.Workload == sec.Workload && p.Driver == sec.Driver && p.Mode == mode && p.Rate == rate {
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
func (rep *CapacityReport) figure(pts []record.CapPoint, f func(*record.Run) float64) Stat {
	var vals []float64
	var ids []string
	for _, p := range pts {
		if r, ok := rep.runs[p.RunID]; ok && r.Result != nil && p.Beyond == "" {
			vals, ids = append(vals, f(r)), append(ids, r.ID)
		}
	}
	return statOfValues(vals, ids)
}

func (rep *CapacityReport) curveTable(sec capKey) table {
	t := table{header: []string{"offered (calls/s)", "design", "p50", "p99", "p99.9", "achieved", "errors", "dropped", "met objective"}}
	for _, rate := range rep.ladderRates(sec) {
		for _, m := range rep.Meta.Modes {
			pts := rep.ladderPoints(sec, m, rate)
			if len(pts) == 0 {
				continue
			}
			lat := func(g func(*record.Run) float64) string { return fmtCI(rep.figure(pts, g), fmtMs) }
			achieved := fmtCI(rep.figure(pts, func(r *record.Run) float64 { return r.Result.CallsPerS / float64(rate) }), func(v float64) string {
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
			t.rows = append(t.rows, []string{fmtNum(float64(rate)), m,
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
			out = append(out, fmt.Sprintf("%s/s (%s, block %d: %s)", fmtNum(float64(p.Rate)), p.Mode, p.Block, p.Beyond))
		}
	}
	return out
}

// curveChart draws the objective's percentile against the offered rate
// per design, log latency, the blocks' range as error bars, and the
// objective as a horizontal line.
func (rep *CapacityReport) curveChart(sec capKey) block {
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
		var pts errPoints
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
			return para("chart " + title + " failed: " + err.Error())
		}
		c := plotutil.Color(i)
		line.Color, points.Color, points.Shape = c, c, plotutil.Shape(i)
		bars, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return para("chart " + title + " failed: " + err.Error())
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
	svg, err := svgOf(p)
	if err != nil {
		return para("chart " + title + " failed: " + err.Error())
	}
	return chart{title: title, svg: svg}
}

func (rep *CapacityReport) overloadTable() table {
	t := table{header: []string{"workload", "design", "policy", "N", "offered → after (calls/s)", "goodput (calls/s)", "p99 of OK calls",
		"errors by code", "peak goroutines", "peak RSS (× at capacity)", "recovery"}}
	for _, o := range rep.Cap.Overruns {
		row := []string{o.Workload, o.Mode, o.Policy, boundText(o.Bound), fmt.Sprintf("%s → %s", fmtNum(float64(o.Rate)), fmtNum(float64(o.RecoverRate)))}
		r, ok := rep.runs[o.RunID]
		if o.NA != "" || !ok || r.Result == nil {
			t.rows = append(t.rows, append(row, "n/a: "+cmp.Or(o.NA, "no run"), "", "", "", "", ""))
			continue
		}
		res := r.Result
		okp99 := "—"
		if res.LatencyOKMs != nil && res.OK > 0 {
			okp99 = fmtMs(res.LatencyOKMs.P99)
		}
		recov := "not within the phase"
		if o.Recovered {
			recov = fmt.Sprintf("%.1f s", o.RecoveryS)
		}
		rss := fmt.Sprintf("%.1f MiB", float64(o.PeakRSS)/(1<<20))
		if o.BaseRSS > 0 {
			rss += fmt.Sprintf(" (%.2f×)", float64(o.PeakRSS)/float64(o.BaseRSS))
		}
		t.rows = append(t.rows, append(row, fmtNum(float64(res.OK)/res.DurationS), okp99, codesText(res.ByCode),
			fmt.Sprint(o.PeakGoroutines), rss, recov))
	}
	return t
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
		parts = append(parts, fmt.Sprintf("%s %s", x.k, fmtNum(float64(x.v))))
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
func (rep *CapacityReport) Markdown() string { return markdown(rep.blocks(false)) }

// HTML renders the capacity report as one self-contained page.
func (rep *CapacityReport) HTML() (string, error) {
	return renderHTML("locklab capacity study", rep.blocks(true))
}
