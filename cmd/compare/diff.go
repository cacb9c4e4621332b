package main

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// reproTolerance is how far apart two runs' medians may be and still count as
// the same result: the bar the project sets for the comparison's
// reproducibility.
const reproTolerance = 0.10

// diffDirs compares the calls/s and p99 medians of two results directories,
// group by group, and prints a Markdown table with a verdict per row. A group
// with a load-bound run in either directory is shown but marked: its figures
// measured the load generator, so they need not agree.
func diffDirs(arg string, out io.Writer) error {
	oldDir, newDir, ok := strings.Cut(arg, ",")
	if !ok || oldDir == "" || newDir == "" {
		return fmt.Errorf("-diff %q: want OLD,NEW (two results directories)", arg)
	}
	load := func(dir string) (map[string]*Group, []*Group, error) {
		records, err := loadRecords(dir)
		if err != nil {
			return nil, nil, err
		}
		if len(records) == 0 {
			return nil, nil, fmt.Errorf("%s: no runs", dir)
		}
		groups := aggregate(records)
		byKey := map[string]*Group{}
		for _, g := range groups {
			byKey[g.key()] = g
		}
		return byKey, groups, nil
	}
	olds, _, err := load(oldDir)
	if err != nil {
		return err
	}
	_, order, err := load(newDir)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Reproducibility: %s (old) vs %s (new); medians over each directory's repetitions; within %.0f%% counts as reproduced.\n\n",
		oldDir, newDir, reproTolerance*100)
	fmt.Fprintln(out, "| workload | driver | factors | level | mode | calls/s old → new | Δ | p99 old → new | Δ | load-bound (old, new) | verdict |")
	fmt.Fprintln(out, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	var compared, reproduced, unsaturated, unsatReproduced int
	for _, n := range order {
		o := olds[n.key()]
		if o == nil {
			continue
		}
		rOld, rNew := o.fig(mCallsPerSec).Median, n.fig(mCallsPerSec).Median
		pOld, pNew := o.fig(mP99).Median, n.fig(mP99).Median
		dr, dp := relDiff(rOld, rNew), relDiff(pOld, pNew)
		oSat, nSat := o.Classes[ClassLoadBound], n.Classes[ClassLoadBound]
		sat := oSat > 0 || nSat > 0
		ok := math.Abs(dr) <= reproTolerance
		compared++
		if ok {
			reproduced++
		}
		verdict := "reproduced"
		if !ok {
			verdict = "NOT reproduced"
		}
		if sat {
			verdict += " (load-bound: measured the driver)"
		} else {
			unsaturated++
			if ok {
				unsatReproduced++
			}
		}
		fmt.Fprintf(out, "| %s | %s | %s | %d %s | %s | %s → %s | %+.1f%% | %s → %s | %+.1f%% | %d/%d, %d/%d | %s |\n",
			n.Workload, n.Driver, n.Factors, n.Level, groupUnit(n), n.Mode, fmtNum(rOld), fmtNum(rNew), dr*100, fmtMs(pOld), fmtMs(pNew), dp*100,
			oSat, len(o.Runs), nSat, len(n.Runs), verdict)
	}
	if compared == 0 {
		return fmt.Errorf("%s and %s have no workload × driver × factors × level × mode in common", oldDir, newDir)
	}
	fmt.Fprintf(out, "\ncalls/s medians within %.0f%%: %d of %d groups; of the %d groups load-bound in neither directory, %d.\n",
		reproTolerance*100, reproduced, compared, unsaturated, unsatReproduced)
	return nil
}

func (g *Group) key() string { return groupKey(g.Section, g.Level, g.Mode) }

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
