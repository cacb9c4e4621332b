package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/perf/benchmath"
)

// ranking is the designs that ran one row configuration, fastest first.
type ranking struct {
	names []string
	stats []stat
}

func (d *Data) rank(op string, par int, work time.Duration, cpu int) ranking {
	var r ranking
	for _, name := range d.Designs {
		if s, ok := d.NsPerOp(row{Design: name, Op: op, Par: par, Work: work, CPU: cpu}); ok {
			r.names = append(r.names, name)
			r.stats = append(r.stats, s)
		}
	}
	idx := make([]int, len(r.names))
	for i := range idx {
		idx[i] = i
	}
	// Stable: equal medians keep registry order.
	slices.SortStableFunc(idx, func(a, b int) int {
		ca, cb := r.stats[a].Summary.Center, r.stats[b].Summary.Center
		switch {
		case ca < cb:
			return -1
		case ca > cb:
			return 1
		}
		return 0
	})
	var out ranking
	for _, i := range idx {
		out.names = append(out.names, r.names[i])
		out.stats = append(out.stats, r.stats[i])
	}
	return out
}

// winner describes the fastest design of a ranking and its lead over the
// next one, or "" if nothing ran.
func (r ranking) winner() string {
	if len(r.names) == 0 {
		return ""
	}
	s := fmt.Sprintf("%s (%s ns/op", r.names[0], fmtNs(r.stats[0].Summary.Center))
	if len(r.names) > 1 {
		c := benchmath.AssumeNothing.Compare(r.stats[0].Sample, r.stats[1].Sample)
		ratio := r.stats[1].Summary.Center / r.stats[0].Summary.Center
		if c.P > c.Alpha {
			s += fmt.Sprintf("; not distinguishable from %s, %.2f×, p=%.2f", r.names[1], ratio, c.P)
		} else {
			s += fmt.Sprintf("; %s next, %.2f× slower, p=%.3f", r.names[1], ratio, c.P)
		}
	}
	return s + ")"
}

// opSummary is the "which design when" of one op.
type opSummary struct {
	Op     string
	ByPar  string // the fastest at each parallelism, with the shortest critical section
	ByWork string // the fastest at each critical-section length, at the highest parallelism; "" if one length
}

// whichDesignWhen ranks the designs of every op at the highest -cpu: at
// each parallelism with the shortest critical section, and at each
// critical-section length with the highest parallelism.
func whichDesignWhen(d *Data) []opSummary {
	cpu := d.MaxCPU()
	var out []opSummary
	for _, op := range d.Ops {
		works := d.worksOf(op)
		var byPar, parWinners []string
		for _, par := range d.Pars {
			if r := d.rank(op, par, works[0], cpu); len(r.names) > 0 {
				parWinners = append(parWinners, r.names[0])
				byPar = append(byPar, fmt.Sprintf("par=%d: %s", par, r.winner()))
			}
		}
		if len(byPar) == 0 {
			continue
		}
		sum := opSummary{Op: op}
		sum.ByPar = fmt.Sprintf("work=%v, by callers per CPU: ", works[0])
		if len(parWinners) > 1 && len(slices.Compact(slices.Clone(parWinners))) == 1 {
			sum.ByPar += fmt.Sprintf("%s is fastest at every parallelism — ", parWinners[0])
		}
		sum.ByPar += strings.Join(byPar, "; ") + "."
		if len(works) > 1 {
			top := d.Pars[len(d.Pars)-1]
			var byWork, winners []string
			for _, w := range works {
				if r := d.rank(op, top, w, cpu); len(r.names) > 0 {
					winners = append(winners, r.names[0])
					byWork = append(byWork, fmt.Sprintf("work=%v: %s", w, r.winner()))
				}
			}
			sum.ByWork = fmt.Sprintf("par=%d, by critical section: %s.", top, strings.Join(byWork, "; "))
			if len(slices.Compact(slices.Clone(winners))) > 1 {
				sum.ByWork += fmt.Sprintf(" The fastest median changes with the critical section: %s.", strings.Join(slices.Compact(winners), " → "))
			} else if len(winners) > 1 {
				sum.ByWork += fmt.Sprintf(" %s leads at every length.", winners[0])
			}
		}
		out = append(out, sum)
	}
	return out
}
