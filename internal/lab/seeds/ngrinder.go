package seeds

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/internal/lab/record"
)

// side is one results folder of a before/after report: its runs, which
// must be repetitions of one group (workload, driver, mode, model, level,
// factors).
type side struct {
	name string
	runs []*record.Run
}

func groupKey(r *record.Run) string {
	return fmt.Sprintf("%s %s %s %s %d %s", r.Workload, r.Driver, r.Mode, r.Model, r.Level, r.Factors.Key())
}

func (s side) check() error {
	if len(s.runs) == 0 {
		return fmt.Errorf("seeds: ngrinder: %s: no runs", s.name)
	}
	var groups []string
	for _, r := range s.runs {
		if k := groupKey(r); !slices.Contains(groups, k) {
			groups = append(groups, k)
		}
	}
	if len(groups) > 1 {
		return fmt.Errorf("seeds: ngrinder: %s holds %d groups (%s): a side of a before/after report is one group's repetitions", s.name, len(groups), strings.Join(groups, "; "))
	}
	return nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// figure is one row of the report: its name, how a side's runs give it (ok
// false: they cannot), and how it prints.
type figure struct {
	name   string
	of     func(runs []*record.Run) (float64, bool)
	format func(float64) string
}

// figures are the nGrinder report's figures, and what the runner adds.
var figures = []figure{
	{"TPS (calls/s, median of runs)", func(rs []*record.Run) (float64, bool) {
		return median(collect(rs, func(r *record.Run) float64 { return r.Derived.CallsPerSec })), true
	}, count},
	{"peak TPS (most calls in one second, any run)", func(rs []*record.Run) (float64, bool) {
		var peak int64
		for _, r := range rs {
			peak = max(peak, r.Result.PeakPerSecond())
		}
		return float64(peak), peak > 0
	}, count},
	{"errors (unexpected answers, all runs)", func(rs []*record.Run) (float64, bool) {
		return sum(collect(rs, func(r *record.Run) float64 { return float64(r.Result.UnexpectedErrors) })), true
	}, count},
	{"refused as expected (all runs)", func(rs []*record.Run) (float64, bool) {
		return sum(collect(rs, func(r *record.Run) float64 { return float64(r.Result.ExpectedRefusals) })), true
	}, count},
	{"server CPU (% of its CPUs, median)", func(rs []*record.Run) (float64, bool) {
		return median(collect(rs, func(r *record.Run) float64 { return r.Derived.ServerUtil * 100 })), true
	}, func(v float64) string { return fmt.Sprintf("%.0f%%", v) }},
	{"server CPU per call (µs, median)", func(rs []*record.Run) (float64, bool) {
		return median(collect(rs, func(r *record.Run) float64 { return r.Derived.ServerCPUPerCallUs })), true
	}, func(v float64) string { return fmt.Sprintf("%.1f", v) }},
	{"p50 latency (ms, median)", func(rs []*record.Run) (float64, bool) {
		return median(collect(rs, func(r *record.Run) float64 { return r.Result.LatencyMs.P50 })), true
	}, msCell},
	{"p99 latency (ms, median)", func(rs []*record.Run) (float64, bool) {
		return median(collect(rs, func(r *record.Run) float64 { return r.Result.LatencyMs.P99 })), true
	}, msCell},
}

func collect(rs []*record.Run, f func(*record.Run) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

func sum(v []float64) float64 {
	var t float64
	for _, x := range v {
		t += x
	}
	return t
}

// BeforeAfter renders the nGrinder form between two results folders, each
// the repetitions of one group: TPS, peak TPS over one-second windows,
// errors and the server's CPU, before, after, and the change.
func BeforeAfter(beforeName string, before []*record.Run, afterName string, after []*record.Run) (string, error) {
	sides := []side{{beforeName, before}, {afterName, after}}
	for _, s := range sides {
		if err := s.check(); err != nil {
			return "", err
		}
	}
	label := func(s side) string {
		r := s.runs[0]
		return fmt.Sprintf("%s: %s, %s, %s, %d callers (runs: %d)", s.name, r.Mode, r.Workload, r.Driver, r.Level, len(s.runs))
	}
	head := []string{"figure", label(sides[0]), label(sides[1]), "change"}
	var rows [][]string
	for _, f := range figures {
		b, okB := f.of(before)
		a, okA := f.of(after)
		row := []string{f.name, "—", "—", "—"}
		if okB {
			row[1] = f.format(b)
		}
		if okA {
			row[2] = f.format(a)
		}
		if okA && okB && b != 0 {
			row[3] = fmt.Sprintf("%+.0f%%", (a-b)/b*100)
		}
		rows = append(rows, row)
	}
	var b strings.Builder
	b.WriteString("## Our runs\n\n")
	b.WriteString("Peak TPS is the most calls that ended in one whole second of a run's measured window (the drivers that count per second: the Go driver and ghz; " +
		"— where the folder's driver does not).\n\n")
	b.WriteString(table(head, rows))
	all := append(slices.Clone(before), after...)
	b.WriteString("\n" + saturation(all, modesOf(all)))
	if slices.ContainsFunc(all, (*record.Run).Failed) {
		return b.String(), errors.New("seeds: ngrinder: a run failed a check; see its record")
	}
	return b.String(), nil
}

// NGrinderPublished is the post's figures for its product-list API.
func NGrinderPublished() string {
	rows := make([][]string, len(ngrinderPublished))
	for i, r := range ngrinderPublished {
		rows[i] = r[:]
	}
	return "A Spring service's product-list API under nGrinder, before and after a Redis cache:\n\n" +
		table([]string{"figure", "before", "after"}, rows)
}
