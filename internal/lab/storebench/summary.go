package storebench

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// standing is the designs that ran one row configuration, fastest median
// first, and how many of them the intervals cannot tell from the fastest.
type standing struct {
	keys []row // by median ns/op, ties in registry order
	// lead is the size of the leading group: the fastest, and every design
	// whose per-round ratio to it is not wholly above 1.
	lead int
}

func (d *Data) standing(op string, par int, work time.Duration, cpu int) standing {
	var st standing
	var centers []float64
	for _, name := range d.Designs {
		k := row{Design: name, Op: op, Par: par, Work: work, CPU: cpu}
		if s, ok := d.NsPerOp(k); ok {
			st.keys = append(st.keys, k)
			centers = append(centers, s.Summary.Center)
		}
	}
	idx := make([]int, len(st.keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch ca, cb := centers[a], centers[b]; {
		case ca < cb:
			return -1
		case ca > cb:
			return 1
		}
		return 0
	})
	sorted := make([]row, len(idx))
	for i, j := range idx {
		sorted[i] = st.keys[j]
	}
	st.keys = sorted
	if len(st.keys) == 0 {
		return st
	}
	// The group is every design not shown slower than the fastest; they
	// are moved up, in median order, ahead of the designs that are.
	var group, rest []row
	for i, k := range st.keys {
		if r, _ := d.ratioOf(k, st.keys[0]); i == 0 || r.order() <= 0 {
			group = append(group, k)
		} else {
			rest = append(rest, k)
		}
	}
	st.keys, st.lead = append(group, rest...), len(group)
	return st
}

// leading describes the leading group: the fastest's median and interval,
// and each other member's per-round ratio to it.
func (d *Data) leading(st standing) string {
	first := st.keys[0]
	s := first.Design + " " + d.interval(first)
	for _, k := range st.keys[1:st.lead] {
		r, _ := d.ratioOf(k, first)
		s += fmt.Sprintf("; %s %s", k.Design, r)
	}
	return s
}

// next is the fastest design the intervals put behind the leading group,
// as its ratio to the fastest; "" if every design is in the group.
func (d *Data) next(st standing) string {
	if st.lead == len(st.keys) {
		return ""
	}
	k := st.keys[st.lead]
	r, _ := d.ratioOf(k, st.keys[0])
	return fmt.Sprintf("%s %s", k.Design, r)
}

// axis is one factor along which the report looks for changes of ranking.
type axis struct {
	name string                 // in prose
	vals func(d *Data) []row    // one row per value, the other factors zero
	set  func(k row, v row) row // k with v's value of the factor
	fmt  func(v row) string     // the value, as in a benchmark name
	rest func(k row) string     // the other factors, as in a heading
}

// axes are the factors a ranking can change along, declared once.
var axes = []axis{
	{
		name: "parallelism",
		vals: func(d *Data) []row { return mapRows(d.Pars, func(p int) row { return row{Par: p} }) },
		set:  func(k, v row) row { k.Par = v.Par; return k },
		fmt:  func(v row) string { return fmt.Sprintf("par=%d", v.Par) },
		rest: func(k row) string { return fmt.Sprintf("-cpu %d, work=%v", k.CPU, k.Work) },
	},
	{
		name: "CPUs",
		vals: func(d *Data) []row { return mapRows(d.CPUs, func(c int) row { return row{CPU: c} }) },
		set:  func(k, v row) row { k.CPU = v.CPU; return k },
		fmt:  func(v row) string { return fmt.Sprintf("-cpu %d", v.CPU) },
		rest: func(k row) string { return fmt.Sprintf("par=%d, work=%v", k.Par, k.Work) },
	},
	{
		name: "critical section",
		vals: func(d *Data) []row { return mapRows(d.Works, func(w time.Duration) row { return row{Work: w} }) },
		set:  func(k, v row) row { k.Work = v.Work; return k },
		fmt:  func(v row) string { return fmt.Sprintf("work=%v", v.Work) },
		rest: func(k row) string { return fmt.Sprintf("-cpu %d, par=%d", k.CPU, k.Par) },
	},
}

func mapRows[T any](xs []T, f func(T) row) []row {
	out := make([]row, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// reversal is a pair of designs whose order, where the intervals decide
// it, flips along an axis with the other factors fixed.
type reversal struct {
	Axis  string
	Where string   // the fixed factors
	A, B  string   // A ahead somewhere, B ahead somewhere else
	Steps []string // the per-round ratio A/B at each value where both ran
}

// reversals finds, for op, every pair of designs whose separated order
// changes along an axis: A's whole interval below B's at one value and
// above it at another.
func (d *Data) reversals(op string) []reversal {
	var out []reversal
	for _, ax := range axes {
		vals := ax.vals(d)
		if len(vals) < 2 {
			continue
		}
		// Every combination of the other factors, walked once: the
		// rows of the op at the axis's first value stand for them.
		seen := map[row]bool{}
		for _, k := range d.opRows(op) {
			base := ax.set(k, vals[0])
			base.Design = ""
			if seen[base] {
				continue
			}
			seen[base] = true
			for i, a := range d.Designs {
				for _, b := range d.Designs[i+1:] {
					var steps []string
					aAhead, bAhead := false, false
					for _, v := range vals {
						ka, kb := ax.set(base, v), ax.set(base, v)
						ka.Design, kb.Design = a, b
						r, ok := d.ratioOf(ka, kb)
						if !ok {
							continue
						}
						switch r.order() {
						case -1:
							aAhead = true
						case 1:
							bAhead = true
						}
						steps = append(steps, fmt.Sprintf("%s %s", ax.fmt(v), r))
					}
					if aAhead && bAhead {
						out = append(out, reversal{Axis: ax.name, Where: ax.rest(base), A: a, B: b, Steps: steps})
					}
				}
			}
		}
	}
	return out
}

// opRows returns the op's row configurations with the design left out, in
// the report's order.
func (d *Data) opRows(op string) []row {
	var out []row
	for _, cpu := range d.CPUs {
		for _, par := range d.Pars {
			for _, w := range d.worksOf(op) {
				k := row{Op: op, Par: par, Work: w, CPU: cpu}
				for _, name := range d.Designs {
					if k.Design = name; d.rows[k] != nil {
						k.Design = ""
						out = append(out, k)
						break
					}
				}
			}
		}
	}
	return out
}

// String is one line of the report.
func (r reversal) String() string {
	return fmt.Sprintf("%s vs %s, with %s (%s): %s/%s per round %s", r.A, r.B, r.Axis, r.Where, r.A, r.B, strings.Join(r.Steps, ", "))
}
