package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/perf/benchmath"

	"github.com/locklab/locklab/store"
)

// Issue 10 item 6: the speed targets, judged at 64 callers per CPU with no
// critical-section work, at the highest -cpu the run has. The designs and
// ops the targets name are declared here once; TestTargetNamesExist checks
// the designs against the registry.
const (
	opIncrement = "Increment"
	opTransfer  = "TransferMoney"

	designMutex     = "mutex"
	designSharded   = "sharded"
	designCombining = "combining"

	targetPar  = 64
	targetWork = time.Duration(0)

	ownerIncrementMaxNs = 150.0
	ownerTransferMaxNs  = 250.0
	combiningMaxRatio   = 2.0
)

type verdict int

const (
	noData verdict = iota
	met
	notMet
)

func (v verdict) String() string {
	switch v {
	case met:
		return "met"
	case notMet:
		return "not met"
	}
	return "no data"
}

// target is one item-6 target and what the data says about it.
type target struct {
	Name    string
	Verdict verdict
	Detail  string // the measured figures and by how much
}

// targetRow is where the speed targets are judged.
func (d *Data) targetRow(design, op string) row {
	return row{Design: design, Op: op, Par: targetPar, Work: targetWork, CPU: d.MaxCPU()}
}

// ownerOrCombining is the set the first target is about: every design
// whose registry row is owner-style, and combining.
func ownerOrCombining() []string {
	var out []string
	for _, ds := range store.Designs() {
		if ds.Owner || ds.Name == designCombining {
			out = append(out, ds.Name)
		}
	}
	return out
}

func targets(d *Data) []target {
	return []target{
		fastestUnder(d, opIncrement, ownerIncrementMaxNs),
		fastestUnder(d, opTransfer, ownerTransferMaxNs),
		combiningVsMutex(d),
		shardedVsMutex(d),
		zeroAllocs(d),
	}
}

// fastestUnder: the fastest owner-style or combining design is at most
// limit ns/op on op.
func fastestUnder(d *Data, op string, limit float64) target {
	t := target{Name: fmt.Sprintf("fastest owner-style or combining design ≤ %s ns/op on %s", fmtNs(limit), op)}
	best, bestStat := "", stat{}
	var others []string
	for _, name := range ownerOrCombining() {
		s, ok := d.NsPerOp(d.targetRow(name, op))
		if !ok {
			continue
		}
		others = append(others, fmt.Sprintf("%s %s", name, fmtNs(s.Summary.Center)))
		if best == "" || s.Summary.Center < bestStat.Summary.Center {
			best, bestStat = name, s
		}
	}
	if best == "" {
		t.Detail = fmt.Sprintf("no owner-style or combining design ran %s at %s", op, d.where())
		return t
	}
	v := bestStat.Summary.Center
	t.Verdict = met
	if v > limit {
		t.Verdict = notMet
	}
	t.Detail = fmt.Sprintf("%s: %s ns/op, %s (all: %s)", best, fmtStat(bestStat), byHowMuch(v, limit, "ns/op"), strings.Join(others, ", "))
	return t
}

// combiningVsMutex: combining within combiningMaxRatio× of mutex on Increment.
func combiningVsMutex(d *Data) target {
	t := target{Name: fmt.Sprintf("%s ≤ %g× %s on %s", designCombining, combiningMaxRatio, designMutex, opIncrement)}
	c, okC := d.NsPerOp(d.targetRow(designCombining, opIncrement))
	m, okM := d.NsPerOp(d.targetRow(designMutex, opIncrement))
	if !okC || !okM {
		t.Detail = fmt.Sprintf("needs both %s and %s on %s at %s", designCombining, designMutex, opIncrement, d.where())
		return t
	}
	ratio := c.Summary.Center / m.Summary.Center
	t.Verdict = met
	if ratio > combiningMaxRatio {
		t.Verdict = notMet
	}
	t.Detail = fmt.Sprintf("%s %s ns/op, %s %s ns/op: %.2f×, %s", designCombining, fmtStat(c), designMutex, fmtStat(m),
		ratio, byHowMuch(ratio, combiningMaxRatio, "×"))
	return t
}

// shardedVsMutex: sharded no slower than mutex on TransferMoney, judged on
// the medians, with the Mann-Whitney U test saying whether the difference
// is more than noise.
func shardedVsMutex(d *Data) target {
	t := target{Name: fmt.Sprintf("%s ≤ %s on %s", designSharded, designMutex, opTransfer)}
	s, okS := d.NsPerOp(d.targetRow(designSharded, opTransfer))
	m, okM := d.NsPerOp(d.targetRow(designMutex, opTransfer))
	if !okS || !okM {
		t.Detail = fmt.Sprintf("needs both %s and %s on %s at %s", designSharded, designMutex, opTransfer, d.where())
		return t
	}
	t.Verdict = met
	if s.Summary.Center > m.Summary.Center {
		t.Verdict = notMet
	}
	t.Detail = fmt.Sprintf("%s %s ns/op, %s %s ns/op: %s; %s", designSharded, fmtStat(s), designMutex, fmtStat(m),
		versus(s.Summary.Center, m.Summary.Center, designSharded, designMutex), significance(s, m))
	return t
}

// significance is the Mann-Whitney U test of two rows, in words.
func significance(a, b stat) string {
	c := benchmath.AssumeNothing.Compare(a.Sample, b.Sample)
	verdict := "significant"
	if c.P > c.Alpha {
		verdict = "not significant"
	}
	return fmt.Sprintf("Mann-Whitney U p=%.3f (n=%d+%d), %s at α=%g", c.P, c.N1, c.N2, verdict, c.Alpha)
}

// byHowMuch says how far v is under or over limit.
func byHowMuch(v, limit float64, unit string) string {
	diff := v - limit
	pct := 100 * diff / limit
	num := func(x float64) string {
		if unit == "×" {
			return fmt.Sprintf("%.2f×", x)
		}
		return fmtNs(x) + " " + unit
	}
	if diff <= 0 {
		return fmt.Sprintf("%s under the limit of %s (%.0f%%)", num(-diff), num(limit), pct)
	}
	return fmt.Sprintf("%s over the limit of %s (+%.0f%%)", num(diff), num(limit), pct)
}

// versus says how much faster or slower design a (median va) is than b.
func versus(va, vb float64, a, b string) string {
	diff := va - vb
	pct := 100 * diff / vb
	if diff <= 0 {
		return fmt.Sprintf("%s is %s ns/op (%.0f%%) faster than %s", a, fmtNs(-diff), -pct, b)
	}
	return fmt.Sprintf("%s is %s ns/op (+%.0f%%) slower than %s", a, fmtNs(diff), pct, b)
}

// allocOffender is a design × op that allocated in some row.
type allocOffender struct {
	Design, Op string
	Max        float64 // the most allocs/op of any run
	Rows       []row   // the rows with a run above 0
}

// allocOffenders returns every design × op with a run above 0 allocs/op,
// and whether the input has allocs/op at all (-benchmem).
func allocOffenders(d *Data) (offenders []allocOffender, measured bool) {
	for _, op := range d.Ops {
		for _, design := range d.Designs {
			var o allocOffender
			for _, k := range d.rowsOf(design, op) {
				a := d.Allocs(k)
				if len(a) > 0 {
					measured = true
				}
				if m := slices.Max(append([]float64{0}, a...)); m > 0 {
					o.Rows = append(o.Rows, k)
					o.Max = max(o.Max, m)
				}
			}
			if len(o.Rows) > 0 {
				o.Design, o.Op = design, op
				offenders = append(offenders, o)
			}
		}
	}
	return offenders, measured
}

func zeroAllocs(d *Data) target {
	t := target{Name: "0 allocs/op for every design and op"}
	offenders, measured := allocOffenders(d)
	switch {
	case !measured:
		t.Detail = "the input has no allocs/op (run go test with -benchmem)"
	case len(offenders) == 0:
		t.Verdict = met
		t.Detail = "every run of every design and op: 0 allocs/op"
	default:
		t.Verdict = notMet
		// An op that allocates in every design that serves it allocates in
		// the machine (kv copies values in and out), not in a design.
		byOp := map[string]int{}
		for _, o := range offenders {
			byOp[o.Op]++
		}
		var everywhere []string
		for _, op := range d.Ops {
			n := 0
			for _, design := range d.Designs {
				if len(d.rowsOf(design, op)) > 0 {
					n++
				}
			}
			if n > 0 && byOp[op] == n {
				everywhere = append(everywhere, op)
			}
		}
		var names []string
		for _, o := range offenders {
			names = append(names, fmt.Sprintf("%s %s (up to %g)", o.Design, o.Op, o.Max))
		}
		// The Allocations section lists them all; the table cell stays short.
		const shown = 6
		if len(names) > shown {
			names = append(names[:shown], fmt.Sprintf("%d more", len(names)-shown))
		}
		t.Detail = fmt.Sprintf("%d design × op pairs allocate: %s; see Allocations", len(offenders), strings.Join(names, ", "))
		if len(everywhere) > 0 {
			t.Detail += fmt.Sprintf(" (%s allocate in every design that serves them: the machine's own copies of values, not a design's)", strings.Join(everywhere, ", "))
		}
	}
	return t
}

// where names the target row's coordinates.
func (d *Data) where() string {
	return fmt.Sprintf("par=%d, work=%v, -cpu %d", targetPar, targetWork, d.MaxCPU())
}
