package capacity

import (
	"fmt"
	"math"
	"strings"

	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/report"
)

// overKey is one design under one policy on one workload and driver.
type overKey struct{ Workload, Driver, Mode, Policy string }

// overCells are the overload phase's cells in the order the table shows
// them: by workload, policy (Policies' order) and design (meta's), each
// with its clean runs over the blocks, or why it does not apply.
func (rep *CapacityReport) overCells() ([]overKey, map[overKey][]OverloadRun, map[overKey]string) {
	runs, na := map[overKey][]OverloadRun{}, map[overKey]string{}
	for _, o := range rep.Cap.Overruns {
		k := overKey{o.Workload, o.Driver, o.Mode, o.Policy}
		switch {
		case o.NA != "":
			na[k] = o.NA
		case o.Spoiled == "":
			runs[k] = append(runs[k], o)
		default:
			if _, ok := runs[k]; !ok {
				runs[k] = nil // a cell whose every attempt was spoiled still shows
			}
		}
	}
	var keys []overKey
	for _, wl := range rep.Meta.Workloads {
		for _, d := range rep.Meta.Drivers {
			for _, p := range Policies {
				for _, m := range rep.Meta.Modes {
					k := overKey{wl, d, m, p.Name}
					_, ran := runs[k]
					if _, isNA := na[k]; ran || isNA {
						keys = append(keys, k)
					}
				}
			}
		}
	}
	return keys, runs, na
}

// meanCI is a mean with its 95% t interval: "12,000 [11,500, 12,500]".
func meanCI(vs []float64, f func(float64) string) string {
	d, err := paired.EstimateDifference(vs)
	if err != nil {
		return "—"
	}
	if len(vs) < 2 {
		return f(d.Mean) + " [no interval]"
	}
	return fmt.Sprintf("%s [%s, %s]", f(d.Mean), f(d.Lo), f(d.Hi))
}

// geoCI is a geometric mean of positive values with its 95% t interval on
// their logs.
func geoCI(vs []float64, f func(float64) string) string {
	e, err := paired.Estimate(vs)
	if err != nil {
		return "—"
	}
	if math.IsInf(e.Hi, 1) {
		return f(e.GeoMean) + " [no interval]"
	}
	return fmt.Sprintf("%s [%s, %s]", f(e.GeoMean), f(e.Lo), f(e.Hi))
}

func (rep *CapacityReport) overloadTable() report.Rows {
	t := report.Rows{Header: []string{"workload", "design", "policy", "N", "offered → after (calls/s)", "blocks", "goodput (calls/s)", "of the best capacity",
		"p99 of OK calls", "errors by code", "peak goroutines", "peak RSS (× at capacity)", "recovery (s)"}}
	keys, cells, na := rep.overCells()
	for _, k := range keys {
		ors := cells[k]
		if why, ok := na[k]; ok {
			t.Rows = append(t.Rows, []string{k.Workload, k.Mode, k.Policy, "", "", "n/a: " + why, "", "", "", "", "", "", ""})
			continue
		}
		var goodput, share, okp99, rss, recov []float64
		var recovered int
		var gor int64
		codes := map[string]int64{}
		for _, o := range ors {
			r, ok := rep.runs[o.RunID]
			if !ok || r.Result == nil || !(r.Result.DurationS > 0) {
				continue
			}
			res := r.Result
			g := float64(res.OK) / res.DurationS
			goodput = append(goodput, g)
			if o.Capacity > 0 {
				share = append(share, g/float64(o.Capacity))
			}
			if res.LatencyOKMs != nil && res.OK > 0 && res.LatencyOKMs.P99 > 0 {
				okp99 = append(okp99, res.LatencyOKMs.P99)
			}
			if o.BaseRSS > 0 && o.PeakRSS > 0 {
				rss = append(rss, float64(o.PeakRSS)/float64(o.BaseRSS))
			}
			if o.Recovered {
				recovered++
				recov = append(recov, o.RecoveryS)
			} else if after, ok := rep.runs[o.RecoverID]; ok && after.Result != nil {
				recov = append(recov, after.Result.DurationS) // never within the phase: all of it
			}
			gor = max(gor, o.PeakGoroutines)
			for c, n := range res.ByCode {
				codes[c] += n
			}
		}
		first := OverloadRun{}
		if len(ors) > 0 {
			first = ors[0]
		} else {
			for _, o := range rep.Cap.Overruns {
				if (overKey{o.Workload, o.Driver, o.Mode, o.Policy}) == k {
					first = o
					break
				}
			}
		}
		blocks := fmt.Sprintf("%d of %d", len(goodput), rep.Meta.Reps)
		row := []string{k.Workload, k.Mode, k.Policy, boundText(first.Bound), fmt.Sprintf("%s → %s", report.FmtNum(float64(first.Rate)), report.FmtNum(float64(first.RecoverRate))), blocks}
		if len(goodput) == 0 {
			t.Rows = append(t.Rows, append(row, "no clean run", "", "", "", "", "", ""))
			continue
		}
		pct := func(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }
		secs := func(v float64) string { return strings.TrimSuffix(fmt.Sprintf("%.2f", v), "0") }
		t.Rows = append(t.Rows, append(row, meanCI(goodput, report.FmtNum), meanCI(share, pct), geoCI(okp99, report.FmtMs), codesText(codes), fmt.Sprint(gor),
			geoCI(rss, func(v float64) string { return fmt.Sprintf("%.2f×", v) }),
			fmt.Sprintf("%s (recovered in %d of %d)", meanCI(recov, secs), recovered, len(goodput))))
	}
	return t
}
