package duet

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/lab/chart"
	"github.com/locklab/locklab/internal/lab/paired"
)

// Header is what a report says of how its rounds ran.
type Header struct {
	Title   string // "make compare"
	Command string
	Commit  string
	// Setup describes the rounds: CPUs, quotas, round length, drivers.
	Setup []string
	// Notes are lines the runner adds (what ran isolated, and why).
	Notes []string
	// Before says, where the rounds were run under a default the method
	// has since changed, what they ran under: at the top, until the study
	// is run again ("" for none).
	Before string
	// Picture is the forest plot's file beside the report ("" for none),
	// shown under the answer.
	Picture string
}

// ForestTitle heads the forest plot, and is its alt text.
func ForestTitle(r Result) string {
	if len(r.Primaries) == 0 {
		if !hasAA(r) {
			return fmt.Sprintf("Side by side, no primary comparison and no A/A twin: the known-answer arm's calls/s against the baseline, effect (%%) with its 95%% interval; dashed lines: the ±%s equivalence margin", paired.PctAbs(r.Options.Margin))
		}
		return fmt.Sprintf("Side by side, no primary comparison: the A/A twin against the baseline, effect (%%) with its 95%% interval; dashed lines: the ±%s equivalence margin", paired.PctAbs(r.Options.Margin))
	}
	return fmt.Sprintf("Side by side, every primary comparison: effect (%%) with its 95%% interval; dashed lines: the ±%s equivalence margin", paired.PctAbs(r.Options.Margin))
}

// ForestRows are the forest plot's rows: every primary comparison, or
// where a plan has none (the baseline, its twin and the known spin alone)
// the A/A twin's estimates, or where it has no twin either (-aa=false) the
// known arm's calls/s, so that every report shows its comparisons.
func ForestRows(r Result) []chart.ForestRow {
	var out []chart.ForestRow
	for _, p := range r.Primaries {
		out = append(out, chart.ForestRow{Label: fmt.Sprintf("%s: %s vs %s, %s (%s)", p.Group, p.Design, p.Baseline, p.Metric, p.Outcome),
			Ratio: p.Ratio, Lo: p.Lo, Hi: p.Hi, Drawn: p.Outcome != paired.OutcomeTooFew, Outcome: p.Outcome})
	}
	if len(out) > 0 {
		return out
	}
	for _, g := range r.Groups {
		for _, e := range g.AA {
			out = append(out, chart.ForestRow{Label: fmt.Sprintf("%s: %s vs the baseline, %s", g.Name, e.Design, e.Metric),
				Ratio: e.Ratio, Lo: e.Lo, Hi: e.Hi, Drawn: e.N >= 3, Outcome: paired.OutcomeNotShown})
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, g := range r.Groups {
		if k := g.Known; k != nil {
			out = append(out, chart.ForestRow{Label: fmt.Sprintf("%s: the known arm vs the baseline, calls/s (implied %s)", g.Name, paired.Pct(k.TrueCalls-1)),
				Ratio: k.Calls.Ratio, Lo: k.Calls.Lo, Hi: k.Calls.Hi, Drawn: k.N >= 3, Outcome: paired.OutcomeNotShown})
		}
	}
	return out
}

// hasAA says whether any group of r has the A/A twin.
func hasAA(r Result) bool {
	for _, g := range r.Groups {
		if len(g.AA) > 0 {
			return true
		}
	}
	return false
}

// WriteMarkdown renders the analysis as report.md: the answer first, then
// the calibrations, every primary, and the rounds.
func WriteMarkdown(w io.Writer, h Header, r Result) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# %s\n\n", h.Title)
	p("Measured side by side (duet): in every round each arm ran on a fresh server of its own, all at the same moment on the same server CPUs, each with an equal share of them (the Setup says how), each driven by its own driver; each comparison pairs the arms within a round.\n\n")
	if h.Before != "" {
		p("%s\n\n", h.Before)
	}
	if h.Command != "" {
		p("Command: `%s`", h.Command)
		if h.Commit != "" {
			p(" at %s", h.Commit)
		}
		p("\n\n")
	}
	p("## The answer\n\n")
	for _, g := range r.Groups {
		p("- **%s**:", g.Name)
		first := true
		for _, pr := range r.Primaries {
			if pr.Group != g.Name {
				continue
			}
			if !first {
				p(";")
			}
			first = false
			p(" %s%s", pr.Sentence(), DecideClause(pr.Primary))
		}
		if first {
			p(" no primary comparison")
			if k := g.Known; k != nil && k.N >= 3 {
				p("; the known arm added %+.2f µs [%+.2f, %+.2f] of server CPU per call (true %+.2f µs)", 1e6*k.CPU.Mean, 1e6*k.CPU.Lo, 1e6*k.CPU.Hi, 1e6*k.TrueCPU)
			}
		}
		if len(g.LoadBound) > 0 {
			p(" — load-bound arms, their rounds left out: %s", strings.Join(g.LoadBound, ", "))
		}
		p(".\n")
	}
	if u := r.Undecided(); u != "" {
		p("\n%s\n", u)
	}
	if h.Picture != "" {
		p("\n![%s](%s)\n", ForestTitle(r), h.Picture)
	}
	p("\n## Calibration: the A/A control and the known answer\n\n")
	p("The A/A twin is the baseline again on a server of its own: its true difference is 0. The known-answer arm is the baseline with a known spin added to every call: its true added CPU per call is known, and with an equal share of the CPU its calls/s ratio is implied by it (c/(c+spin), c the baseline's CPU per call). Isolated, one run after another, the spin reads its size (make study NAME=known-isolated); side by side, where the arms share a CPU, an arm that serves fewer calls reads more CPU per call than the work it adds, and \"true CPU outside\" says by how much (docs/methodology.md, \"What the known answer measures\").")
	level, knowns := 0.0, 0
	for _, g := range r.Groups {
		if g.Known != nil {
			level, knowns = g.Known.Level, knowns+1
		}
	}
	if knowns > 1 {
		p(" The %d groups' intervals of the known arm's added CPU are read together, each at %s, so that all of them hold the true spin with %s when the instrument is exact, as the A/A floors are (docs/methodology.md, \"Calibrations read together\").", knowns, levelPct(level), levelPct(paired.Confidence))
	}
	p("\n\n")
	judged := r.Options.Judged()
	p("| group | rounds kept |")
	for _, m := range judged {
		p(" A/A %s |", m.Name)
	}
	p(" A/A floor | known: added CPU/call [%s] (true) | known: calls/s (implied) | calibration |\n|%s\n", levelPct(cmp.Or(level, paired.Confidence)), strings.Repeat(" --- |", len(judged)+6))
	for _, g := range r.Groups {
		aa := map[string]string{}
		for _, e := range g.AA {
			aa[e.Metric] = estimate(e)
		}
		known, calls, verdict := "—", "—", "no known arm"
		if k := g.Known; k != nil {
			if k.N >= 3 {
				known = fmt.Sprintf("%+.2f µs [%+.2f, %+.2f] (%+.2f µs)", 1e6*k.CPU.Mean, 1e6*k.CPU.Lo, 1e6*k.CPU.Hi, 1e6*k.TrueCPU)
				calls = fmt.Sprintf("%s [%s, %s] (%s)", paired.Pct(k.Calls.Ratio-1), paired.Pct(k.Calls.Lo-1), paired.Pct(k.Calls.Hi-1), paired.Pct(k.TrueCalls-1))
				verdict = map[bool]string{true: "true CPU inside", false: "**true CPU outside**"}[k.CPUOK()] + ", " +
					map[bool]string{true: "implied calls/s inside", false: "**implied calls/s outside**"}[k.CallsOK()]
			} else {
				verdict = fmt.Sprintf("too few rounds (%d)", k.N)
			}
		}
		floor := "—"
		if f := g.Floor(); !math.IsInf(f, 1) {
			floor = "±" + paired.PctAbs(f)
		}
		p("| %s | %d of %d |", g.Name, g.Clean, g.Rounds)
		for _, m := range judged {
			p(" %s |", cmpOr(aa[m.Name]))
		}
		p(" %s | %s | %s | %s |\n", floor, known, calls, verdict)
	}
	p("\n## Every primary comparison\n\n")
	p("Declared before the runs: every design against the baseline in every group, %s; judged together (Holm, α = %g), \"the same\" only within ±%s.\n\n", onMetrics(judged), r.Options.Alpha, paired.PctAbs(r.Options.Margin))
	p("| group | design | metric | effect [95%%] | outcome | rounds | unpaired half-width | paired half-width |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, pr := range r.Primaries {
		g := r.group(pr.Group)
		key := pr.Design + " " + pr.Metric
		design := pr.Design
		if b, ok := roleArm(g.Arms, RoleBaseline); ok && pr.Baseline != b.Name {
			design += " (against " + pr.Baseline + ")"
		}
		outcome := pr.Outcome.String()
		if pr.ToDecide > 0 {
			outcome += fmt.Sprintf(" (≈%d rounds would decide it)", pr.ToDecide)
		}
		p("| %s | %s | %s | %s | %s | %d | %s | %s |\n", pr.Group, design, pr.Metric, effect(pr.Robust), outcome, pr.N, halfWidth(g.Unpaired[key]), halfWidth(g.Paired[key]))
	}
	if slices.ContainsFunc(r.Groups, func(g Group) bool { return len(g.Ceiling) > 0 }) {
		p("\n## The harness's ceiling (noop), not judged\n\n| group | metric | noop against the baseline |\n| --- | --- | --- |\n")
		for _, g := range r.Groups {
			for _, e := range g.Ceiling {
				p("| %s | %s | %s |\n", g.Name, e.Metric, estimate(e))
			}
		}
	}
	if slices.ContainsFunc(r.Groups, func(g Group) bool { return len(g.Anatomy) > 0 }) {
		p("\n## How a call's CPU was spent, not judged\n\n")
		p("Each arm's server threads' wake-ups (the times they were put on a CPU), per call and per second, and its read and write system calls per call: the median over the rounds, and the arm against the baseline paired by round. An arm that spends more CPU per call than its own work accounts for splits the server's work into more pieces. Where its wake-ups per second stay the baseline's, they came at the rate of the shared CPU, not of its calls: their cost is paid per second, and an arm that serves fewer calls pays more of it on each, the known-answer arm too (docs/methodology.md, \"What the known answer measures\").\n\n")
		p("| group | arm |")
		for _, m := range Anatomy {
			p(" %s | against the baseline |", m.Name)
		}
		p("\n| --- | --- |%s\n", strings.Repeat(" --- | --- |", len(Anatomy)))
		for _, g := range r.Groups {
			for _, a := range g.Arms {
				p("| %s | %s |", g.Name, a.Name)
				for _, m := range Anatomy {
					med, vs := "—", "—"
					if v, ok := g.Medians[a.Name+" "+m.Name]; ok {
						med = anatomyFigure(v)
					}
					if a.Role == RoleBaseline {
						vs = "(baseline)"
					}
					for _, e := range g.Anatomy {
						if e.Design == a.Name && e.Metric == m.Name {
							vs = estimate(e)
						}
					}
					p(" %s | %s |", med, vs)
				}
				p("\n")
			}
		}
		if slices.ContainsFunc(r.Groups, func(g Group) bool { return g.Wakeup != nil }) {
			p("\nWhat a wake-up cost, read from the A/A pair: the twin runs the baseline's code on the same calls, so round by round its CPU per call differs from the baseline's only by how its work was split and by each process's own luck. The twin's CPU per call less the baseline's, fitted by least squares on its wake-ups per call less the baseline's: the slope is the server CPU one wake-up cost here, the share is how much of the pair's spread in CPU per call the wake-ups account for, a part of the A/A floor that a machine whose context switches cost less would not carry.\n\n")
			p("| group | rounds | server CPU a wake-up cost | share of the A/A pair's spread in CPU per call |\n| --- | --- | --- | --- |\n")
			for _, g := range r.Groups {
				if w := g.Wakeup; w != nil {
					p("| %s | %d | %+.1f µs [%+.1f, %+.1f] | %.0f%% |\n", g.Name, w.N, w.PerWakeup*1e6, w.Lo*1e6, w.Hi*1e6, 100*w.R2)
				}
			}
		}
	}
	p("\n## Rounds\n\n")
	p("A round is dropped for every arm when steal or foreign CPU on either CPU set passed the gate's limit; an arm's figure in a kept round is left out when its server failed, or used less than %s of its quota while the drivers' CPUs were saturated (its driver set the pace).\n\n", paired.PctAbs(r.Options.MinUtil))
	p("| group | rounds | a round took (median) | dropped by the gate | arm: median share of its quota used (rounds left out) |\n| --- | --- | --- | --- | --- |\n")
	for _, g := range r.Groups {
		var arms []string
		for _, a := range g.Arms {
			arms = append(arms, fmt.Sprintf("%s %s (%d)", a.Name, paired.PctAbs(g.Util[a.Name]), g.Lost[a.Name]))
		}
		took := "—"
		if g.Pace > 0 {
			took = fmt.Sprintf("%.2f s", g.Pace.Seconds())
		}
		p("| %s | %d | %s | %d%s | %s |\n", g.Name, g.Rounds, took, len(g.Drops), dropReasons(g.Drops), strings.Join(arms, "; "))
	}
	if len(h.Setup) > 0 {
		p("\n## Setup\n\n")
		for _, s := range h.Setup {
			p("- %s\n", s)
		}
	}
	for _, n := range h.Notes {
		p("\n%s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (r Result) group(name string) Group {
	for _, g := range r.Groups {
		if g.Name == name {
			return g
		}
	}
	return Group{}
}

func effect(e paired.Robust) string {
	if e.N < 3 {
		return fmt.Sprintf("— (n=%d)", e.N)
	}
	return fmt.Sprintf("%s [%s, %s]", paired.Pct(e.Ratio-1), paired.Pct(e.Lo-1), paired.Pct(e.Hi-1))
}

func estimate(e Estimate) string { return effect(e.Robust) }

func halfWidth(f float64) string {
	if math.IsNaN(f) {
		return "—"
	}
	return "±" + paired.PctAbs(f)
}

func cmpOr(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// dropReasons summarises the gate's reasons by kind.
func dropReasons(drops []string) string {
	if len(drops) == 0 {
		return ""
	}
	count := map[string]int{}
	var kinds []string
	for _, d := range drops {
		k, _, _ := strings.Cut(d, " > ")
		k = strings.TrimRightFunc(k, func(r rune) bool { return r == '%' || r == '.' || r >= '0' && r <= '9' || r == ' ' })
		if count[k] == 0 {
			kinds = append(kinds, k)
		}
		count[k]++
	}
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, count[k]))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// anatomyFigure prints a median of the anatomy: per call to two decimals,
// a rate per second to the unit.
func anatomyFigure(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// onMetrics says which metrics are judged: "on calls/s and on server CPU
// per call".
func onMetrics(ms []Metric) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = "on " + m.Says
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// DecideClause is what a comparison not shown would need: about how many
// rounds in all would decide it if its estimate and its spread held
// (paired.Robust.Decidable), or nothing for one decided.
func DecideClause(p paired.Primary) string {
	if p.ToDecide == 0 {
		return ""
	}
	return fmt.Sprintf(", and about %d rounds in all would decide it were its estimate and spread to hold", p.ToDecide)
}

// Undecided is the sentence for the comparisons not shown: how many, and
// the rounds each group would add to decide its own were their estimates
// and spreads to hold, with the time at the run's pace; "" when every
// comparison was decided.
func (r Result) Undecided() string {
	n, more := r.RoundsToDecide()
	if n == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**Not shown: %d of %d.**", n, len(r.Primaries))
	total := 0
	var parts []string
	for _, g := range r.Groups {
		if m := more[g.Name]; m > 0 {
			parts = append(parts, fmt.Sprintf("%s about %d more", g.Name, m))
			total += m
		}
	}
	if total == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, " Were their estimates and spreads to hold, the rounds that would decide them: %s; %d in all", strings.Join(parts, ", "), total)
	if r.Pace > 0 {
		fmt.Fprintf(&b, ", %s at this run's pace of %.1f s a round", minutes(time.Duration(total)*r.Pace), r.Pace.Seconds())
	}
	b.WriteString(" (a plan's figure: estimates move as rounds are added).")
	return b.String()
}

// minutes renders a duration as about so many whole minutes.
func minutes(d time.Duration) string {
	m := int(math.Round(d.Minutes()))
	if m <= 1 {
		return "about a minute"
	}
	return fmt.Sprintf("about %d minutes", m)
}

// levelPct is an interval's level as a percentage: 95%, 99%, 99.5%.
func levelPct(level float64) string {
	return fmt.Sprintf("%.4g%%", 100*level)
}
