package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locklab/locklab/load"
)

// loadRecords reads back the run records of a results directory, in run
// order, and recomputes what is derived from them: the report can always be
// rebuilt from these files alone. Records written before the driver seam
// (k6 only, no factors) are carried over to today's shape.
func loadRecords(dir string) ([]*RunRecord, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "runs", "*.json"))
	if err != nil {
		return nil, err
	}
	var records []*RunRecord
	for _, p := range paths {
		if isSidecar(p) {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var r RunRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if r.Result == nil && r.LegacySummary != nil {
			if r.Result, err = load.FromK6(r.LegacySummary); err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			r.Driver = "k6"
			if r.LegacyK6 != nil {
				r.DriverExit = r.LegacyK6.ExitCode
				r.DriverProc = ProcUsage{CPUSeconds: r.LegacyK6.CPUSeconds, WallSeconds: r.LegacyK6.WallSeconds}
			}
		}
		if r.Result == nil {
			return nil, fmt.Errorf("%s: no driver result", p)
		}
		if r.Factors.Durability == "" { // written before the factors
			r.Factors = Factors{Durability: durabilityNone, ReadRatio: defaultReadRatio}
		}
		r.Derived = derive(&r)
		records = append(records, &r)
	}
	slices.SortFunc(records, func(a, b *RunRecord) int { return a.Index - b.Index })
	return records, nil
}

// isSidecar tells a driver's own files (summaries) from run records.
func isSidecar(path string) bool {
	for _, suffix := range []string{".k6.json", ".summary.json"} {
		if strings.HasSuffix(path, suffix) {
			return true
		}
	}
	return false
}
