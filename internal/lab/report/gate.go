package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/locklab/locklab/internal/lab/record"
)

// gateView is what the validity gate made of a comparison's runs: which
// count, which were spoiled, and how many blocks each cell kept.
type gateView struct {
	rule *record.Gate
	// cellBlocks counts the cells of every block the plan ran; rerun those
	// with more than one attempt; dropped those with no clean attempt.
	cellBlocks, rerun, dropped int
	// spoiled are the runs the gate spoiled, each with why.
	spoiled []spoiledRun
	// clean counts each report cell's blocks with a clean attempt; planned
	// its blocks in all.
	clean, planned map[Cell]int
	order          []Cell
	// runs are every run the gate saw, for the machine's summary.
	runs []*record.Run
}

type spoiledRun struct {
	run *record.Run
	why string
}

// ForeignSpread is the median and the most of the foreign CPU share of
// the runs whose CPU sets were read (record.Derived's Foreign); ok is false
// where none was.
func ForeignSpread(runs []*record.Run) (median, most float64, ok bool) {
	var s []float64
	for _, r := range runs {
		if r.ServerSet.Sampled() || r.DriverSet.Sampled() {
			s = append(s, r.Derived.Foreign)
		}
	}
	if len(s) == 0 {
		return 0, 0, false
	}
	slices.Sort(s)
	return s[len(s)/2], s[len(s)-1], true
}

// attemptOf counts a run's attempt from 1.
func attemptOf(r *record.Run) int { return max(r.Attempt, 1) }

// applyGate keeps, for every cell of every block, the runs of its last
// clean attempt under meta's gate, and drops the cell where no attempt
// was clean: the analysis sees clean blocks only, as the rule fixed before
// the run says. Runs from before there was a gate are all kept.
func applyGate(meta record.Meta, runs []*record.Run) ([]*record.Run, gateView) {
	v := gateView{rule: meta.Gate, clean: map[Cell]int{}, planned: map[Cell]int{}, runs: runs}
	type attempts map[int][]*record.Run
	byCell := map[string]attempts{}
	var order []string
	for _, r := range runs {
		k := r.Cell()
		if byCell[k] == nil {
			byCell[k] = attempts{}
			order = append(order, k)
		}
		byCell[k][attemptOf(r)] = append(byCell[k][attemptOf(r)], r)
		if why := meta.Gate.Spoils(r); why != "" {
			v.spoiled = append(v.spoiled, spoiledRun{r, why})
		}
	}
	var kept []*record.Run
	for _, k := range order {
		as := byCell[k]
		var tries []int
		for a := range as {
			tries = append(tries, a)
		}
		slices.Sort(tries)
		// A block's cell holds one report cell per value of the arm
		// factors (a Go runtime each): the gate judges and reruns them
		// together, and each counts the block.
		var cs []Cell
		for _, r := range as[tries[0]] {
			if c := (Cell{Section{r.Workload, r.Driver, r.Factors}, r.Level}); !slices.Contains(cs, c) {
				cs = append(cs, c)
			}
		}
		v.cellBlocks++
		for _, c := range cs {
			if v.planned[c] == 0 {
				v.order = append(v.order, c)
			}
			v.planned[c]++
		}
		if len(tries) > 1 {
			v.rerun++
		}
		chosen := 0
		for _, a := range tries {
			if !slices.ContainsFunc(as[a], func(r *record.Run) bool { return meta.Gate.Spoils(r) != "" }) {
				chosen = a
			}
		}
		if chosen == 0 {
			v.dropped++
			continue
		}
		for _, c := range cs {
			v.clean[c]++
		}
		kept = append(kept, as[chosen]...)
	}
	slices.SortStableFunc(kept, func(a, b *record.Run) int { return a.Index - b.Index })
	return kept, v
}

// cells are the report cells the gate saw, in the order of their first
// run.
func (v gateView) cells() []Cell { return v.order }

// withheld says why a cell's verdicts are withheld — too few of its
// blocks were clean for the analysis — or "".
func (v gateView) withheld(c Cell, need int) string {
	// A plan of fewer blocks than that is too small, not too noisy: its
	// verdicts say "too few blocks" themselves.
	if v.rule == nil || v.clean[c] >= need || v.clean[c] == v.planned[c] {
		return ""
	}
	return fmt.Sprintf("too noisy: %d of %d blocks clean (the analysis needs %d)", v.clean[c], v.planned[c], need)
}

// machine is the report's first word on the machine: how busy it was
// before the first block and during the runs, and what the gate did.
func (v gateView) machine() string {
	var parts []string
	g := v.rule
	if g != nil && g.QuietSeconds > 0 {
		parts = append(parts, fmt.Sprintf("before the first block something else kept the server's CPUs %s and the driver's %s busy (over %gs)",
			UnitShare.Format(g.QuietServer), UnitShare.Format(g.QuietDriver), g.QuietSeconds))
	}
	if median, most, ok := ForeignSpread(v.runs); ok {
		parts = append(parts, fmt.Sprintf("during the runs it took a median %s of a run's CPUs (at most %s; a quiet run reads a few percent either way, from the kernel's 10 ms ticks)",
			UnitShare.Format(median), UnitShare.Format(most)))
	}
	text := "The machine: " + strings.Join(parts, "; ") + "."
	if len(parts) == 0 {
		text = "The machine: no CPU set was read, so how busy it was is not known."
	}
	if g == nil {
		return text + " These runs were made before the validity gate: none was judged spoiled or rerun."
	}
	text += fmt.Sprintf(" The rule, fixed before the first run: a run whose CPUs something else took more than %s of (-max-foreign) spoils its block's cell, "+
		"which runs again up to %d more times (-reruns); the analysis uses clean cells only. ", UnitShare.Format(g.MaxForeign), g.Reruns)
	text += fmt.Sprintf("Of %d block cells, %d were rerun and %d dropped (%d spoiled runs).", v.cellBlocks, v.rerun, v.dropped, len(v.spoiled))
	if g.Added > 0 {
		text += fmt.Sprintf(" -precision %s added %d blocks after the first %d, in one look.", UnitShare.Format(g.Precision), g.Added, v.firstStage())
	}
	return text
}

func (v gateView) firstStage() int {
	if v.rule == nil {
		return 0
	}
	n := 0
	for _, p := range v.planned {
		n = max(n, p)
	}
	return n - v.rule.Added
}

// spoiledBlocks are the spoiled runs: in report.html each run with why;
// in report.md, which a repository browser shows and which must stay
// short, a count per group and design, and where the runs are.
func (rep *Report) spoiledBlocks(detail bool) []block {
	v := rep.gate
	if len(v.spoiled) == 0 {
		return nil
	}
	if detail {
		t := table{header: []string{"run", "block", "attempt", "why"}}
		for _, s := range v.spoiled {
			t.rows = append(t.rows, []string{s.run.ID, strconv.Itoa(s.run.Rep), strconv.Itoa(attemptOf(s.run)), s.why})
		}
		return []block{heading{2, "Spoiled runs"}, para("Runs the validity gate spoiled: their cells ran again, and the analysis left these out. " +
			"Their records are kept in `runs/` (`runs.tar.gz` once packed)."), t}
	}
	type key struct {
		cell Cell
		arm  string
	}
	counts := map[key]int{}
	var order []key
	for _, s := range v.spoiled {
		r := s.run
		k := key{Cell{Section{r.Workload, r.Driver, r.Factors}, r.Level}, r.Arm()}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	t := table{header: []string{"group", "design", "spoiled runs"}}
	for _, k := range order {
		t.rows = append(t.rows, []string{rep.cellName(k.cell), k.arm, strconv.Itoa(counts[k])})
	}
	return []block{heading{2, "Spoiled runs"}, para(fmt.Sprintf("The validity gate spoiled %d runs: their cells ran again, and the analysis left them out. "+
		"Their count by group and design is below; each run, with why, is listed in `report.html` (`go run ./cmd/compare -rerender DIR` "+
		"writes it), and its record is kept in `runs/` (`runs.tar.gz` once packed), marked spoiled in the list of every run.", len(v.spoiled))), t}
}
