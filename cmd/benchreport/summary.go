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

// whichDesignWhen writes, per op, the fastest design at each parallelism
// (with the shortest critical section) and at each critical-section length
// (at the highest parallelism), all at the highest -cpu.
func whichDesignWhen(d *Data) []string {
	cpu := d.MaxCPU()
	var out []string
	for _, op := range d.Ops {
		works := d.worksOf(op)
		var byPar []string
		same := true
		var first string
		for _, par := range d.Pars {
			r := d.rank(op, par, works[0], cpu)
			if len(r.names) == 0 {
				continue
			}
			if first == "" {
				first = r.names[0]
			}
			same = same && r.names[0] == first
			byPar = append(byPar, fmt.Sprintf("at par=%d %s", par, r.winner()))
		}
		if len(byPar) == 0 {
			continue
		}
		var s strings.Builder
		fmt.Fprintf(&s, "**%s**: ", op)
		if same && len(byPar) > 1 {
			fmt.Fprintf(&s, "%s is fastest at every parallelism with work=%v — ", first, works[0])
		} else {
			fmt.Fprintf(&s, "with work=%v the fastest is, ", works[0])
		}
		s.WriteString(strings.Join(byPar, "; ") + ".")
		if len(works) > 1 {
			top := d.Pars[len(d.Pars)-1]
			var byWork []string
			var winners []string
			for _, w := range works {
				r := d.rank(op, top, w, cpu)
				if len(r.names) == 0 {
					continue
				}
				winners = append(winners, r.names[0])
				byWork = append(byWork, fmt.Sprintf("with work=%v %s", w, r.winner()))
			}
			fmt.Fprintf(&s, " At par=%d the fastest is, %s.", top, strings.Join(byWork, "; "))
			if len(slices.Compact(slices.Clone(winners))) > 1 {
				fmt.Fprintf(&s, " The lead changes hands as the critical section grows (%s).", strings.Join(slices.Compact(winners), " → "))
			}
		}
		out = append(out, s.String())
	}
	return out
}
