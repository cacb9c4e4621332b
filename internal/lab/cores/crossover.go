package cores

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/locklab/locklab/internal/lab/mva"
	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/report"
	"github.com/locklab/locklab/store"
)

// ladderStep is one work level of a crossover ladder: the paired ratio of
// an owner design's calls/s to the baseline's over the blocks.
type ladderStep struct {
	work float64
	e    paired.Effect
	ok   bool
}

// sign is +1 where the owner design is ahead (the interval above 1), −1
// where it is behind, 0 where the interval holds no difference.
func (s ladderStep) sign() int {
	switch {
	case !s.ok || s.e.N < 2:
		return 0
	case s.e.Lo > 1:
		return 1
	case s.e.Hi < 1:
		return -1
	}
	return 0
}

// measuredCrossover is the work bracket where the paired ratio changes
// sign — the last level where one design is surely ahead and the first
// where the other surely is — and an estimate inside it, where the
// geometric mean ratio's log crosses zero between neighbouring levels
// (linear in the work). ok false: the ladder shows no change of sign.
func measuredCrossover(steps []ladderStep) (lo, est, hi float64, ok bool) {
	last := -1 // index of the last level with a definite sign
	for i, s := range steps {
		sg := s.sign()
		if sg == 0 {
			continue
		}
		if last >= 0 && steps[last].sign() != sg {
			lo, hi = steps[last].work, s.work
			est = (lo + hi) / 2
			for j := last; j < i; j++ {
				a, b := math.Log(steps[j].e.GeoMean), math.Log(steps[j+1].e.GeoMean)
				if steps[j].ok && steps[j+1].ok && math.Signbit(a) != math.Signbit(b) {
					est = steps[j].work + (steps[j+1].work-steps[j].work)*a/(a-b)
					break
				}
			}
			return lo, est, hi, true
		}
		last = i
	}
	return 0, 0, 0, false
}

// crossoverBlocks: at every CPU count the models were not fitted on, the
// work per command at which each owner design overtakes the baseline
// (mutex), predicted by each block's models and measured on the plan's
// ladder of work levels.
func (rep view) crossoverBlocks(f *modelFamily, models map[string]map[int]mva.Model, blocks []int) []report.Piece {
	base := models[crossoverBaseline]
	if base == nil {
		return nil
	}
	fit, _ := fitCells(f.cells[crossoverBaseline])
	callers := fit[0].callers
	var counts []int
	for _, c := range f.cells[crossoverBaseline] {
		if c.cpus != fit[0].cpus && !slices.Contains(counts, c.cpus) {
			counts = append(counts, c.cpus)
		}
	}
	slices.Sort(counts)
	var rows [][]string
	for _, n := range counts {
		for _, mode := range rep.Meta.Modes {
			d, ok := store.LookupDesign(mode)
			if !ok || !d.Owner || models[mode] == nil {
				continue
			}
			if row := rep.crossoverRow(f, mode, n, callers, models[mode], base, blocks); row != nil {
				rows = append(rows, row)
			}
		}
	}
	if len(rows) == 0 {
		return nil
	}
	return []report.Piece{
		report.Para(fmt.Sprintf("Crossover: the work per command at which each owner design overtakes %s. *Predicted*: by each block's models, "+
			"fitted on runs that do not include these CPU counts, where the two predicted calls/s meet within the ladder's range "+
			"(median over the blocks, with its interval). *Measured*: the paired calls/s ratio of the owner design to %s at each work "+
			"level of the ladder (geometric mean over the blocks, 95%% interval), and the bracket of work levels where it changes sign: "+
			"the last level where one design is ahead beyond doubt and the first where the other is; the estimate inside it is where "+
			"the mean ratio crosses zero, linear between its neighbours.", crossoverBaseline, crossoverBaseline)),
		report.Table([]string{"owner design", "at", "predicted crossover", "ratio to " + crossoverBaseline + " at each work level", "measured crossover", "prediction in the bracket"}, rows),
	}
}

func (rep view) crossoverRow(f *modelFamily, mode string, n, callers int, ms, base map[int]mva.Model, blocks []int) []string {
	at := func(m string) map[float64]*report.Group {
		out := map[float64]*report.Group{}
		for _, c := range f.cells[m] {
			if c.cpus == n && c.callers == callers {
				out[c.work] = c.g
			}
		}
		return out
	}
	own, ref := at(mode), at(crossoverBaseline)
	var works []float64
	for w := range own {
		if ref[w] != nil {
			works = append(works, w)
		}
	}
	if len(works) < 2 {
		return nil
	}
	slices.Sort(works)
	var steps []ladderStep
	var cells []string
	for _, w := range works {
		var t, b []float64
		for _, blk := range blocks {
			ro, rb := runOf(own[w], blk), runOf(ref[w], blk)
			if ro != nil && rb != nil {
				t, b = append(t, ro.Derived.CallsPerSec), append(b, rb.Derived.CallsPerSec)
			}
		}
		st := ladderStep{work: w}
		if rs, err := paired.Ratios(t, b); err == nil {
			if e, err := paired.Estimate(rs); err == nil {
				st.e, st.ok = e, true
			}
		}
		steps = append(steps, st)
		cell := workName(w) + ": —"
		if st.ok {
			cell = workName(w) + ": " + fmtEffect(st.e)
		}
		cells = append(cells, cell)
	}
	var pred []float64
	used := 0
	for _, blk := range blocks {
		mo, okO := ms[blk]
		mb, okB := base[blk]
		if !okO || !okB {
			continue
		}
		used++
		if w, found, err := mva.Crossover(mo, mb, n, callers, works[0], works[len(works)-1]); err == nil && found {
			pred = append(pred, w)
		}
	}
	predicted := fmt.Sprintf("none between %s and %s", workName(works[0]), workName(works[len(works)-1]))
	if len(pred) > 0 {
		predicted = blockMedian(pred, crossName)
		if len(pred) < used {
			predicted += fmt.Sprintf(" (in %d of %d blocks; none in the others)", len(pred), used)
		}
	}
	measured, inside := "no change of sign on the ladder", "—"
	if lo, est, hi, ok := measuredCrossover(steps); ok {
		measured = fmt.Sprintf("%s, between %s and %s", crossName(est), workName(lo), workName(hi))
		if i := slices.IndexFunc(steps, func(s ladderStep) bool { return s.work == lo }); steps[i].sign() > 0 {
			measured += " (it falls behind there)"
		}
		if len(pred) > 0 {
			med := report.StatOf(pred, nil).Median
			inside = map[bool]string{true: "yes", false: "no"}[lo <= med && med <= hi]
		}
	}
	return []string{mode, cpusName(n), predicted, strings.Join(cells, "; "), measured, inside}
}
