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

// diffDirs compares the requests/s and p95 medians of two results
// directories, group by group, and prints a Markdown table with a verdict per
// row. A group k6 saturated in either run is shown but marked: its figures
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
			byKey[groupKey(g)] = g
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
	fmt.Fprintln(out, "| workload | level | mode | requests/s old → new | Δ | p95 old → new | Δ | k6 saturated (old, new) | verdict |")
	fmt.Fprintln(out, "| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	var compared, reproduced, unsaturated, unsatReproduced int
	for _, n := range order {
		o := olds[groupKey(n)]
		if o == nil {
			continue
		}
		rOld, rNew := o.fig("requests_per_sec").Median, n.fig("requests_per_sec").Median
		pOld, pNew := o.fig("grpc_req_duration_ms.p95").Median, n.fig("grpc_req_duration_ms.p95").Median
		dr, dp := relDiff(rOld, rNew), relDiff(pOld, pNew)
		sat := o.Saturated > 0 || n.Saturated > 0
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
			verdict += " (k6-saturated: measured k6)"
		} else {
			unsaturated++
			if ok {
				unsatReproduced++
			}
		}
		fmt.Fprintf(out, "| %s | %d %s | %s | %s → %s | %+.1f%% | %s → %s | %+.1f%% | %d/%d, %d/%d | %s |\n",
			n.Workload, n.Level, groupUnit(n), n.Mode, fmtNum(rOld), fmtNum(rNew), dr*100, fmtMs(pOld), fmtMs(pNew), dp*100,
			o.Saturated, len(o.Runs), n.Saturated, len(n.Runs), verdict)
	}
	if compared == 0 {
		return fmt.Errorf("%s and %s have no workload × level × mode in common", oldDir, newDir)
	}
	fmt.Fprintf(out, "\nrequests/s medians within %.0f%%: %d of %d groups; of the %d groups k6 saturated in neither run, %d.\n",
		reproTolerance*100, reproduced, compared, unsaturated, unsatReproduced)
	return nil
}

func groupKey(g *Group) string { return fmt.Sprintf("%s|%d|%s", g.Workload, g.Level, g.Mode) }

// groupUnit names what a group's level counts: VUs (closed model) or
// iterations/s (open model).
func groupUnit(g *Group) string {
	if len(g.records) > 0 && g.records[0].Model == "open" {
		return "/s"
	}
	return "VUs"
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
