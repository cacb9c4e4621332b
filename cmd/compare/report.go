package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// The report is built once as a list of blocks and rendered twice, to
// Markdown and to HTML, so both always say the same.
type block interface{ isBlock() }

type heading struct {
	level int
	text  string
}

type para string

type table struct {
	header []string
	rows   [][]string
}

// chart is an SVG image; only the HTML rendering shows it.
type chart struct {
	title string
	svg   []byte
}

// toc marks where the table of contents goes; it lists the headings of
// levels 2 and 3 that follow.
type toc struct{}

func (heading) isBlock() {}
func (para) isBlock()    {}
func (table) isBlock()   {}
func (chart) isBlock()   {}
func (toc) isBlock()     {}

// Report is a finished comparison.
type Report struct {
	Meta   Meta     `json:"meta"`
	Groups []*Group `json:"groups"`
}

// group returns the group of a section, level and mode, or nil.
func (rep *Report) group(sec Section, level int, mode string) *Group {
	for _, g := range rep.Groups {
		if g.Section == sec && g.Level == level && g.Mode == mode {
			return g
		}
	}
	return nil
}

// sections lists the report's sections in the groups' order.
func (rep *Report) sections() []Section {
	var out []Section
	for _, g := range rep.Groups {
		if !slices.Contains(out, g.Section) {
			out = append(out, g.Section)
		}
	}
	return out
}

// levels lists the levels a section ran at, in order.
func (rep *Report) levels(sec Section) []int {
	var out []int
	for _, g := range rep.Groups {
		if g.Section == sec && !slices.Contains(out, g.Level) {
			out = append(out, g.Level)
		}
	}
	slices.Sort(out)
	return out
}

func (rep *Report) levelName(level int) string {
	if rep.Meta.Model == "open" {
		return fmt.Sprintf("%d calls/s (open model)", level)
	}
	return fmt.Sprintf("%d callers", level)
}

// howToRead is the long explanation, said once per report.
func (rep *Report) howToRead() string {
	return "How to read: every figure is the median over a group's repetitions (one workload, driver, factor combination, " +
		"level and mode); `[lo–hi]` is its 95% confidence interval (golang.org/x/perf's benchmath, which assumes nothing " +
		"about the distribution and needs at least 6 runs for a 95% interval; with fewer the range of the runs is shown as `(min–max)`). " +
		"Each run is classed by the CPU use of the server and of the driver over the measured window, each as a share of its own CPUs: " +
		fmt.Sprintf("*server-bound* (server ≥ %.0f%%, driver < %.0f%%: the throughput is the design's), ", serverBusy*100, driverBusy*100) +
		fmt.Sprintf("*load-bound* (driver ≥ %.0f%%: the throughput is the driver's) or *neither*. ", driverBusy*100) +
		"A verdict compares the best store-backed design with the runner-up by a Mann-Whitney U test (benchmath): on calls/s when " +
		"every run of both was server-bound, otherwise on the server's CPU per call (the design's cost at that load), and it says which. " +
		"\"no difference detected at n=5\" means p ≥ 0.05: not that the designs are equal, only that these runs cannot tell them apart " +
		"(the smallest p a U test can give is 0.008 at 5 runs per side, 0.029 at 4, 0.1 at 3). " +
		"`noop` answers without touching any store: the harness's ceiling. n/a marks a mode that does not serve a workload or a " +
		"durability. Latency curves merge the repetitions' HDR histograms (or, for drivers without one, take the median of each percentile). " +
		"Every figure comes from the raw files in `runs/`; `figures.json` names the runs behind each one."
}

func (rep *Report) blocks(withCharts bool) []block {
	m := rep.Meta
	pin := "server and driver not pinned (one CPU, or -pin=false)"
	if len(m.ServerCPUs) > 0 {
		pin = fmt.Sprintf("server on CPU %s (GOMAXPROCS=%d), driver on CPU %s (GOMAXPROCS=%d)",
			cpuList(m.ServerCPUs), len(m.ServerCPUs), cpuList(m.DriverCPUs), len(m.DriverCPUs))
	}
	versions := []string{m.GoVersion}
	for _, v := range []string{m.K6Version, m.H2loadVersion} {
		if v != "" {
			versions = append(versions, v)
		}
	}
	out := []block{
		heading{1, "locklab comparison: " + strings.Join(m.Modes, " vs ")},
		para(fmt.Sprintf("Command: `%s`", m.Command)),
		para(fmt.Sprintf("Machine: %d CPUs (%s), %s memory, Linux %s; %s; locklab commit %s%s. Started %s, finished %s.",
			m.CPUs, m.CPUModel, m.MemTotal, m.Kernel, strings.Join(versions, "; "), m.GitCommit,
			map[bool]string{true: " with uncommitted changes", false: ""}[m.GitDirty],
			m.Started.Format("2006-01-02 15:04:05 UTC"), m.Finished.Format("15:04:05 UTC"))),
		para(fmt.Sprintf("Configuration: workloads %s; modes %s; drivers %s; %s model at %s%s; factors: work %s, durability %s, skew %s, read ratio %s; "+
			"%s measured after a %s warm-up; %d repetitions, interleaved; a fresh server for every run; %s.",
			strings.Join(m.Workloads, ", "), strings.Join(m.Modes, ", "), strings.Join(m.Drivers, ", "), m.Model, joinInts(m.Levels),
			h2loadLevelsNote(m), joinDurations(m.Factors.Works), strings.Join(m.Factors.Durabilities, ", "),
			joinFloats(m.Factors.Skews, nil), joinFloats(m.Factors.ReadRatios, readRatioName),
			m.Duration, m.Warmup, m.Reps, pin)),
		para(rep.howToRead()),
		toc{},
	}
	if bad := rep.problems(); len(bad) > 0 {
		out = append(out, heading{2, "Problems"}, para("These runs broke an invariant or failed; their figures are still in the tables."))
		out = append(out, table{header: []string{"run", "problem"}, rows: bad})
	}
	if len(m.NA) > 0 {
		var rows [][]string
		for _, na := range m.NA {
			d := "any"
			if na.Durability != "" {
				d = na.Durability
			}
			rows = append(rows, []string{na.Workload, na.Mode, d, na.Reason})
		}
		out = append(out, heading{2, "Not applicable"}, para("Cells shown as n/a: the mode cannot serve them, so they have no runs."),
			table{header: []string{"workload", "mode", "durability", "why"}, rows: rows})
	}
	for _, sec := range rep.sections() {
		out = append(out, heading{2, sec.String()})
		out = append(out, rep.overview(sec))
		if withCharts {
			out = append(out, rep.charts(sec)...)
		}
		for _, level := range rep.levels(sec) {
			out = append(out, heading{3, fmt.Sprintf("%s · %s · %s", sec.Workload, sec.Driver, rep.levelName(level))})
			out = append(out, rep.levelTable(sec, level), para("Verdict "+rep.verdictText(sec, level)))
			if withCharts {
				out = append(out, rep.percentileChart(sec, level))
			}
		}
	}
	out = append(out, heading{2, "Every run"}, para("Each run's class and CPU use over its measured window, in the order they ran."),
		rep.runsTable())
	return out
}

// runsTable lists every run with its class.
func (rep *Report) runsTable() table {
	var runs []*RunRecord
	for _, g := range rep.Groups {
		runs = append(runs, g.records...)
	}
	slices.SortFunc(runs, func(a, b *RunRecord) int { return a.Index - b.Index })
	t := table{header: []string{"run", "class", "server CPU", "driver CPU", mCallsPerSec.Label, mP99.Label, "invariants"}}
	for _, r := range runs {
		inv := "held"
		switch {
		case r.Failed():
			inv = "FAILED"
		case !stats(r).GetStoreBacked():
			inv = "n/a"
		}
		t.rows = append(t.rows, []string{r.ID, string(r.Derived.Class), fmtPct(r.Derived.ServerUtil), fmtPct(r.Derived.DriverUtil),
			fmtNum(r.Derived.CallsPerSec), fmtMs(r.Result.LatencyMs.P99), inv})
	}
	return t
}

func h2loadLevelsNote(m Meta) string {
	if len(m.H2loadLevels) == 0 {
		return ""
	}
	return " (h2load at " + joinInts(m.H2loadLevels) + ")"
}

func readRatioName(v float64) string {
	if v == defaultReadRatio {
		return "default"
	}
	return fmtFloat(v)
}

func (rep *Report) problems() [][]string {
	var rows [][]string
	for _, g := range rep.Groups {
		for _, r := range g.records {
			for _, p := range r.Problems {
				rows = append(rows, []string{r.ID, p})
			}
		}
	}
	return rows
}

// cell looks a group up, or says why there is none: n/a for a mode that
// cannot serve the cell, — for one that simply did not run.
func (rep *Report) cell(sec Section, level int, mode string) (*Group, string) {
	if g := rep.group(sec, level, mode); g != nil {
		return g, ""
	}
	if _, ok := naFor(rep.Meta.NA, sec.Workload, mode, sec.Factors.Durability); ok {
		return nil, "n/a"
	}
	return nil, "—"
}

// overview is one table per section: levels down, modes across.
func (rep *Report) overview(sec Section) table {
	header := []string{"level"}
	for _, mode := range rep.Meta.Modes {
		header = append(header, mode+" calls/s", mode+" p99")
	}
	header = append(header, "runs by class", "verdict")
	var rows [][]string
	for _, level := range rep.levels(sec) {
		row := []string{rep.levelName(level)}
		classes := map[Class]int{}
		for _, mode := range rep.Meta.Modes {
			g, missing := rep.cell(sec, level, mode)
			if g == nil {
				row = append(row, missing, missing)
				continue
			}
			for c, n := range g.Classes {
				classes[c] += n
			}
			row = append(row, fmtCI(g.fig(mCallsPerSec), fmtNum), fmtMs(g.fig(mP99).Median))
		}
		rows = append(rows, append(row, fmtClasses(classes), rep.verdictText(sec, level)))
	}
	return table{header: header, rows: rows}
}

func fmtClasses(c map[Class]int) string {
	var parts []string
	for _, cl := range classes {
		if c[cl] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c[cl], cl))
		}
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}

// levelTable is one level of a section, one column per mode.
func (rep *Report) levelTable(sec Section, level int) table {
	header := []string{"figure"}
	type col struct {
		g       *Group
		missing string
	}
	var cols []col
	var groups []*Group
	for _, mode := range rep.Meta.Modes {
		g, missing := rep.cell(sec, level, mode)
		cols = append(cols, col{g, missing})
		if g != nil {
			groups = append(groups, g)
			header = append(header, fmt.Sprintf("%s (%d runs)", mode, len(g.records)))
		} else {
			header = append(header, mode)
		}
	}
	row := func(name string, cell func(g *Group) string) []string {
		r := []string{name}
		for _, c := range cols {
			if c.g == nil {
				r = append(r, c.missing)
				continue
			}
			r = append(r, cell(c.g))
		}
		return r
	}
	fig := func(m metric) []string {
		return row(m.Label, func(g *Group) string { return fmtCI(g.fig(m), m.format) })
	}
	v, vok := rep.verdict(sec, level)
	rows := [][]string{
		row("runs by class", func(g *Group) string { return fmtClasses(g.Classes) }),
		fig(mCallsPerSec),
		fig(mP50), fig(mP99), fig(mP999), fig(mMax),
		row("vs the best other design", func(g *Group) string {
			if !vok || !g.StoreBacked {
				return "—"
			}
			return rep.againstBest(sec, level, g, v.Metric)
		}),
		fig(mCalls),
		row(mUnexpected.Label+" (worst run)", func(g *Group) string { return fmtNum(g.fig(mUnexpected).Max) }),
		fig(mRefusals),
	}
	if rep.Meta.Model == "open" {
		rows = append(rows, fig(mDropped), fig(mLate))
	}
	rows = append(rows, fig(mServerCPUPerCall), fig(mServerUtil), fig(mDriverUtil), fig(mMemMiB))
	label := "store latency "
	if n := latencySampleEvery(groups); n > 1 {
		label = fmt.Sprintf("store latency (1 in %d sampled) ", n)
	}
	for _, op := range storeOps(groups) {
		rows = append(rows, row(label+op, func(g *Group) string {
			if g.fig(storeMetric(op, storeCount)).N == 0 {
				return "—"
			}
			ns := func(q string) string { return fmtNs(g.fig(storeMetric(op, q)).Median) }
			return fmt.Sprintf("p50=%s p99=%s p99.9=%s max=%s (n=%s a run)", ns(storeP50), ns(storeP99), ns(storeP999), ns(storeMax),
				fmtNum(g.fig(storeMetric(op, storeCount)).Median))
		}))
	}
	// The write-ahead log's figures, where a run kept one: group commit
	// shows as more than one record per sync.
	for _, m := range []metric{mWALSyncsPerSec, mWALRecordsPerSync} {
		if slices.ContainsFunc(groups, func(g *Group) bool { return g.fig(m).N > 0 }) {
			rows = append(rows, fig(m))
		}
	}
	rows = append(rows,
		fig(mSchedP50), fig(mSchedP99), fig(mMutexWait), fig(mQueueHighWater),
		row("invariants", func(g *Group) string {
			switch {
			case !g.StoreBacked:
				return "n/a: keeps no state"
			case g.Failed > 0:
				return fmt.Sprintf("FAILED in %d of %d runs", g.Failed, len(g.records))
			}
			return fmt.Sprintf("held in %d of %d runs", len(g.records), len(g.records))
		}),
	)
	return table{header: header, rows: rows}
}

// latencySampleEvery is the servers' store-latency sampling rate (the largest,
// should runs differ).
func latencySampleEvery(groups []*Group) uint32 {
	var n uint32
	for _, g := range groups {
		for _, r := range g.records {
			n = max(n, stats(r).GetLatencySampleEvery())
		}
	}
	return n
}

// storeOps lists the workload.op pairs with store latency in any group.
func storeOps(groups []*Group) []string {
	var runs []*RunRecord
	for _, g := range groups {
		runs = append(runs, g.records...)
	}
	return storeOpsOf(runs)
}

// designs are a level's store-backed groups.
func (rep *Report) designs(sec Section, level int) []*Group {
	var out []*Group
	for _, mode := range rep.Meta.Modes {
		if g := rep.group(sec, level, mode); g != nil && g.StoreBacked {
			out = append(out, g)
		}
	}
	return out
}

// Verdict bases: what a level's verdict was judged on, and why.
const (
	basisServerBound = "on calls/s, every run server-bound"
	basisNoLoadBound = "on calls/s, no run load-bound: the server set the pace, by its CPU or by what it waits for (a sync)"
	basisCPUPerCall  = "on server CPU per call: not every run was server-bound"
)

// verdictMetric chooses what a level's verdict compares: calls/s when the
// driver limited no run of the designs (every run server-bound, or some
// neither: the server waited, on a sync say, with CPU to spare), the
// server's CPU per call when the driver limited any.
func verdictMetric(designs []*Group) (m metric, higherBetter bool, basis string) {
	basis = basisServerBound
	for _, g := range designs {
		if g.Classes[ClassLoadBound] > 0 {
			return mServerCPUPerCall, false, basisCPUPerCall
		}
		if g.Classes[ClassServerBound] != len(g.records) {
			basis = basisNoLoadBound
		}
	}
	return mCallsPerSec, true, basis
}

// verdict compares the best design of a level with the runner-up.
func (rep *Report) verdict(sec Section, level int) (Verdict, bool) {
	ds := rep.designs(sec, level)
	if len(ds) < 2 {
		return Verdict{}, false
	}
	m, higher, basis := verdictMetric(ds)
	slices.SortStableFunc(ds, func(a, b *Group) int {
		c := cmpFloat(a.fig(m).Median, b.fig(m).Median)
		if higher {
			return -c
		}
		return c
	})
	v := newVerdict(ds[0].Mode, ds[1].Mode, ds[0].fig(m), ds[1].fig(m), m.Label, higher)
	v.Basis = basis
	return v, true
}

// verdictText is the verdict with what it was judged on.
func (rep *Report) verdictText(sec Section, level int) string {
	v, ok := rep.verdict(sec, level)
	if !ok {
		switch ds := rep.designs(sec, level); len(ds) {
		case 0:
			return "(no store-backed design ran)."
		default:
			return "(" + ds[0].Mode + " is the only design)."
		}
	}
	return fmt.Sprintf("(%s): %s.", v.Basis, v)
}

// againstBest is a design's test against the best other design of its level.
func (rep *Report) againstBest(sec Section, level int, g *Group, metricLabel string) string {
	m, higher := mCallsPerSec, true
	if metricLabel != mCallsPerSec.Label {
		m, higher = mServerCPUPerCall, false
	}
	var best *Group
	for _, o := range rep.designs(sec, level) {
		if o == g {
			continue
		}
		if best == nil || (higher && o.fig(m).Median > best.fig(m).Median) || (!higher && o.fig(m).Median < best.fig(m).Median) {
			best = o
		}
	}
	if best == nil {
		return "—"
	}
	c := compare(g.fig(m), best.fig(m))
	d := relDiff(best.fig(m).Median, g.fig(m).Median)
	return fmt.Sprintf("%s %+.1f%% vs %s, %s", m.Label, d*100, best.Mode, c)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// markdown renders the report as GitHub-flavoured Markdown.
func (rep *Report) markdown() string {
	var b strings.Builder
	blocks := rep.blocks(false)
	anchors := headingAnchors(blocks)
	for i, blk := range blocks {
		switch x := blk.(type) {
		case heading:
			fmt.Fprintf(&b, "%s %s\n\n", strings.Repeat("#", x.level), x.text)
		case para:
			fmt.Fprintf(&b, "%s\n\n", x)
		case toc:
			b.WriteString("Contents:\n\n")
			for j, e := range blocks[i:] {
				if h, ok := e.(heading); ok && h.level >= 2 {
					fmt.Fprintf(&b, "%s- [%s](#%s)\n", strings.Repeat("  ", h.level-2), h.text, anchors[i+j])
				}
			}
			b.WriteString("\n")
		case table:
			b.WriteString(mdRow(x.header))
			seps := make([]string, len(x.header))
			for i := range seps {
				seps[i] = "---"
			}
			b.WriteString(mdRow(seps))
			for _, r := range x.rows {
				b.WriteString(mdRow(r))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// headingAnchors gives every heading the anchor GitHub gives it: lower case,
// letters, digits, '-' and '_' kept, spaces to '-', the rest dropped, and
// -1, -2 … after repeats.
func headingAnchors(blocks []block) map[int]string {
	out := map[int]string{}
	seen := map[string]int{}
	for i, blk := range blocks {
		h, ok := blk.(heading)
		if !ok {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(h.text) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			seen[a]++
			a += "-" + strconv.Itoa(n)
		} else {
			seen[a] = 1
		}
		out[i] = a
	}
	return out
}

func mdRow(cells []string) string {
	esc := make([]string, len(cells))
	for i, c := range cells {
		esc[i] = strings.ReplaceAll(c, "|", `\|`)
	}
	return "| " + strings.Join(esc, " | ") + " |\n"
}

// fmtCI prints a median with its 95% confidence interval, [lo–hi], or, when
// there are too few runs for one, the runs' range, (min–max).
func fmtCI(s Stat, f func(float64) string) string {
	switch {
	case s.N == 0:
		return "—"
	case s.N == 1:
		return f(s.Median)
	case s.CI:
		return fmt.Sprintf("%s [%s–%s]", f(s.Median), f(s.Lo), f(s.Hi))
	}
	return fmt.Sprintf("%s (%s–%s)", f(s.Median), f(s.Min), f(s.Max))
}

// fmtNum prints a count or rate with thousands separators.
func fmtNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	n := int64(math.Round(v))
	s := strconv.FormatInt(max(n, -n), 10)
	var b strings.Builder
	if n < 0 {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func fmtNs(ns float64) string { return fmtMs(ns / 1e6) }

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

func joinFloats(xs []float64, name func(float64) string) string {
	if name == nil {
		name = fmtFloat
	}
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = name(x)
	}
	return strings.Join(s, ", ")
}

func joinDurations[D fmt.Stringer](xs []D) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = x.String()
	}
	return strings.Join(s, ", ")
}
