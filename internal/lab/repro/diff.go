package repro

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
)

// tolerance is how far apart two runs' medians may be and still count as
// the same result: the bar the project sets for the comparison's
// reproducibility.
const tolerance = 0.10

// Diff compares the medians of two results directories ("OLD,NEW"), group by
// group, on every metric the catalogue marks for -diff, and prints a
// Markdown table with a verdict per row, judged on calls/s. A group with a
// load-bound run in either directory is shown but marked: its figures
// measured the load generator, so they need not agree. It prints nothing
// when it fails.
func Diff(arg string, out io.Writer) error {
	oldDir, newDir, ok := strings.Cut(arg, ",")
	if !ok || oldDir == "" || newDir == "" {
		return fmt.Errorf("-diff %q: want OLD,NEW (two results directories)", arg)
	}
	load := func(dir string) ([]*report.Group, error) {
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
		return report.Aggregate(runs)
	}
	olds, err := load(oldDir)
	if err != nil {
		return err
	}
	news, err := load(newDir)
	if err != nil {
		return err
	}
	byKey := map[string]*report.Group{}
	for _, g := range olds {
		byKey[g.Key()] = g
	}
	var compared []*report.Metric
	for _, m := range report.Catalogue {
		if m.Diff != "" {
			compared = append(compared, m)
		}
	}
	header := []string{"workload", "driver", "factors", "level", "mode"}
	for _, m := range compared {
		header = append(header, m.Diff+" old → new", "Δ")
	}
	header = append(header, "load-bound (old, new)", "verdict")
	var rows [][]string
	var reproduced, unsaturated, unsatReproduced int
	for _, g := range news {
		o := byKey[g.Key()]
		if o == nil {
			continue
		}
		row := []string{g.Workload, g.Driver, g.Factors.String(), fmt.Sprintf("%d %s", g.Level, groupUnit(g)), g.Mode}
		for _, m := range compared {
			a, b := o.Fig(m).Median, g.Fig(m).Median
			row = append(row, m.Unit.Format(a)+" → "+m.Unit.Format(b), fmt.Sprintf("%+.1f%%", relDiff(a, b)*100))
		}
		oSat, nSat := o.Classes[record.ClassLoadBound], g.Classes[record.ClassLoadBound]
		same := math.Abs(relDiff(o.Fig(report.CallsPerSec).Median, g.Fig(report.CallsPerSec).Median)) <= tolerance
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
		rows = append(rows, append(row, fmt.Sprintf("%d/%d, %d/%d", oSat, len(o.Runs), nSat, len(g.Runs)), verdict))
	}
	if len(rows) == 0 {
		return fmt.Errorf("%s and %s have no workload × driver × factors × level × mode in common", oldDir, newDir)
	}
	intro := fmt.Sprintf("Reproducibility: %s (old) vs %s (new); medians over each directory's repetitions; within %.0f%% counts as reproduced.",
		oldDir, newDir, tolerance*100)
	fmt.Fprint(out, report.RenderMarkdown([]report.Piece{report.Para(intro), report.Table(header, rows)}))
	fmt.Fprintf(out, "calls/s medians within %.0f%%: %d of %d groups; of the %d groups load-bound in neither directory, %d.\n",
		tolerance*100, reproduced, len(rows), unsaturated, unsatReproduced)
	return nil
}

// groupUnit names what a group's level counts: callers (closed model) or
// calls/s (open model).
func groupUnit(g *report.Group) string {
	if rs := g.Records(); len(rs) > 0 && rs[0].Model == "open" {
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
