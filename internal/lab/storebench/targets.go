package storebench

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/store"
)

// The speed targets the store's designs were built to: a hand-off to an
// owner goroutine should cost little more than a lock, flat combining
// should stay within 2× of a plain mutex on a hot counter, and striping
// should never lose to one lock on transfers. They are judged at 64
// callers per CPU with no critical-section work (the contended case the
// designs exist for), at every -cpu the run has. The designs and ops the
// targets name are declared here once; TestTargetNamesExist checks the
// designs against the registry.
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
	shardedMaxRatio     = 1.0
)

// verdict is what the intervals say about a target: met only when the
// whole 95% interval is within it, not met when the whole interval is
// outside, undecided when the interval straddles the limit.
type verdict int

const (
	noData verdict = iota
	met
	notMet
	undecided
)

func (v verdict) String() string {
	switch v {
	case met:
		return "met"
	case notMet:
		return "not met"
	case undecided:
		return "undecided"
	}
	return "no data"
}

// withinLimit judges the interval [lo, hi] against "at most limit".
func withinLimit(lo, hi, limit float64) verdict {
	switch {
	case hi <= limit:
		return met
	case lo > limit:
		return notMet
	}
	return undecided
}

// target is one target at one -cpu and what the data says about it.
type target struct {
	Name    string
	CPU     int // 0: judged over every row at once
	Verdict verdict
	Detail  string // the measured figures and their intervals
}

// targetRow is where the speed targets are judged.
func targetRow(design, op string, cpu int) row {
	return row{Design: design, Op: op, Par: targetPar, Work: targetWork, CPU: cpu}
}

// ownerOrCombining is the set the first targets are about: every design
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

// speedTargets are the targets judged at each -cpu, in the report's order.
var speedTargets = []func(d *Data, cpu int) target{
	func(d *Data, cpu int) target { return fastestUnder(d, opIncrement, ownerIncrementMaxNs, cpu) },
	func(d *Data, cpu int) target { return fastestUnder(d, opTransfer, ownerTransferMaxNs, cpu) },
	func(d *Data, cpu int) target {
		return ratioAtMost(d, designCombining, designMutex, opIncrement, combiningMaxRatio, cpu)
	},
	func(d *Data, cpu int) target {
		return ratioAtMost(d, designSharded, designMutex, opTransfer, shardedMaxRatio, cpu)
	},
}

func targets(d *Data) []target {
	var out []target
	for _, judge := range speedTargets {
		for _, cpu := range d.CPUs {
			out = append(out, judge(d, cpu))
		}
	}
	return append(out, zeroAllocs(d))
}

// fastestUnder: some owner-style or combining design is at most limit
// ns/op on op. Met if one design's whole interval is under the limit, not
// met if every design's whole interval is over it.
func fastestUnder(d *Data, op string, limit float64, cpu int) target {
	t := target{Name: fmt.Sprintf("fastest owner-style or combining design ≤ %s ns/op on %s", fmtNs(limit), op), CPU: cpu}
	var all []string
	ran, over := 0, 0
	best, bestStat := "", stat{}
	for _, name := range ownerOrCombining() {
		k := targetRow(name, op, cpu)
		s, ok := d.NsPerOp(k)
		if !ok {
			continue
		}
		ran++
		all = append(all, name+" "+d.interval(k))
		switch withinLimit(s.Summary.Lo, s.Summary.Hi, limit) {
		case met:
			if best == "" || s.Summary.Hi < bestStat.Summary.Hi {
				best, bestStat = name, s
			}
		case notMet:
			over++
		}
	}
	switch {
	case ran == 0:
		t.Detail = fmt.Sprintf("no owner-style or combining design ran %s at %s", op, where(cpu))
		return t
	case best != "":
		t.Verdict = met
		t.Detail = fmt.Sprintf("%s's whole interval is under %s ns/op. ", best, fmtNs(limit))
	case over == ran:
		t.Verdict = notMet
		t.Detail = fmt.Sprintf("every design's whole interval is over %s ns/op. ", fmtNs(limit))
	default:
		t.Verdict = undecided
		t.Detail = fmt.Sprintf("no design's interval is wholly under %s ns/op, and not every one wholly over. ", fmtNs(limit))
	}
	t.Detail += "ns/op, median [95% interval]: " + strings.Join(all, "; ")
	return t
}

// ratioAtMost: design a's ns/op is at most limit times design b's on op,
// judged on the interval of the per-round ratio a/b.
func ratioAtMost(d *Data, a, b, op string, limit float64, cpu int) target {
	t := target{Name: fmt.Sprintf("%s ≤ %s%s on %s", a, timesLimit(limit), b, op), CPU: cpu}
	ka, kb := targetRow(a, op, cpu), targetRow(b, op, cpu)
	r, ok := d.ratioOf(ka, kb)
	if !ok {
		t.Detail = fmt.Sprintf("needs both %s and %s on %s at %s", a, b, op, where(cpu))
		return t
	}
	t.Verdict = withinLimit(r.Summary.Lo, r.Summary.Hi, limit)
	t.Detail = fmt.Sprintf("%s/%s %s, %s; %s %s, %s %s ns/op", a, b, r, r.how(), a, d.interval(ka), b, d.interval(kb))
	return t
}

// timesLimit names a ratio limit: "2× ", or "" for 1 (no slower than).
func timesLimit(limit float64) string {
	if limit == 1 {
		return ""
	}
	return fmt.Sprintf("%g× ", limit)
}

// how says which interval a ratio has.
func (r ratio) how() string {
	if r.N > 0 {
		return fmt.Sprintf("median of %d per-round ratios", r.N)
	}
	return "ratio of the medians (rows of different run counts cannot be paired by round)"
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
func where(cpu int) string {
	return fmt.Sprintf("par=%d, work=%v, -cpu %d", targetPar, targetWork, cpu)
}
