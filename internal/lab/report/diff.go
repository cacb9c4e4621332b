package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/locklab/locklab/internal/lab/record"
)

// reproTolerance is how far apart two runs' medians may be and still count as
// the same result: the bar the project sets for the comparison's
// reproducibility.
const reproTolerance = 0.10

// Diff compares the medians of two results directories ("OLD,NEW"), group by
// group, on every metric the catalogue marks for -diff, and prints a
// Markdown table with a verdict per row, judged on calls/s. A group with a
// load-bound run in either directory is shown but marked: its figures
// measured the load generator, so they need not agree.
func Diff(arg string, out io.Writer) error {
	oldDir, newDir, ok := strings.Cut(arg, ",")
	if !ok || oldDir == "" || newDir == "" {
		return fmt.Errorf("-diff %q: want OLD,NEW (two results directories)", arg)
	}
	load := func(dir string) ([]*Group, error) {
		folder, err := record.Open(dir)
		if err != nil {
			return nil, err
		}
		runs, err := record.Load(folder)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		if len(runs) == 0 {
			return nil, fmt.Errorf("%s: %w", dir, record.ErrNoRuns)
		}
		return Aggregate(runs)
	}
	olds, err := load(oldDir)
	if err != nil {
		return err
	}
	news, err := load(newDir)
	if err != nil {
		return err
	}
	byKey := map[string]*Group{}
	for _, g := range olds {
		byKey[g.key()] = g
	}
	var compared []*Metric
	for _, m := range Catalogue {
		if m.Diff != "" {
			compared = append(compared, m)
		}
	}
	fmt.Fprintf(out, "Reproducibility: %s (old) vs %s (new); medians over each directory's repetitions; within %.0f%% counts as reproduced.\n\n",
		oldDir, newDir, reproTolerance*100)
	header := []string{"workload", "driver", "factors", "level", "mode"}
	for _, m := range compared {
		header = append(header, m.Diff+" old → new", "Δ")
	}
	header = append(header, "load-bound (old, new)", "verdict")
	fmt.Fprint(out, mdRow(header))
	fmt.Fprint(out, mdRow(slices.Repeat([]string{"---"}, len(header))))
	var n, reproduced, unsaturated, unsatReproduced int
	for _, g := range news {
		o := byKey[g.key()]
		if o == nil {
			continue
		}
		row := []string{g.Workload, g.Driver, g.Factors.String(), fmt.Sprintf("%d %s", g.Level, groupUnit(g)), g.Mode}
		for _, m := range compared {
			a, b := o.fig(m).Median, g.fig(m).Median
			row = append(row, m.Unit.Format(a)+" → "+m.Unit.Format(b), fmt.Sprintf("%+.1f%%", relDiff(a, b)*100))
		}
		oSat, nSat := o.Classes[record.ClassLoadBound], g.Classes[record.ClassLoadBound]
		same := math.Abs(relDiff(o.fig(mCallsPerSec).Median, g.fig(mCallsPerSec).Median)) <= reproTolerance
		n++
		verdict := "NOT reproduced"
		if same {
			reproduced++
			verdict = "reproduced"
		}
		if oSat > 0 || nSat > 0 {
			verdict += " (load-bound: measured the driver)"
		} else {
			unsaturated++
			if same {
				unsatReproduced++
			}
		}
		row = append(row, fmt.Sprintf("%d/%d, %d/%d", oSat, len(o.Runs), nSat, len(g.Runs)), verdict)
		fmt.Fprint(out, mdRow(row))
	}
	if n == 0 {
		return fmt.Errorf("%s and %s have no workload × driver × factors × level × mode in common", oldDir, newDir)
	}
	fmt.Fprintf(out, "\ncalls/s medians within %.0f%%: %d of %d groups; of the %d groups load-bound in neither directory, %d.\n",
		reproTolerance*100, reproduced, n, unsaturated, unsatReproduced)
	return nil
}

// groupUnit names what a group's level counts: callers (closed model) or
// calls/s (open model).
func groupUnit(g *Group) string {
	if len(g.records) > 0 && g.records[0].Model == "open" {
		return "calls/s"
	}
	return "callers"
}

// relDiff is (new − old) / old; 0 when both are 0.
func relDiff(old, new float64) float64 {
	if old == 0 {
		if new == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return (new - old) / old
}
