package cores

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"

	"github.com/locklab/locklab/internal/lab/bottleneck"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
)

// corePoint is one design's group at one server CPU count of a series.
type corePoint struct {
	n      int    // the server's CPUs
	value  string // the -server-cpus value
	g      *report.Group
	shared bool
}

// coreSeries is every design's groups of one workload, driver, level and
// combination of the other factors, over the server's CPU counts.
type coreSeries struct {
	sec    report.Section // its factors with the server's CPUs at the default
	level  int
	points map[string][]corePoint // by mode, ordered by n
	ns     []int                  // every measured count, ordered
}

// serverCPUsOf is how many CPUs a group's server had: its pinned set, or
// the machine's when unpinned.
func serverCPUsOf(g *report.Group) int {
	r := g.Records()[0]
	if n := len(r.ServerProc.CPUs); n > 0 {
		return n
	}
	return r.Derived.CPUs
}

func (rep view) coreSeries() []*coreSeries {
	var out []*coreSeries
	for _, g := range rep.Groups {
		if !g.StoreBacked {
			continue
		}
		sec := g.Section
		sec.Factors = sec.Factors.With(plan.ServerCPUs, plan.DefaultPoint().Get(plan.ServerCPUs))
		i := slices.IndexFunc(out, func(s *coreSeries) bool { return s.sec == sec && s.level == g.Level })
		if i < 0 {
			out = append(out, &coreSeries{sec: sec, level: g.Level, points: map[string][]corePoint{}})
			i = len(out) - 1
		}
		s := out[i]
		p := corePoint{n: serverCPUsOf(g), value: g.Factors.Get(plan.ServerCPUs), g: g,
			shared: slices.ContainsFunc(g.Records(), func(r *record.Run) bool { return r.SharedCPUs })}
		s.points[g.Mode] = append(s.points[g.Mode], p)
		slices.SortStableFunc(s.points[g.Mode], func(a, b corePoint) int { return cmp.Compare(a.n, b.n) })
		if !slices.Contains(s.ns, p.n) {
			s.ns = append(s.ns, p.n)
			slices.Sort(s.ns)
		}
	}
	// Series that differ in the work per command, in its order.
	slices.SortStableFunc(out, func(a, b *coreSeries) int { return cmp.Compare(workAt(a.sec.Factors), workAt(b.sec.Factors)) })
	return out
}

// interval is a figure's median with its confidence interval, or the runs'
// range where there are too few runs for one, scaled.
func interval(s report.Stat, scale float64) bottleneck.Interval {
	if s.CI {
		return bottleneck.Interval{Lo: s.Lo * scale, Est: s.Median * scale, Hi: s.Hi * scale}
	}
	return bottleneck.Interval{Lo: s.Min * scale, Est: s.Median * scale, Hi: s.Max * scale}
}

// coreModel is a design's demands at one CPU count: a bottleneck model, or,
// for a design with no serial resource, the CPU term alone.
type coreModel struct {
	from    corePoint
	cpu     bottleneck.Interval // D_cpu, seconds
	serial  *bottleneck.Model   // nil: no serial resource measured
	serialD bottleneck.Interval // D_serial, seconds
}

func newCoreModel(p corePoint) (coreModel, bool) {
	cpu := p.g.Fig(report.ServerCPUPerCall)
	if cpu.N == 0 {
		return coreModel{}, false
	}
	m := coreModel{from: p, cpu: interval(cpu, 1e-6)}
	if s := p.g.Fig(report.SerialDemand); s.N > 0 {
		m.serialD = interval(s, 1e-6)
		if bm, err := bottleneck.NewModel(m.cpu, m.serialD); err == nil {
			m.serial = &bm
		}
	}
	return m, m.cpu.Lo > 0
}

// bound is the model's bound at n CPUs and the term that binds ("" for a
// design with no serial resource: the CPU term always).
func (m coreModel) bound(n int) (bottleneck.Interval, string) {
	if m.serial == nil {
		f := float64(n)
		return bottleneck.Interval{Lo: f / m.cpu.Hi, Est: f / m.cpu.Est, Hi: f / m.cpu.Lo}, "CPU"
	}
	b, _ := m.serial.Bound(float64(n)) // n ≥ 1
	t, _ := m.serial.Binding(float64(n))
	return b, map[bottleneck.Term]string{bottleneck.CPUTerm: "CPU", bottleneck.SerialTerm: "serial", bottleneck.EitherTerm: "either"}[t]
}

// gap is the share of the bound a measurement falls short by: the
// coordination cost.
func (m coreModel) gap(n int, x bottleneck.Interval) bottleneck.Interval {
	if m.serial != nil {
		g, _ := m.serial.Gap(float64(n), x)
		return g
	}
	b, _ := m.bound(n)
	return bottleneck.Interval{Lo: 1 - x.Hi/b.Lo, Est: 1 - x.Est/b.Est, Hi: 1 - x.Lo/b.Hi}
}

// coresBlocks is the bottleneck section: shown when the plan swept the
// server's CPUs or the server measured a serial demand.
func (rep view) coresBlocks(withCharts bool) []report.Piece {
	swept := len(rep.Meta.Factors.Values(plan.ServerCPUs)) > 1
	measured := slices.ContainsFunc(rep.Groups, func(g *report.Group) bool { return g.Fig(report.SerialDemand).N > 0 })
	if !swept && !measured {
		return nil
	}
	out := []report.Piece{report.Heading(2, coresHeading), report.Para(coresHowToRead)}
	for _, s := range rep.coreSeries() {
		title := fmt.Sprintf("Bound · %s · %s · %s · %s", s.sec.Workload, s.sec.Driver, rep.LevelName(s.level), s.sec.Factors.StringWithout(plan.ServerCPUs))
		out = append(out, report.Heading(3, title))
		if slices.ContainsFunc(rep.Meta.Modes, func(mode string) bool {
			return slices.ContainsFunc(s.points[mode], func(p corePoint) bool { return p.shared })
		}) {
			out = append(out, report.Para("**"+report.SharedNote+"** (at the CPU counts marked *shared*)."))
		}
		out = append(out, rep.boundTable(s))
		if withCharts {
			out = append(out, rep.coresChart(s, title))
		}
	}
	if m := rep.modelBlocks(); len(m) > 0 {
		out = append(out, report.Para(modelHowToRead))
		out = append(out, m...)
	}
	return out
}

const coresHeading = "Cores: the demands, the bound where it was measured, and a model of the runs it did not see"

const coresHowToRead = "How to read: every design has one serial resource — the lock, the owner goroutine, the combiner's role, " +
	"a shard's lock or owner — and the server measures how long it was busy. Per call that is D_serial (the busiest " +
	"resource's busy time over the calls); D_cpu is the server's CPU per call. By the operational laws (Denning & Buzen; " +
	"Lazowska et al., Quantitative System Performance, ch. 5) no server with N CPUs serves more than " +
	"X(N) ≤ min(N / D_cpu, 1 / D_serial) calls a second, and N* = D_cpu / D_serial is where the two terms meet. Each row's " +
	"demands come from the runs at the CPU count it names (the median over them, `figures.json` lists the runs); at that " +
	"count the bound holds by definition (marked *own runs*) and tests nothing, and carried to another count it is only " +
	"as good as the assumption that the demands stay put. The bound is drawn at the measured counts only. The gap between " +
	"bound and measurement is what the design left of its ceiling: handing off, waking up, cache lines moving, waiting " +
	"for the serial resource beyond its busy time. Intervals are the 95% intervals of the medians (or the runs' range " +
	"with fewer than 6 runs), carried through the formulas at their extremes."

const modelHowToRead = "The model: exact mean-value analysis of a closed network (Reiser & Lavenberg, 1980; Lazowska et al., " +
	"ch. 6) — the driver's callers circulate through a delay centre (time outside the server: the driver, the network), " +
	"one queueing centre per server CPU (D_cpu / N each) and one single-server centre for the serial resource (D_serial), " +
	"where calls queue for the lock or the owner. It is fitted on some of the plan's runs and predicts the others, so " +
	"unlike the bound it can be wrong, and the tables say where it was. It assumes the demands depend on the work per " +
	"command alone — not on the CPU count, nor on the load — and that the time outside the server is the same per call " +
	"everywhere; a driver sharing the server's CPUs breaks the second."

// cpusName is "1 CPU", "2 CPUs".
func cpusName(n int) string {
	if n == 1 {
		return "1 CPU"
	}
	return strconv.Itoa(n) + " CPUs"
}

// fmtInterval prints an estimate with its interval, when it has width.
func fmtInterval(i bottleneck.Interval, f func(float64) string) string {
	if f(i.Lo) == f(i.Hi) {
		return f(i.Est)
	}
	return fmt.Sprintf("%s [%s–%s]", f(i.Est), f(i.Lo), f(i.Hi))
}

func fmtShare(x float64) string { return pct(x) }

func fmtKnee(x float64) string {
	if math.IsInf(x, 0) {
		return "∞"
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// boundTable: one row per design and CPU count its demands come from.
func (rep view) boundTable(s *coreSeries) report.Piece {
	header := []string{"design", "demands from", "D_cpu", "D_serial", "N*"}
	for _, n := range s.ns {
		header = append(header, "bound at "+cpusName(n), "calls/s at "+cpusName(n), "gap at "+cpusName(n))
	}
	us := func(x float64) string { return report.UnitUs.Format(x * 1e6) }
	var rows [][]string
	for _, mode := range rep.Meta.Modes {
		for _, from := range s.points[mode] {
			m, ok := newCoreModel(from)
			if !ok {
				continue
			}
			row := []string{mode, fmt.Sprintf("%s (%d runs)", cpusName(from.n), from.g.Fig(report.ServerCPUPerCall).N), fmtInterval(m.cpu, us), "none", "∞"}
			if m.serial != nil {
				row[3], row[4] = fmtInterval(m.serialD, us), fmtInterval(m.serial.Knee(), fmtKnee)
			}
			for _, n := range s.ns {
				b, term := m.bound(n)
				cell := fmtInterval(b, report.FmtNum) + " (" + term + ")"
				if n == from.n {
					cell += ", own runs"
				}
				x, gap := "—", "—"
				if i := slices.IndexFunc(s.points[mode], func(p corePoint) bool { return p.n == n }); i >= 0 {
					p := s.points[mode][i]
					xi := interval(p.g.Fig(report.CallsPerSec), 1)
					x = report.FmtCI(p.g.Fig(report.CallsPerSec), report.CallsPerSec.Unit.Format)
					if p.shared {
						x += ", shared"
					}
					gap = fmtInterval(m.gap(n, xi), fmtShare)
				}
				row = append(row, cell, x, gap)
			}
			rows = append(rows, row)
		}
	}
	return report.Table(header, rows)
}

// coresChart draws measured calls/s against the server's CPUs, with each
// design's bound from its smallest count's demands across the measured
// counts, and no further: past the largest count measured nothing is a
// result.
func (rep view) coresChart(s *coreSeries, title string) report.Piece {
	title += ": calls/s vs server CPUs"
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s · %s · %s: calls/s vs server CPUs", s.sec.Workload, s.sec.Driver, rep.LevelName(s.level))
	p.X.Label.Text = "server CPUs (log₂)"
	p.Y.Label.Text = "calls/s"
	top := max(2, s.ns[len(s.ns)-1])
	p.X.Scale = plot.LogScale{}
	var ticks report.LevelTicks
	for n := 1; n <= top; n *= 2 {
		ticks = append(ticks, n)
	}
	p.X.Tick.Marker = ticks
	p.X.Min, p.X.Max = 1, float64(top)
	p.Add(plotter.NewGrid())
	for i, mode := range rep.Meta.Modes {
		pts := s.points[mode]
		if len(pts) == 0 {
			continue
		}
		c := plotutil.Color(i)
		var xs report.ErrPoints
		for _, pt := range pts {
			st := pt.g.Fig(report.CallsPerSec)
			iv := interval(st, 1)
			xs.XYs = append(xs.XYs, plotter.XY{X: float64(pt.n), Y: iv.Est})
			xs.YErrors = append(xs.YErrors, struct{ Low, High float64 }{iv.Est - iv.Lo, iv.Hi - iv.Est})
		}
		sc, err := plotter.NewScatter(xs.XYs)
		if err != nil {
			return report.Para("chart " + title + " failed: " + err.Error())
		}
		sc.Color, sc.Shape = c, plotutil.Shape(i)
		bars, err := plotter.NewYErrorBars(xs)
		if err != nil {
			return report.Para("chart " + title + " failed: " + err.Error())
		}
		bars.Color = c
		p.Add(sc, bars)
		p.Legend.Add(mode+" measured", sc)
		m, ok := newCoreModel(pts[0])
		if !ok {
			continue
		}
		xys := boundLine(m, 1, float64(s.ns[len(s.ns)-1]))
		if len(xys) < 2 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return report.Para("chart " + title + " failed: " + err.Error())
		}
		l.Color = c
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s bound from %s", mode, cpusName(pts[0].n)), l)
	}
	// Room above the highest bound, and the legend where the bounds are
	// flat and the measurements are not: bottom right.
	p.Y.Min, p.Y.Max = 0, p.Y.Max*1.15
	p.Legend.Top, p.Legend.Left = false, false
	svg, err := report.SVG(p)
	if err != nil {
		return report.Para("chart " + title + " failed: " + err.Error())
	}
	return report.Chart(title, svg)
}

// boundLine samples the bound's estimate from a to b CPUs, evenly on the
// log axis, and at the knee, where it bends.
func boundLine(m coreModel, a, b float64) plotter.XYs {
	if b <= a {
		return nil
	}
	var xs []float64
	const steps = 48
	for k := 0; k <= steps; k++ {
		xs = append(xs, a*math.Pow(b/a, float64(k)/steps))
	}
	if m.serial != nil {
		if k := m.serial.Knee().Est; k > a && k < b {
			xs = append(xs, k)
		}
	}
	slices.Sort(xs)
	var out plotter.XYs
	for _, x := range xs {
		y := x / m.cpu.Est
		if m.serial != nil {
			y = math.Min(y, 1/m.serialD.Est)
		}
		out = append(out, plotter.XY{X: x, Y: y})
	}
	return out
}

// pct prints a share as a whole percentage, or with one decimal below 10%.
func pct(x float64) string {
	if math.Abs(x) < 0.1 {
		return fmt.Sprintf("%.1f%%", x*100)
	}
	return fmt.Sprintf("%.0f%%", x*100)
}
