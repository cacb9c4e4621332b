package cores

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/lab/mva"
	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
)

// workFactor is the factor of the work per command, the model's axis.
const workFactor = "work"

// crossoverBaseline is the design every owner design's crossover is
// measured against.
const crossoverBaseline = "mutex"

// modelCell is one design's group at one work, CPU count and caller count
// of a family.
type modelCell struct {
	work    float64 // seconds per command
	cpus    int
	callers int
	g       *report.Group
}

// modelFamily is every store-backed group of one workload, driver and
// combination of the factors other than the work and the server's CPUs:
// the points one model per design is fitted on and carried to.
type modelFamily struct {
	sec   report.Section // work and server CPUs at their defaults
	cells map[string][]modelCell
}

func workOf(g *report.Group) float64 { return workAt(g.Factors) }

// workAt is a point's work per command, in seconds.
func workAt(p plan.Point) float64 {
	d, err := time.ParseDuration(p.Get(workFactor))
	if err != nil {
		return 0 // "0"
	}
	return d.Seconds()
}

func (rep view) modelFamilies() []*modelFamily {
	var out []*modelFamily
	def := plan.DefaultPoint()
	for _, g := range rep.Groups {
		if !g.StoreBacked {
			continue
		}
		sec := g.Section
		sec.Factors = sec.Factors.With(plan.ServerCPUs, def.Get(plan.ServerCPUs)).With(workFactor, def.Get(workFactor))
		i := slices.IndexFunc(out, func(f *modelFamily) bool { return f.sec == sec })
		if i < 0 {
			out = append(out, &modelFamily{sec: sec, cells: map[string][]modelCell{}})
			i = len(out) - 1
		}
		out[i].cells[g.Mode] = append(out[i].cells[g.Mode], modelCell{work: workOf(g), cpus: serverCPUsOf(g), callers: g.Level, g: g})
	}
	return out
}

// fitCells are the points a family's models are fitted on: at its
// smallest CPU count and its largest caller count, the smallest and the
// largest work measured there. Every other point is held out.
func fitCells(cells []modelCell) (fit, held []modelCell) {
	if len(cells) == 0 {
		return nil, nil
	}
	n := slices.MinFunc(cells, func(a, b modelCell) int { return cmp.Compare(a.cpus, b.cpus) }).cpus
	var at []modelCell
	for _, c := range cells {
		if c.cpus == n {
			at = append(at, c)
		}
	}
	callers := slices.MaxFunc(at, func(a, b modelCell) int { return cmp.Compare(a.callers, b.callers) }).callers
	var ws []float64
	for _, c := range at {
		if c.callers == callers {
			ws = append(ws, c.work)
		}
	}
	lo, hi := slices.Min(ws), slices.Max(ws)
	for _, c := range cells {
		if c.cpus == n && c.callers == callers && (c.work == lo || c.work == hi) {
			fit = append(fit, c)
		} else {
			held = append(held, c)
		}
	}
	order := func(a, b modelCell) int {
		return cmp.Or(cmp.Compare(a.cpus, b.cpus), cmp.Compare(a.work, b.work), cmp.Compare(a.callers, b.callers))
	}
	slices.SortStableFunc(fit, order)
	slices.SortStableFunc(held, order)
	return fit, held
}

// obsOf is a run as the model sees it; ok false when the run served
// nothing.
func obsOf(c modelCell, r *record.Run) (mva.Obs, bool) {
	o := mva.Obs{Work: c.work, CPUs: c.cpus, Callers: c.callers, X: r.Derived.CallsPerSec, CPU: r.Derived.ServerCPUPerCallUs * 1e-6}
	if r.Derived.Serial != nil {
		o.Serial = r.Derived.Serial.DemandUs() * 1e-6
	}
	return o, o.X > 0 && o.CPU > 0
}

// runOf is a group's run of block b.
func runOf(g *report.Group, b int) *record.Run {
	for _, r := range g.Records() {
		if r.Rep == b {
			return r
		}
	}
	return nil
}

// blockModels fits one model per block on the fit cells' runs of that
// block; a block missing a run is left out.
func blockModels(fit []modelCell, blocks []int) map[int]mva.Model {
	out := map[int]mva.Model{}
	for _, b := range blocks {
		var obs []mva.Obs
		for _, c := range fit {
			r := runOf(c.g, b)
			if r == nil {
				break
			}
			if o, ok := obsOf(c, r); ok {
				obs = append(obs, o)
			}
		}
		if len(obs) != len(fit) {
			continue
		}
		if m, err := mva.Fit(obs, false); err == nil {
			out[b] = m
		}
	}
	return out
}

// blocksOf are the blocks a report's runs came from, in order.
func (rep view) blocksOf() []int {
	var out []int
	for _, g := range rep.Groups {
		for _, r := range g.Records() {
			if !slices.Contains(out, r.Rep) {
				out = append(out, r.Rep)
			}
		}
	}
	slices.Sort(out)
	return out
}

func workName(w float64) string {
	return time.Duration(math.Round(w * 1e9)).String()
}

// crossName is a work level found by the model or between two levels,
// to 0.1 µs.
func crossName(w float64) string {
	return time.Duration(math.Round(w*1e7) * 100).String()
}

func pointName(c modelCell) string {
	return fmt.Sprintf("%s, %s, %d callers", workName(c.work), cpusName(c.cpus), c.callers)
}

// heldOutWhy says which axis a held-out point differs from the fit on.
func heldOutWhy(c modelCell, fit []modelCell) string {
	var d []string
	if c.cpus != fit[0].cpus {
		d = append(d, "other CPU count")
	}
	if c.callers != fit[0].callers {
		d = append(d, "other callers")
	}
	if !slices.ContainsFunc(fit, func(f modelCell) bool { return f.work == c.work }) {
		d = append(d, "other work")
	}
	return strings.Join(d, ", ")
}

// modelTolerance is the error the model is allowed: it is off at a point
// where its error's whole interval lies beyond ±5%, within where the whole
// interval lies inside, and unsettled elsewhere.
const modelTolerance = 0.05

// modelVerdict judges one held-out point by its error's interval: "off by"
// where the whole interval lies beyond the tolerance, "within" where it lies
// inside, and "unsettled" where the blocks do not say (the interval spans a
// bound, or one block gave no interval at all) — so that a point too few
// clean blocks measured is never counted as a success.
func modelVerdict(e paired.Effect) string {
	switch {
	case e.N < 2:
		return "unsettled (one block)"
	case e.Lo > 1+modelTolerance || e.Hi < 1-modelTolerance:
		return "off by " + paired.Pct(e.GeoMean-1)
	case e.Lo >= 1-modelTolerance && e.Hi <= 1+modelTolerance:
		return "within"
	}
	return "unsettled"
}

// fmtEffect prints a paired effect as a signed percentage with its
// interval.
func fmtEffect(e paired.Effect) string {
	if e.N < 2 {
		return paired.Pct(e.GeoMean-1) + " (one block)"
	}
	return fmt.Sprintf("%s [%s, %s]", paired.Pct(e.GeoMean-1), paired.Pct(e.Lo-1), paired.Pct(e.Hi-1))
}

// modelBlocks is the model's part of the cores section: per family, the
// fitted models, each held-out point's prediction against its measurement,
// and the crossovers. Closed-model reports only: the network is closed.
func (rep view) modelBlocks() []report.Piece {
	if rep.Meta.Model != "closed" {
		return nil
	}
	blocks := rep.blocksOf()
	var out []report.Piece
	for _, f := range rep.modelFamilies() {
		models := map[string]map[int]mva.Model{}
		var fitRows, heldRows [][]string
		var fitOf []modelCell
		for _, mode := range rep.Meta.Modes {
			fit, held := fitCells(f.cells[mode])
			if len(fit) == 0 || len(held) == 0 {
				continue
			}
			ms := blockModels(fit, blocks)
			if len(ms) == 0 {
				continue
			}
			models[mode], fitOf = ms, fit
			fitRows = append(fitRows, fitRow(mode, fit, ms))
			for _, c := range held {
				heldRows = append(heldRows, heldRow(mode, c, fit, ms))
			}
		}
		if len(heldRows) == 0 {
			continue
		}
		title := fmt.Sprintf("Model · %s · %s · %s", f.sec.Workload, f.sec.Driver, f.sec.Factors.StringWithout(plan.ServerCPUs, workFactor))
		out = append(out, report.Heading(3, title),
			report.Para(fmt.Sprintf("Fitted, in every block, on the runs at %s and %d callers at the smallest and largest work measured there "+
				"(%s); the demands are lines in the work per command, the time outside the server the one with which the network best reproduces the fitted runs' calls/s "+
				"(least squares on log calls/s). A run at saturation says little about that time, and its interval shows it.",
				cpusName(fitOf[0].cpus), fitOf[0].callers, joinWorks(fitOf))),
			report.Table([]string{"design", "blocks", "D_cpu(work)", "D_serial(work)", "time outside the server (Z)"}, fitRows),
			report.Para("Held out: every other point of the plan. Each block's model predicts that block's run; the error is "+
				"predicted / measured − 1 over the blocks (geometric mean, 95% t interval on the log ratios). *off* marks an "+
				"error whose whole interval lies beyond ±5%: there the model failed, by that much; *within*, one whose whole interval lies inside ±5%; "+
				"*unsettled*, a point its clean blocks did not decide (an interval across ±5%, or a single block)."),
			report.Table([]string{"design", "held out", "point", "predicted calls/s", "measured calls/s", "error", "model"}, heldRows))
		out = append(out, rep.crossoverBlocks(f, models, blocks)...)
	}
	return out
}

func joinWorks(cells []modelCell) string {
	var s []string
	for _, c := range cells {
		s = append(s, workName(c.work))
	}
	return strings.Join(s, " and ")
}

// sortedBlocks are a block-keyed map's blocks in order.
func sortedBlocks[T any](m map[int]T) []int {
	return slices.Sorted(maps.Keys(m))
}

// blockMedian is the median of a block-indexed figure with its range.
func blockMedian(vals []float64, f func(float64) string) string {
	return report.FmtCI(report.StatOf(vals, nil), f)
}

func fitRow(mode string, fit []modelCell, ms map[int]mva.Model) []string {
	var ca, cb, sa, sb, z []float64
	for _, b := range sortedBlocks(ms) {
		m := ms[b]
		ca, cb, sa, sb, z = append(ca, m.CPU.A), append(cb, m.CPU.B), append(sa, m.Serial.A), append(sb, m.Serial.B), append(z, m.Think)
	}
	us := func(x float64) string { return report.UnitUs.Format(x * 1e6) }
	slope := func(x float64) string { return fmt.Sprintf("%.2f", x) }
	line := func(a, b []float64) string {
		if len(fit) < 2 {
			return blockMedian(a, us)
		}
		return blockMedian(a, us) + " + " + blockMedian(b, slope) + " × work"
	}
	return []string{mode, fmt.Sprint(len(ms)), line(ca, cb), line(sa, sb), blockMedian(z, us)}
}

func heldRow(mode string, c modelCell, fit []modelCell, ms map[int]mva.Model) []string {
	var pred, meas, ratios []float64
	for _, b := range sortedBlocks(ms) {
		m := ms[b]
		r := runOf(c.g, b)
		if r == nil || r.Derived.CallsPerSec <= 0 {
			continue
		}
		p, err := m.Predict(c.work, c.cpus, c.callers)
		if err != nil || p <= 0 {
			continue
		}
		pred, meas, ratios = append(pred, p), append(meas, r.Derived.CallsPerSec), append(ratios, p/r.Derived.CallsPerSec)
	}
	row := []string{mode, heldOutWhy(c, fit), pointName(c), "—", "—", "—", "no prediction"}
	if len(ratios) == 0 {
		return row
	}
	row[3], row[4] = blockMedian(pred, report.FmtNum), blockMedian(meas, report.FmtNum)
	e, err := paired.Estimate(ratios)
	if err != nil {
		return row
	}
	row[5] = fmtEffect(e)
	row[6] = modelVerdict(e)
	return row
}
