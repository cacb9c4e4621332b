package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// loadRecords reads back the run records of a results directory, in run
// order: the report can always be recomputed from them alone.
func loadRecords(dir string) ([]*RunRecord, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "runs", "*.json"))
	if err != nil {
		return nil, err
	}
	var records []*RunRecord
	for _, p := range paths {
		if strings.HasSuffix(p, ".k6.json") {
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
		if r.Summary == nil {
			return nil, fmt.Errorf("%s: no k6 summary", p)
		}
		records = append(records, &r)
	}
	slices.SortFunc(records, func(a, b *RunRecord) int { return a.Index - b.Index })
	return records, nil
}
