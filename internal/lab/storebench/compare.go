package storebench

import (
	"fmt"
	"math"

	"golang.org/x/perf/benchmath"
)

// ratio is row A's ns/op over row B's, with its 95% interval.
//
// Paired: make bench-store runs its rounds one after another, each round
// every design once, so the i-th run of every row comes from round i and
// ran seconds from the i-th run of any other. The ratio is then the median
// of the per-round ratios A_i/B_i with benchmath's distribution-free
// interval (no assumption on the ratios' distribution, so a bimodal row
// widens the interval instead of breaking it): whatever moved a whole
// round cancels out of A_i/B_i.
//
// Unpaired, when the rows have different run counts (not rounds of one
// run, or a round cut short): the ratio of the medians, bounded by the
// ratios of the medians' interval ends — wider than the paired interval,
// never narrower than the data allow.
type ratio struct {
	Summary benchmath.Summary
	N       int // rounds paired, or 0 if unpaired
}

// ratioOf computes A over B; ok is false if either row did not run.
func (d *Data) ratioOf(a, b row) (ratio, bool) {
	ra, rb := d.rows[a], d.rows[b]
	if ra == nil || rb == nil || len(ra.NsPerOp) == 0 || len(rb.NsPerOp) == 0 {
		return ratio{}, false
	}
	if n := len(ra.NsPerOp); n == len(rb.NsPerOp) {
		rs := make([]float64, n)
		for i := range rs {
			rs[i] = ra.NsPerOp[i] / rb.NsPerOp[i]
		}
		s := benchmath.NewSample(rs, &benchmath.DefaultThresholds)
		return ratio{Summary: benchmath.AssumeNothing.Summary(s, confidence), N: n}, true
	}
	sa, _ := d.NsPerOp(a)
	sb, _ := d.NsPerOp(b)
	r := ratio{Summary: benchmath.Summary{
		Center: sa.Summary.Center / sb.Summary.Center,
		Lo:     sa.Summary.Lo / sb.Summary.Hi,
		Hi:     sa.Summary.Hi / sb.Summary.Lo,
	}}
	if !bounded(sa.Summary) || !bounded(sb.Summary) {
		r.Summary.Lo, r.Summary.Hi = math.Inf(-1), math.Inf(1)
	}
	return r, true
}

// bounded reports whether a summary has a finite interval (benchmath's is
// unbounded with fewer runs than the level needs).
func bounded(s benchmath.Summary) bool {
	return !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0)
}

// order says which row is faster where the interval separates them: -1 if
// A is (the whole interval of A/B below 1), +1 if B is, 0 if undecided.
func (r ratio) order() int {
	switch {
	case r.Summary.Hi < 1:
		return -1
	case r.Summary.Lo > 1:
		return 1
	}
	return 0
}

// String is the ratio and its interval, e.g. "1.64× [1.50, 1.81]".
func (r ratio) String() string {
	return fmt.Sprintf("%s× %s", fmtRatio(r.Summary.Center), fmtBounds(r.Summary.Lo, r.Summary.Hi, fmtRatio))
}

func fmtRatio(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// fmtBounds is an interval "[lo, hi]"; an unbounded end (too few runs for
// the level) is ∞ or 0.
func fmtBounds(lo, hi float64, f func(float64) string) string {
	l, h := "0", "∞"
	if !math.IsInf(lo, 0) && !math.IsNaN(lo) && lo > 0 {
		l = f(lo)
	}
	if !math.IsInf(hi, 0) && !math.IsNaN(hi) {
		h = f(hi)
	}
	return "[" + l + ", " + h + "]"
}
