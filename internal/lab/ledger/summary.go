package ledger

import (
	"fmt"
	"slices"
	"time"
)

// The bands of calls whose mean breakdown stands for a quantile: the calls
// ranked between Lo and Hi of the run by their whole time. A band, not the
// one call at the quantile, so that a bar is not one call's accident; the
// tail is every call above TailFrom.
var (
	bandP50  = band{0.45, 0.55}
	bandP99  = band{0.985, 0.995}
	TailFrom = 0.99
)

type band struct{ Lo, Hi float64 }

// Summary is a run's calls in figures, in microseconds, every map keyed by
// every category of Categories.
type Summary struct {
	Calls   int `json:"calls"`
	Partial int `json:"partial"`
	// Accounted is the share of the calls' summed time put in a category
	// other than Unattributed.
	Accounted float64 `json:"accounted"`
	// P50Us and P99Us are the calls' whole time at the median and the
	// 99th percentile.
	P50Us float64 `json:"p50_us"`
	P99Us float64 `json:"p99_us"`
	// StateP50Us and StateP99Us are, for each category, the median and
	// 99th percentile over calls of a call's time in it (each its own
	// ranking: they do not add up to a call).
	StateP50Us map[string]float64 `json:"state_p50_us"`
	StateP99Us map[string]float64 `json:"state_p99_us"`
	// AtP50Us and AtP99Us are the mean breakdown of the calls around the
	// median and the 99th percentile of whole time (the bands above): a
	// typical call and a slow one, each adding up to about its quantile.
	// TailUs is the mean breakdown of the calls slower than TailFrom.
	AtP50Us map[string]float64 `json:"at_p50_us"`
	AtP99Us map[string]float64 `json:"at_p99_us"`
	TailUs  map[string]float64 `json:"tail_us"`
}

// Summarize sums a ledger up; it refuses one without calls.
func (l *Ledger) Summarize() (Summary, error) {
	n := len(l.Calls)
	if n == 0 {
		return Summary{}, fmt.Errorf("ledger: the trace holds no whole call (%d cut by its ends): was the server marking calls (package calltrace)?", l.Partial)
	}
	calls := slices.Clone(l.Calls)
	slices.SortStableFunc(calls, func(a, b Call) int { return int(a.Total - b.Total) })
	s := Summary{Calls: n, Partial: l.Partial,
		P50Us: us(calls[rank(0.5, n)].Total), P99Us: us(calls[rank(0.99, n)].Total),
		StateP50Us: map[string]float64{}, StateP99Us: map[string]float64{}}
	var all, attributed time.Duration
	for _, c := range calls {
		all += c.Total
		attributed += c.Total - c.By[index[Unattributed]]
	}
	if all > 0 {
		s.Accounted = float64(attributed) / float64(all)
	}
	col := make([]time.Duration, n)
	for i, c := range Categories {
		for j := range calls {
			col[j] = calls[j].By[i]
		}
		slices.Sort(col)
		s.StateP50Us[c.Name], s.StateP99Us[c.Name] = us(col[rank(0.5, n)]), us(col[rank(0.99, n)])
	}
	s.AtP50Us = mean(calls[rank(bandP50.Lo, n) : rank(bandP50.Hi, n)+1])
	s.AtP99Us = mean(calls[rank(bandP99.Lo, n) : rank(bandP99.Hi, n)+1])
	s.TailUs = mean(calls[min(rank(TailFrom, n)+1, n-1):])
	return s, nil
}

// rank is the index of quantile q among n sorted values (the nearest rank
// below).
func rank(q float64, n int) int { return min(int(q*float64(n-1)), n-1) }

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// mean is the calls' mean time in each category.
func mean(calls []Call) map[string]float64 {
	out := make(map[string]float64, len(Categories))
	for i, c := range Categories {
		var sum time.Duration
		for _, call := range calls {
			sum += call.By[i]
		}
		out[c.Name] = us(sum) / float64(len(calls))
	}
	return out
}

// Share is the category's share of the calls' summed time.
func (l *Ledger) Share(category string) (float64, error) {
	i, ok := index[category]
	if !ok {
		return 0, fmt.Errorf("ledger: no category %q; categories: %v", category, Names())
	}
	var all, in time.Duration
	for _, c := range l.Calls {
		all += c.Total
		in += c.By[i]
	}
	if all <= 0 {
		return 0, fmt.Errorf("ledger: no call time to share (%d calls)", len(l.Calls))
	}
	return float64(in) / float64(all), nil
}
