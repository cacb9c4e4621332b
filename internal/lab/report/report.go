package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
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

// picture is a chart that is also a file of its own beside report.md:
// the Markdown links the file, so that a repository browser shows it; the
// HTML draws it inline, as any chart.
type picture struct {
	chart
	file string
}

// toc marks where the table of contents goes; it lists the headings of
// levels 2 and 3 that follow.
type toc struct{}

// warning is a paragraph set apart: what a reader must know before any
// figure below.
type warning string

func (heading) isBlock() {}
func (para) isBlock()    {}
func (table) isBlock()   {}
func (chart) isBlock()   {}
func (picture) isBlock() {}
func (toc) isBlock()     {}
func (warning) isBlock() {}

// Report is a finished comparison.
type Report struct {
	Meta   record.Meta `json:"meta"`
	Groups []*Group    `json:"groups"`
	// Findings are the paired comparisons: every pair of every group on
	// every compared metric; the primaries among them one Holm family.
	Findings []Finding `json:"-"`

	notes map[Cell]cellNotes
	// gate is what the validity gate kept; all every run, spoiled or not.
	gate gateView
	all  []*record.Run
	// parts are the sections features add (Part), in their order.
	parts []Part
}

// New builds the report of a comparison from its runs, with the sections
// parts add.
func New(meta record.Meta, runs []*record.Run, parts ...Part) (*Report, error) {
	kept, gate := applyGate(meta, runs)
	groups, err := Aggregate(kept)
	if err != nil {
		return nil, err
	}
	rep := &Report{Meta: meta, Groups: groups, gate: gate, all: runs, parts: parts}
	if err := rep.analyse(); err != nil {
		return nil, err
	}
	return rep, nil
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
	return fmt.Sprintf("How to read: each repetition is a block, in which every mode ran once, in an order drawn afresh for the block; "+
		"a design is compared with the baseline (%s) and with `noop` block by block, on the ratio of its figure to theirs, so that "+
		"whatever moved a whole block (the machine's drift) cancels out. The effect is the trimmed mean of those ratios' logarithms "+
		"(Yuen's: the most extreme tenth of the blocks, at least one, set aside at each end; −12%% calls/s: 12%% fewer), `[lo, hi]` its "+
		"95%% confidence interval, so that one block out of line can neither make nor veto an effect. Only the primaries — each design against the baseline "+
		"on %s — are tested, together, with Holm's adjustment (family-wise level %s); \"the same within ±x%%\" is said only where "+
		"the 90%% interval lies inside the margin fixed before the run (two one-sided tests), and anything else is \"not shown\". "+
		"The comparisons with noop, p99 latency and the A/A control (the baseline run twice in a block, by two servers) are estimates "+
		"with intervals, not tests. Every pair is compared on the same figures, %s, whatever limited its runs. "+
		"The validity gate judges every run by its foreign CPU: the share of its CPUs that something other than the lab's server and "+
		"driver took over the measured window (/proc/stat's busy time, steal included, less the two processes' own CPU); a run over "+
		"the gate's limit spoils its block's cell, which runs again, and only clean cells are analysed. "+
		"Each run is classed by the CPU use of the server and of the driver over the measured window, each as a share of its own CPUs: "+
		"*server-bound* (server ≥ %.0f%%, driver < %.0f%%), *load-bound* (driver ≥ %.0f%%: the driver may have set the pace) or *neither* "+
		"(what limited it is said only where the CPU figures show it). A group with a load-bound run keeps its figures below but "+
		"leaves the headline. A run with steal ≥ %.0f%% of its CPUs is flagged. "+
		"In the per-level tables every figure is the median over a group's clean repetitions with its 95%% interval `[lo–hi]` "+
		"(golang.org/x/perf's benchmath, at least 6 runs) or the runs' range `(min–max)`. `noop` answers without touching any store: "+
		"the harness's ceiling. n/a marks a mode that does not serve a workload or a durability. Latency curves merge the repetitions' "+
		"HDR histograms (or take the median of each percentile). Every figure comes from the raw files in `runs/`; `figures.json` "+
		"names the runs behind each one.",
		rep.baseline(), labelsOf(primaryMetrics()), fmtAlpha(), comparedLabels(),
		record.ServerBusy*100, record.DriverBusy*100, record.DriverBusy*100, record.NotableSteal*100)
}

// commitText names the code a comparison ran: its commit, and whether the
// working tree held more.
func commitText(m record.Meta) string {
	switch {
	case m.GitCommit == "":
		return "locklab commit (not recorded)"
	case m.GitDirty:
		return "locklab commit " + m.GitCommit + " with uncommitted changes"
	}
	return "locklab commit " + m.GitCommit
}

// dirtyWarning is a report's first block when it was made from a working
// tree with uncommitted changes: its commit does not name the code that
// produced it, and a reader must know that before the title. A clean run
// has none.
func dirtyWarning(m record.Meta) []block {
	if !m.GitDirty {
		return nil
	}
	return []block{warning(fmt.Sprintf("made from a working tree with uncommitted changes: locklab commit %s is not the whole of the code "+
		"that produced these figures, and the changes were not recorded (`meta.json`: `git_dirty`).", cmp.Or(m.GitCommit, "(not recorded)")))}
}

// comparedLabels names the compared metrics in a sentence.
func comparedLabels() string {
	var ls []string
	for _, m := range Compared() {
		ls = append(ls, m.Label)
	}
	return strings.Join(ls, ", ")
}

func (rep *Report) blocks(withCharts bool) []block {
	m := rep.Meta
	pin := "server and driver not pinned (one CPU, or -pin=false)"
	if len(m.ServerCPUs) > 0 {
		pin = fmt.Sprintf("server on CPU %s (GOMAXPROCS=%d), driver on CPU %s (GOMAXPROCS=%d)",
			plan.CPUList(m.ServerCPUs), len(m.ServerCPUs), plan.CPUList(m.DriverCPUs), len(m.DriverCPUs))
	}
	if vs := m.Factors.Values(plan.ServerCPUs); len(vs) > 1 || (len(vs) == 1 && vs[0] != plan.DefaultPoint().Get(plan.ServerCPUs)) {
		pin = "server on the CPUs each run's server CPUs name (GOMAXPROCS matching), driver on the CPUs the server leaves or -driver-cpus names (each run's record has both)"
	}
	if m.ShareCPUs {
		pin += "; -share-cpus: where a run's server CPUs left the driver none of its own, the driver ran on the server's"
	}
	versions := []string{m.GoVersion}
	if rts := m.Factors.Values(plan.Runtime); len(rts) > 1 || (len(rts) == 1 && rts[0] != plan.RuntimeLocal) {
		var built []string
		for _, b := range m.Runtimes {
			built = append(built, fmt.Sprintf("%s (%s)", b.Runtime, cmp.Or(b.Version(), "no build info")))
		}
		versions = append(versions, "server runtimes "+strings.Join(built, ", ")+" (meta.json has each binary's `go version -m`)")
	}
	for _, v := range []string{m.K6Version, m.H2loadVersion, m.MariaDBVersion, m.RedisVersion} {
		if v != "" {
			versions = append(versions, v)
		}
	}
	out := append(dirtyWarning(m), heading{1, "locklab comparison: " + strings.Join(m.Modes, " vs ")})
	out = append(out, rep.answer()...)
	out = append(out,
		para(fmt.Sprintf("Command: `%s`", m.Command)),
		para(fmt.Sprintf("Machine: %d CPUs (%s), %s memory, Linux %s; %s; %s. Started %s, finished %s.",
			m.CPUs, m.CPUModel, m.MemTotal, m.Kernel, strings.Join(versions, "; "), commitText(m),
			m.Started.Format("2006-01-02 15:04:05 UTC"), m.Finished.Format("15:04:05 UTC"))),
		para(fmt.Sprintf("Configuration: workloads %s; modes %s (baseline %s); drivers %s; %s model at %s%s; factors: %s; "+
			"%s measured after a %s warm-up; %d repetitions as blocks, %s; a fresh server for every run; %s.",
			strings.Join(m.Workloads, ", "), strings.Join(m.Modes, ", "), rep.baseline(), strings.Join(m.Drivers, ", "), m.Model, joinInts(m.Levels),
			h2loadLevelsNote(m), m.Factors, m.Duration, m.Warmup, m.Reps, blockOrder(m), pin)),
	)
	out = append(out, rep.headline(withCharts)...)
	out = append(out, para(rep.howToRead()), toc{})
	out = append(out, rep.spoiledBlocks(withCharts)...)
	if bad := rep.problems(); len(bad) > 0 {
		out = append(out, heading{2, "Problems"}, para("These runs broke an invariant or failed; their figures are still in the tables."))
		out = append(out, table{header: []string{"run", "problem"}, rows: bad})
	}
	if len(m.NA) > 0 {
		var rows [][]string
		for _, na := range m.NA {
			under := "any"
			if na.Factor != "" {
				under = na.Factor + " " + na.Value
			}
			rows = append(rows, []string{na.Workload, na.Mode, under, na.Reason})
		}
		out = append(out, heading{2, "Not applicable"}, para("Cells shown as n/a: the mode cannot serve them, so they have no runs."),
			table{header: []string{"workload", "mode", "factors", "why"}, rows: rows})
	}
	for _, sec := range rep.sections() {
		out = append(out, heading{2, sec.String()})
		out = append(out, rep.sharedNotes(sec)...)
		out = append(out, rep.overview(sec))
		if withCharts {
			out = append(out, rep.charts(sec)...)
		}
		for _, level := range rep.levels(sec) {
			out = append(out, heading{3, fmt.Sprintf("%s · %s · %s", sec.Workload, sec.Driver, rep.levelName(level))})
			out = append(out, rep.levelTable(sec, level))
			out = append(out, rep.levelVerdicts(Cell{sec, level})...)
			if withCharts {
				out = append(out, rep.percentileChart(sec, level))
			}
		}
	}
	for _, p := range rep.parts {
		out = append(out, p.Blocks(rep, withCharts)...)
	}
	out = append(out, heading{2, "Every run"})
	return append(out, rep.everyRun(withCharts)...)
}

// everyRun is the list of every run in report.html; report.md, which a
// repository browser shows, counts them by class and says where the list
// and the records are: a study of a thousand runs would otherwise be
// mostly that table.
func (rep *Report) everyRun(detail bool) []block {
	if detail {
		return []block{para("Each run's class and CPU use over its measured window, in the order they ran."), rep.runsTable()}
	}
	classes := map[record.Class]int{}
	failed := 0
	for _, r := range rep.all {
		classes[r.Derived.Class]++
		if r.Failed() {
			failed++
		}
	}
	text := fmt.Sprintf("%d runs, by class over their measured window: %s", len(rep.all), fmtClasses(classes))
	if failed > 0 {
		text += fmt.Sprintf("; %d failed or broke an invariant (Problems, above)", failed)
	}
	return []block{para(text + ". Each run — its class, CPU use, foreign CPU (spoiled or not), calls/s, p99 latency, invariants and what limited it — " +
		"is listed in `report.html` (`go run ./cmd/compare -rerender DIR` writes it), and its record is kept in `runs/` (`runs.tar.gz` once packed).")}
}

// runsTable lists every run with its class.
func (rep *Report) runsTable() table {
	runs := slices.Clone(rep.all)
	slices.SortStableFunc(runs, func(a, b *record.Run) int { return cmp.Or(a.Index-b.Index, attemptOf(a)-attemptOf(b)) })
	t := table{header: []string{"run", "block", "class", "server CPU", "driver CPU", "server's CPUs busy", "driver's CPUs busy", "steal", "foreign",
		mCallsPerSec.Label, mP99.Label, "invariants", "what limited it"}}
	for _, r := range runs {
		inv := "held"
		switch {
		case r.Failed():
			inv = "FAILED"
		case !r.StoreBacked():
			inv = "n/a"
		}
		set := func(u record.SetUsage, v float64) string {
			if !u.Sampled() {
				return "—"
			}
			return UnitShare.Format(v)
		}
		steal := "—"
		if r.ServerSet.Sampled() || r.DriverSet.Sampled() {
			steal = UnitShare.Format(r.Derived.Steal)
			if r.Derived.HighSteal {
				steal += " (notable)"
			}
		}
		t.rows = append(t.rows, []string{r.ID, strconv.Itoa(r.Rep), string(r.Derived.Class), UnitShare.Format(r.Derived.ServerUtil), UnitShare.Format(r.Derived.DriverUtil),
			set(r.ServerSet, r.Derived.ServerSetBusy), set(r.DriverSet, r.Derived.DriverSetBusy), steal, foreign(rep.Meta.Gate, r),
			fmtNum(r.Derived.CallsPerSec), fmtMs(r.Result.LatencyMs.P99), inv, cmp.Or(r.Limit(), "not shown by its CPU figures")})
	}
	return t
}

// foreign is a run's foreign CPU for the list of runs, and whether the
// gate spoiled it.
func foreign(g *record.Gate, r *record.Run) string {
	if !r.ServerSet.Sampled() && !r.DriverSet.Sampled() {
		return "—"
	}
	s := UnitShare.Format(r.Derived.Foreign)
	if g.Spoils(r) != "" {
		s += " (spoiled)"
	}
	return s
}

func h2loadLevelsNote(m record.Meta) string {
	if len(m.H2loadLevels) == 0 {
		return ""
	}
	return " (h2load at " + joinInts(m.H2loadLevels) + ")"
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
	if _, ok := plan.NAFor(rep.Meta.NA, sec.Workload, mode, sec.Factors); ok {
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
	header = append(header, "runs by class")
	var rows [][]string
	for _, level := range rep.levels(sec) {
		row := []string{rep.levelName(level)}
		classes := map[record.Class]int{}
		for _, mode := range rep.Meta.Modes {
			g, missing := rep.cell(sec, level, mode)
			if g == nil {
				row = append(row, missing, missing)
				continue
			}
			for c, n := range g.Classes {
				classes[c] += n
			}
			row = append(row, fmtCI(g.fig(mCallsPerSec), mCallsPerSec.Unit.Format), fmtMs(g.fig(mP99).Median))
		}
		rows = append(rows, append(row, fmtClasses(classes)))
	}
	return table{header: header, rows: rows}
}

func fmtClasses(c map[record.Class]int) string {
	var parts []string
	for _, cl := range record.Classes {
		if c[cl] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c[cl], cl))
		}
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}

// levelTable is one level of a section, one column per mode: a row per
// metric of the catalogue in a table block, each block followed by its rows
// that are not one metric's.
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
	fig := func(m *Metric) []string {
		if m.Worst {
			return row(m.Label+" (worst run)", func(g *Group) string { return m.Unit.Format(g.fig(m).Max) })
		}
		return row(m.Label, func(g *Group) string { return fmtCI(g.fig(m), m.Unit.Format) })
	}
	after := map[Block]func() [][]string{
		BlockCPU: func() [][]string { return storeRows(groups, row) },
		BlockServer: func() [][]string {
			return [][]string{row("invariants", func(g *Group) string {
				switch {
				case !g.StoreBacked:
					return "n/a: keeps no state"
				case g.Failed > 0:
					return fmt.Sprintf("FAILED in %d of %d runs", g.Failed, len(g.records))
				}
				return fmt.Sprintf("held in %d of %d runs", len(g.records), len(g.records))
			})}
		},
	}
	rows := [][]string{row("runs by class", func(g *Group) string { return fmtClasses(g.Classes) })}
	for _, b := range blocks {
		for _, m := range Catalogue {
			if m.Block != b || m.PerOp != nil {
				continue
			}
			if m.HideEmpty && !slices.ContainsFunc(groups, func(g *Group) bool { return g.fig(m).N > 0 }) {
				continue
			}
			rows = append(rows, fig(m))
		}
		if f := after[b]; f != nil {
			rows = append(rows, f()...)
		}
	}
	return table{header: header, rows: rows}
}

// storeRows are the store latency's rows of a level, one per op: the
// families' medians in one cell.
func storeRows(groups []*Group, row func(string, func(*Group) string) []string) [][]string {
	label := "store latency "
	if n := latencySampleEvery(groups); n > 1 {
		label = fmt.Sprintf("store latency (1 in %d sampled) ", n)
	}
	var rows [][]string
	for _, op := range storeOps(groups) {
		q := func(key string) *Metric { return family(key).forOp(op) }
		count := q("store.%s.count")
		rows = append(rows, row(label+op, func(g *Group) string {
			if g.fig(count).N == 0 {
				return "—"
			}
			ns := func(key string) string { m := q(key); return m.Unit.Format(g.fig(m).Median) }
			return fmt.Sprintf("p50=%s p99=%s p99.9=%s max=%s (n=%s a run)", ns("store.%s.p50_ns"), ns("store.%s.p99_ns"),
				ns("store.%s.p999_ns"), ns("store.%s.max_ns"), count.Unit.Format(g.fig(count).Median))
		}))
	}
	return rows
}

// latencySampleEvery is the servers' store-latency sampling rate (the largest,
// should runs differ).
func latencySampleEvery(groups []*Group) uint32 {
	var n uint32
	for _, g := range groups {
		for _, r := range g.records {
			if st, err := r.ServerStats(); err == nil {
				n = max(n, st.GetLatencySampleEvery())
			}
		}
	}
	return n
}

// Markdown renders the report as GitHub-flavoured Markdown.
func (rep *Report) Markdown() string { return markdown(rep.blocks(false)) }

// markdown renders blocks as GitHub-flavoured Markdown.
func markdown(blocks []block) string {
	var b strings.Builder
	anchors := headingAnchors(blocks)
	for i, blk := range blocks {
		switch x := blk.(type) {
		case heading:
			fmt.Fprintf(&b, "%s %s\n\n", strings.Repeat("#", x.level), x.text)
		case para:
			fmt.Fprintf(&b, "%s\n\n", x)
		case warning:
			fmt.Fprintf(&b, "> **Warning:** %s\n\n", x)
		case picture:
			fmt.Fprintf(&b, "![%s](%s)\n\n", x.title, x.file)
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
