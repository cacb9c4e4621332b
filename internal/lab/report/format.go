package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// fmtCI prints a median with its 95% confidence interval, [lo–hi], or, when
// there are too few runs for one, the runs' range, (min–max).
func fmtCI(s Stat, f func(float64) string) string {
	switch {
	case s.N == 0:
		return "—"
	case s.N == 1:
		return f(s.Median)
	case s.CI:
		return fmt.Sprintf("%s [%s–%s]", f(s.Median), f(s.Lo), f(s.Hi))
	}
	return fmt.Sprintf("%s (%s–%s)", f(s.Median), f(s.Min), f(s.Max))
}

// fmtNum prints a count or rate with thousands separators.
func fmtNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	n := int64(math.Round(v))
	s := strconv.FormatInt(max(n, -n), 10)
	var b strings.Builder
	if n < 0 {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// fmtMs prints milliseconds in the unit that suits them.
func fmtMs(ms float64) string {
	switch {
	case ms >= 1000:
		return strconv.FormatFloat(ms/1000, 'f', 2, 64) + "s"
	case ms >= 1:
		return strconv.FormatFloat(ms, 'f', 2, 64) + "ms"
	case ms >= 0.001 || ms == 0:
		return strconv.FormatFloat(ms*1000, 'f', 1, 64) + "µs"
	default: // below a microsecond (a lock's serial demand): 0.0µs would hide it
		return strconv.FormatFloat(ms*1e6, 'f', 0, 64) + "ns"
	}
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// Headline is one run's figures in a line, for the runner's progress.
func Headline(calls, p50, p99 float64) string {
	return fmt.Sprintf("%s calls/s, p50 %s, p99 %s", fmtNum(calls), fmtMs(p50), fmtMs(p99))
}
