package pack

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"strings"

	"github.com/locklab/locklab/internal/lab/capacity"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
)

// compacted is what compact did to a tree.
type compacted struct {
	files map[string][]byte // the archive's files, in record.ArchiveSchema's layout
	// curves counts the records that lost the percentile curve their
	// histogram draws again (slimRecord); dropped is the runs whose
	// histogram was dropped, by id.
	curves  int
	dropped map[string]bool
	changed map[string]bool // the records compact rewrote, by path
	logs    int             // logs bundled into the manifest
	// profiles is the CPU profiles left out (isProfile), by path: the
	// figures folded from each are in its record, which no longer names it.
	profiles map[string]bool
	// summaries is the drivers' summaries left out, by path: each one's
	// record holds it whole as its result (heldBy).
	summaries map[string]bool
}

func (c compacted) String() string {
	return fmt.Sprintf("%d records made to keep their histogram once, %d histograms no report reads dropped, %d CPU profiles left out (their figures are in the records), %d drivers' summaries left out (their records hold them), %d logs bundled into %s/%s",
		c.curves, len(c.dropped), len(c.profiles), len(c.summaries), c.logs, record.RunsDir, record.ManifestFile)
}

// compact lays tree — runs/ as the runner wrote it, by path — out as
// record.ArchiveSchema does, for folder, the results folder it is read as:
// each record's histogram kept once (slimRecord), dropped where no report
// reads it (histogramsRead), the CPU profiles of attributed runs left out
// (no reader of a results folder opens them: a record keeps what was folded
// from its profile, and a profile of 100 samples a second is as large as
// the record), each driver's summary its record holds whole (heldBy), and
// the logs bundled (record.Bundle).
func compact(folder fs.FS, tree map[string][]byte) (compacted, error) {
	c := compacted{dropped: map[string]bool{}, changed: map[string]bool{}, profiles: map[string]bool{}, summaries: map[string]bool{}}
	keep, why, err := histogramsRead(folder)
	if err != nil {
		return c, err
	}
	files := make(map[string][]byte, len(tree))
	for name, b := range tree {
		if isProfile(name) {
			c.profiles[name] = true
			continue
		}
		if held, err := heldBy(tree, name); err != nil {
			return c, fmt.Errorf("%s: %w", name, err)
		} else if held {
			c.summaries[name] = true
			continue
		}
		files[name] = b
		if !isRecord(name) {
			continue
		}
		if s, _, ok, err := record.DropProfile(b); err != nil {
			return c, fmt.Errorf("%s: %w", name, err)
		} else if ok {
			b, files[name], c.changed[name] = s, s, true
		}
		s, ok, err := slimRecord(b)
		if err != nil {
			return c, fmt.Errorf("%s: %w", name, err)
		}
		if ok {
			b, files[name], c.changed[name] = s, s, true
			c.curves++
		}
		var rec struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(b, &rec); err != nil {
			return c, fmt.Errorf("%s: %w", name, err)
		}
		if keep[rec.ID] {
			continue
		}
		s, ok, err = record.DropHistogram(b, why)
		if err != nil {
			return c, fmt.Errorf("%s: %w", name, err)
		}
		if ok {
			files[name] = s
			c.dropped[rec.ID], c.changed[name] = true, true
		}
	}
	if c.files, err = record.Bundle(files); err != nil {
		return c, err
	}
	c.logs = len(files) + 1 - len(c.files)
	return c, nil
}

// heldBy says whether name is a driver's summary (record.SummarySuffix)
// that the record beside it holds whole: the record's result is the summary
// as the runner read it, so every field of the one is in the other, equal,
// but the latency histogram and the percentile curve drawn from it, which
// the record keeps once or drops where no report reads them (compact). A
// summary with anything its record lacks, or without a record, is kept.
func heldBy(tree map[string][]byte, name string) (bool, error) {
	id, ok := strings.CutSuffix(name, record.SummarySuffix)
	if !ok || path.Dir(name) != record.RunsDir {
		return false, nil
	}
	rec, ok := tree[id+".json"]
	if !ok {
		return false, nil
	}
	var sum map[string]any
	if err := json.Unmarshal(tree[name], &sum); err != nil {
		return false, err
	}
	var r struct {
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal(rec, &r); err != nil {
		return false, err
	}
	if r.Result == nil {
		return false, nil
	}
	if h, _ := r.Result["hdr"].(string); h != "" && h != sum["hdr"] {
		return false, nil
	}
	for _, m := range []map[string]any{sum, r.Result} {
		delete(m, "hdr")
		delete(m, "percentiles")
	}
	return reflect.DeepEqual(sum, r.Result), nil
}

// isProfile says whether a file of runs/ is a CPU profile the runner kept
// beside an attributed run's record (record.Attribution.Profile).
func isProfile(name string) bool {
	return path.Dir(name) == record.RunsDir && strings.HasSuffix(name, ".pprof")
}

// histogramsRead is the runs of a results folder whose latency histogram a
// report reads, by id, and why the others' are not read. A comparison's
// report.html draws each group's latency curve from its runs' histograms
// merged; a run the validity gate left out is in no group. report.md, a
// capacity study's report and the seeds' pages show the percentiles each
// driver computed from the whole histogram (the summary's latency_ms), which
// the record keeps.
func histogramsRead(folder fs.FS) (map[string]bool, string, error) {
	meta, runs, err := record.LoadFolder(folder)
	if err != nil {
		return nil, "", err
	}
	if _, ok, err := capacity.LoadCapacity(folder); err != nil {
		return nil, "", err
	} else if ok {
		return nil, "a capacity study's report draws no latency curve: it shows the percentiles the driver computed, kept in the summary", nil
	}
	rep, err := report.New(meta, runs)
	if err != nil {
		return nil, "its runs make no comparison report: the pages made of them show the percentiles the driver computed, kept in the summary", nil
	}
	keep := map[string]bool{}
	for _, g := range rep.Groups {
		for _, id := range g.Runs {
			keep[id] = true
		}
	}
	return keep, "the validity gate left the run out of the analysis: the report draws its latency curves from the analysed runs' histograms alone, and shows this run's percentiles from the summary", nil
}
