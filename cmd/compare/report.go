package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
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

func (heading) isBlock() {}
func (para) isBlock()    {}
func (table) isBlock()   {}
func (chart) isBlock()   {}

// Report is a finished comparison.
type Report struct {
	Meta   Meta     `json:"meta"`
	Groups []*Group `json:"groups"`
}

// group returns the group of a workload, level and mode, or nil.
func (rep *Report) group(wl string, level int, mode string) *Group {
	for _, g := range rep.Groups {
		if g.Workload == wl && g.Level == level && g.Mode == mode {
			return g
		}
	}
	return nil
}

func (rep *Report) levelName(level int) string {
	if rep.Meta.Model == "open" {
		return fmt.Sprintf("%d iterations/s (open model)", level)
	}
	return fmt.Sprintf("%d VUs", level)
}

func (rep *Report) blocks(withCharts bool) []block {
	m := rep.Meta
	out := []block{
		heading{1, "locklab comparison: " + strings.Join(m.Modes, " vs ")},
		para(fmt.Sprintf("Command: `%s`", m.Command)),
		para(fmt.Sprintf("Machine: %d CPUs (%s), %s memory, Linux %s; %s; %s; locklab commit %s%s. Started %s, finished %s.",
			m.CPUs, m.CPUModel, m.MemTotal, m.Kernel, m.GoVersion, m.K6Version, m.GitCommit,
			map[bool]string{true: " with uncommitted changes", false: ""}[m.GitDirty],
			m.Started.Format("2006-01-02 15:04:05 UTC"), m.Finished.Format("15:04:05 UTC"))),
		para(fmt.Sprintf("Configuration: workloads %s; modes %s; %s model at %s; %s measured after a %s warm-up; %d repetitions, interleaved; a fresh server for every run.",
			strings.Join(m.Workloads, ", "), strings.Join(m.Modes, ", "), m.Model, joinInts(m.Levels), m.Duration, m.Warmup, m.Reps)),
		para("How to read: every figure is the median over the repetitions of that workload, level and mode; " +
			"`[min–max]` is the spread across them. The verdict compares the two fastest designs by requests/s and calls a " +
			"difference real only when their [min–max] ranges do not overlap. A run is marked k6-saturated when k6 used at least " +
			fmt.Sprintf("%.0f%%", saturation*100) + " of the CPU the server left it: such a run measured the load generator, not the design. " +
			"`noop` answers without touching any store: it is the harness's ceiling on this machine. " +
			"Every figure comes from the raw files in `runs/`; `figures.json` names the runs behind each one."),
	}
	if bad := rep.problems(); len(bad) > 0 {
		out = append(out, heading{2, "Problems"}, para("These runs broke an invariant or failed; their figures are still in the tables."))
		out = append(out, table{header: []string{"run", "problem"}, rows: bad})
	}
	for _, wl := range m.Workloads {
		out = append(out, heading{2, "Workload " + wl})
		out = append(out, rep.overview(wl)...)
		if withCharts {
			out = append(out, rep.charts(wl)...)
		}
		for _, level := range m.Levels {
			out = append(out, heading{3, wl + " at " + rep.levelName(level)})
			out = append(out, rep.levelTable(wl, level), para("Verdict: "+rep.verdict(wl, level)))
		}
	}
	return out
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

// overview is one table per workload: levels down, modes across.
func (rep *Report) overview(wl string) []block {
	header := []string{"level"}
	for _, mode := range rep.Meta.Modes {
		header = append(header, mode+" requests/s", mode+" p99")
	}
	header = append(header, "verdict")
	var rows [][]string
	for _, level := range rep.Meta.Levels {
		row := []string{rep.levelName(level)}
		for _, mode := range rep.Meta.Modes {
			g := rep.group(wl, level, mode)
			if g == nil {
				row = append(row, "—", "—")
				continue
			}
			row = append(row, fmtSpread(g.fig("requests_per_sec"), fmtNum), fmtMs(g.fig("grpc_req_duration_ms.p99").Median))
		}
		rows = append(rows, append(row, rep.verdict(wl, level)))
	}
	return []block{table{header: header, rows: rows}}
}

// levelTable is the seed's table for one level, one column per mode, with the
// rows the seed lacked below its own.
func (rep *Report) levelTable(wl string, level int) table {
	header := []string{"Parameters"}
	var groups []*Group
	for _, mode := range rep.Meta.Modes {
		if g := rep.group(wl, level, mode); g != nil {
			groups = append(groups, g)
			header = append(header, fmt.Sprintf("%s (%d runs)", mode, len(g.records)))
		}
	}
	row := func(name string, cell func(g *Group) string) []string {
		r := []string{name}
		for _, g := range groups {
			r = append(r, cell(g))
		}
		return r
	}
	trend := func(prefix string, p99 bool) func(g *Group) string {
		return func(g *Group) string {
			f := func(k string) string { return fmtMs(g.fig(prefix + "." + k).Median) }
			s := fmt.Sprintf("avg=%s min=%s med=%s max=%s p(90)=%s p(95)=%s", f("avg"), f("min"), f("med"), f("max"), f("p90"), f("p95"))
			if p99 {
				s += " p(99)=" + f("p99")
			}
			return s
		}
	}
	rows := [][]string{
		row("data_received", func(g *Group) string {
			return fmtBytes(g.fig("data_received.bytes").Median) + " " + fmtBytes(g.fig("data_received.rate").Median) + "/s"
		}),
		row("data_sent", func(g *Group) string {
			return fmtBytes(g.fig("data_sent.bytes").Median) + " " + fmtBytes(g.fig("data_sent.rate").Median) + "/s"
		}),
		row("grpc_req_duration", trend("grpc_req_duration_ms", true)),
		row("iteration_duration", trend("iteration_duration_ms", false)),
		row("iterations", func(g *Group) string {
			return fmtNum(g.fig("iterations.count").Median) + " " + fmtNum(g.fig("iterations.rate").Median) + "/s"
		}),
		row("requests/s [min–max]", func(g *Group) string { return fmtSpread(g.fig("requests_per_sec"), fmtNum) }),
		row("unexpected errors (worst run)", func(g *Group) string { return fmtNum(g.fig("unexpected_errors").Max) }),
		row("expected refusals", func(g *Group) string { return fmtNum(g.fig("expected_refusals").Median) }),
		row("server CPU per request", func(g *Group) string {
			if s := g.fig("server_cpu_us_per_request"); s.N > 0 {
				return fmtSpread(s, func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + "µs" })
			}
			return "—"
		}),
		row("CPU cores used: server / k6", func(g *Group) string {
			return fmt.Sprintf("%.2f / %.2f", g.fig("server_cores").Median, g.fig("k6_cores").Median)
		}),
		row("k6 saturated", func(g *Group) string { return fmt.Sprintf("%d of %d runs", g.Saturated, len(g.records)) }),
	}
	label := "store latency "
	if n := latencySampleEvery(groups); n > 1 {
		label = fmt.Sprintf("store latency (1 in %d sampled) ", n)
	}
	for _, op := range storeOps(groups) {
		rows = append(rows, row(label+op, func(g *Group) string {
			p := "store." + op + "."
			if g.fig(p+"count").N == 0 {
				return "—"
			}
			ns := func(k string) string { return fmtNs(g.fig(p + k).Median) }
			return fmt.Sprintf("p50=%s p99=%s p99.9=%s max=%s", ns("p50_ns"), ns("p99_ns"), ns("p999_ns"), ns("max_ns"))
		}))
	}
	rows = append(rows,
		row("queue high-water", func(g *Group) string {
			if s := g.fig("queue_high_water"); s.N > 0 {
				return fmtSpread(s, fmtNum)
			}
			return "—"
		}),
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
	var ops []string
	for _, g := range groups {
		for k := range g.Figures {
			if rest, ok := strings.CutPrefix(k, "store."); ok && strings.HasSuffix(rest, ".count") {
				op := strings.TrimSuffix(rest, ".count")
				if !slices.Contains(ops, op) {
					ops = append(ops, op)
				}
			}
		}
	}
	slices.Sort(ops)
	return ops
}

// verdict says, in one line, which design is ahead at a level and whether
// the lead is larger than the spread over repetitions.
func (rep *Report) verdict(wl string, level int) string {
	var backed []*Group
	var noop *Group
	saturated, runs := 0, 0
	for _, mode := range rep.Meta.Modes {
		g := rep.group(wl, level, mode)
		if g == nil {
			continue
		}
		saturated += g.Saturated
		runs += len(g.records)
		if g.StoreBacked {
			backed = append(backed, g)
		} else {
			noop = g
		}
	}
	slices.SortStableFunc(backed, func(a, b *Group) int {
		return -cmpFloat(a.fig("requests_per_sec").Median, b.fig("requests_per_sec").Median)
	})
	var s string
	switch {
	case len(backed) == 0:
		s = "no store-backed design ran"
	case len(backed) == 1:
		s = backed[0].Mode + " is the only design"
	default:
		a, b := backed[0].fig("requests_per_sec"), backed[1].fig("requests_per_sec")
		lead := (a.Median - b.Median) / b.Median * 100
		s = fmt.Sprintf("%s leads %s by %.1f%% in requests/s (%s vs %s)", backed[0].Mode, backed[1].Mode, lead, fmtNum(a.Median), fmtNum(b.Median))
		switch {
		case a.N < 2 || b.N < 2:
			s += "; one repetition, so no spread to judge it against"
		case a.Min <= b.Max:
			s += "; the ranges overlap: within the spread, no measurable difference"
		default:
			s += "; the ranges do not overlap: larger than the spread"
		}
	}
	if noop != nil && len(backed) > 0 {
		if ceil := noop.fig("requests_per_sec").Median; ceil > 0 {
			s += fmt.Sprintf("; %s reached %.0f%% of the noop ceiling", backed[0].Mode, backed[0].fig("requests_per_sec").Median/ceil*100)
		}
	}
	if saturated > 0 {
		s += fmt.Sprintf("; k6 was saturated in %d of %d runs, so this level measured the load generator", saturated, runs)
	}
	return s + "."
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
	for _, blk := range rep.blocks(false) {
		switch x := blk.(type) {
		case heading:
			fmt.Fprintf(&b, "%s %s\n\n", strings.Repeat("#", x.level), x.text)
		case para:
			fmt.Fprintf(&b, "%s\n\n", x)
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

func mdRow(cells []string) string {
	esc := make([]string, len(cells))
	for i, c := range cells {
		esc[i] = strings.ReplaceAll(c, "|", `\|`)
	}
	return "| " + strings.Join(esc, " | ") + " |\n"
}

func fmtSpread(s Stat, f func(float64) string) string {
	if s.N == 0 {
		return "—"
	}
	if s.N == 1 {
		return f(s.Median)
	}
	return fmt.Sprintf("%s [%s–%s]", f(s.Median), f(s.Min), f(s.Max))
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

// fmtBytes prints bytes as k6 does: decimal units.
func fmtBytes(v float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB"}
	i := 0
	for v >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f %s", v, units[i])
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

func fmtNs(ns float64) string { return fmtMs(ns / 1e6) }

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
