package seeds

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/summary"
)

// k6Duration prints milliseconds as k6's summary does: µs below a
// millisecond, ms below a second, s above, two decimals at most.
func k6Duration(ms float64) string {
	switch {
	case ms == 0:
		return "0s"
	case ms < 1:
		return trimmed(ms*1000) + "µs"
	case ms < 1000:
		return trimmed(ms) + "ms"
	}
	return trimmed(ms/1000) + "s"
}

func trimmed(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// k6Bytes prints bytes as k6's summary does: SI units, one decimal below 10.
func k6Bytes(b float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB"}
	i := 0
	for b >= 1000 && i < len(units)-1 {
		b /= 1000
		i++
	}
	if i > 0 && b < 10 {
		return fmt.Sprintf("%.1f %s", b, units[i])
	}
	return fmt.Sprintf("%.0f %s", b, units[i])
}

// k6Trend is a trend's line in the seed's table: avg min med max p(90) p(95).
func k6Trend(l summary.LatencyMs) string {
	return fmt.Sprintf("avg=%s min=%s med=%s max=%s p(90)=%s p(95)=%s",
		k6Duration(l.Mean), k6Duration(l.Min), k6Duration(l.P50), k6Duration(l.Max), k6Duration(l.P90), k6Duration(l.P95))
}

// msCell is a latency in ms for a seed's column of milliseconds.
func msCell(ms float64) string { return strconv.FormatFloat(ms, 'f', 2, 64) }

// count prints a whole number with thousands separators.
func count(n float64) string {
	s := strconv.FormatFloat(n, 'f', 0, 64)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// loadBound marks a figure of a run whose driver was saturated: the figure
// is the driver's more than the server's.
const loadBound = "†"

// mark is v with the load-bound mark when r's driver was saturated.
func mark(r *record.Run, v string) string {
	if r.Derived.Class == record.ClassLoadBound {
		return v + loadBound
	}
	return v
}

// saturation says, per mode, how the runner classed the runs: whether the
// driver was saturated (load-bound), the server (server-bound), or neither.
func saturation(runs []*record.Run, modes []string) string {
	var b strings.Builder
	b.WriteString("Was the driver saturated? The runner classes every run from both processes' CPU over its measured window " +
		"(load-bound: the driver used ≥ 85% of its CPUs; server-bound: the server, with any database it started, ≥ 90% and the driver less; † marks load-bound runs' figures):\n\n")
	for _, m := range modes {
		n := map[record.Class]int{}
		total := 0
		var driver string
		for _, r := range runs {
			if r.Mode == m {
				n[r.Derived.Class]++
				total++
				driver = r.Driver
			}
		}
		var parts []string
		for _, c := range record.Classes {
			if n[c] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n[c], c))
			}
		}
		fmt.Fprintf(&b, "- %s (%s): %d runs, %s\n", m, driver, total, strings.Join(parts, ", "))
	}
	return b.String()
}

// medianRun is the run of the median calls/s among repetitions (the lower
// of the two middle ones for an even count), so that every figure of a cell
// comes from one run, as in the seed's single runs.
func medianRun(runs []*record.Run) *record.Run {
	if len(runs) == 0 {
		return nil
	}
	s := slices.Clone(runs)
	slices.SortStableFunc(s, func(a, b *record.Run) int { return cmp.Compare(a.Derived.CallsPerSec, b.Derived.CallsPerSec) })
	return s[(len(s)-1)/2]
}

// modesOf are the modes of the runs, first those the seed compared, in its
// order, then the others as they first ran.
func modesOf(runs []*record.Run, seedOrder ...string) []string {
	var out []string
	for _, m := range seedOrder {
		if slices.ContainsFunc(runs, func(r *record.Run) bool { return r.Mode == m }) {
			out = append(out, m)
		}
	}
	for _, r := range runs {
		if !slices.Contains(out, r.Mode) {
			out = append(out, r.Mode)
		}
	}
	return out
}

// table renders a Markdown table.
func table(head []string, rows [][]string) string {
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	line(head)
	sep := make([]string, len(head))
	for i := range sep {
		sep[i] = "---"
	}
	line(sep)
	for _, r := range rows {
		line(r)
	}
	return b.String()
}
