package pack

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/attrib"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/render"
	"github.com/locklab/locklab/internal/lab/report"
)

// fixture is the report's golden fixture: real run records of a `make
// compare`, a few of each driver.
const fixture = "../report/testdata/results"

// study copies the fixture into a fresh folder laid out as the studies of
// docs/results were: runs/ with a record's log beside it, and the other
// logs in a logs.tar.gz.
func study(t *testing.T, logs map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(fixture)))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "runs", "001-counter-go-mutex-vus10-rep1.server.log"), []byte("listening on 127.0.0.1:0\n"), 0o644))
	if logs == nil {
		logs = map[string]string{"002-counter-go-inputQ-vus10-rep1.server.log": "listening\n", "002-counter-go-inputQ-vus10-rep1.go.log": "10 callers\n"}
	}
	writeLogs(t, filepath.Join(dir, LogsArchive), logs)
	return dir
}

// writeLogs writes a flat logs.tar.gz, as tar czf of the log files did.
func writeLogs(t *testing.T, file string, logs map[string]string) {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	for name, text := range logs {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(text)), ModTime: time.Now(), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(text))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(file, b.Bytes(), 0o644))
}

func renderDir(t *testing.T, dir string) []report.File {
	t.Helper()
	folder, err := record.Open(dir)
	require.NoError(t, err)
	files, err := render.Render(folder)
	require.NoError(t, err)
	return files
}

// listing is a folder's files, by path, with their bytes.
func listing(t *testing.T, fsys fs.FS) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			var b []byte
			b, err = fs.ReadFile(fsys, name)
			out[name] = string(b)
		}
		return err
	}))
	return out
}

func TestPack(t *testing.T) {
	dir := study(t, nil)
	before := renderDir(t, dir)
	runsBefore := listing(t, os.DirFS(filepath.Join(dir, "runs")))
	var out strings.Builder
	require.NoError(t, Pack(dir, &out))
	assert.Contains(t, out.String(), "pack: "+dir+": 21 files")
	assert.Contains(t, out.String(), "removed runs/ and logs.tar.gz")
	assert.Contains(t, out.String(), "note: "+dir+": no report.md in the folder", "the fixture has no report: said, not fatal")

	assert.NoDirExists(t, filepath.Join(dir, "runs"))
	assert.NoFileExists(t, filepath.Join(dir, LogsArchive))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"meta.json", record.RunsArchive}, names, "no temporary file left")
	st, err := os.Stat(filepath.Join(dir, record.RunsArchive))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o644), st.Mode().Perm(), "readable by the folder's readers")

	assert.Equal(t, before, renderDir(t, dir), "the report renders the same from the archive")
	arc, err := record.ReadArchive(filepath.Join(dir, record.RunsArchive))
	require.NoError(t, err)
	raw := listing(t, arc)
	assert.Contains(t, raw, "runs/"+record.ManifestFile, "the archive is in the smaller layout")
	for name := range raw {
		assert.False(t, strings.HasSuffix(name, ".log"), "%s: the logs are bundled", name)
	}
	got := opened(t, dir)
	for name, text := range runsBefore {
		if isRecord("runs/" + name) {
			continue // read the same: Pack compared what the loaders read of them
		}
		assert.Equal(t, text, got["runs/"+name], name)
	}
	assert.Equal(t, "10 callers\n", got["runs/002-counter-go-inputQ-vus10-rep1.go.log"], "the logs archive's files under runs/")
	assert.Len(t, got, len(runsBefore)+2)
	assert.Contains(t, out.String(), "0 histograms no report reads dropped", "every run of the fixture is in a group")
	assert.Contains(t, out.String(), "3 logs bundled")

	out.Reset()
	require.NoError(t, Pack(dir, &out), "a packed folder is repacked")
	assert.Contains(t, out.String(), "unchanged", "once is enough")
	assert.Equal(t, before, renderDir(t, dir))
}

// opened is the runs/ tree record.Open reads from a packed folder, by path.
func opened(t *testing.T, dir string) map[string]string {
	t.Helper()
	folder, err := record.Open(dir)
	require.NoError(t, err)
	sub, err := fs.Sub(folder, record.RunsDir)
	require.NoError(t, err)
	out := map[string]string{}
	for name, text := range listing(t, sub) {
		out[path.Join(record.RunsDir, name)] = text
	}
	return out
}

// packV1 packs dir's runs/ as archives were packed before the smaller
// layout: every file as it is, no manifest.
func packV1(t *testing.T, dir string) {
	t.Helper()
	files, err := gather(dir)
	require.NoError(t, err)
	tree, err := record.MemFS(files)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, record.WriteArchive(&b, tree))
	require.NoError(t, os.WriteFile(filepath.Join(dir, record.RunsArchive), b.Bytes(), 0o644))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, record.RunsDir)))
	require.NoError(t, os.Remove(filepath.Join(dir, LogsArchive)))
}

// TestRepack: an archive packed before the smaller layout reads as it did
// and is rewritten in it: each record keeps its histogram and loses the
// curve drawn from it, the logs go into the manifest, and the tree read
// back is the one packed.
func TestRepack(t *testing.T) {
	dir := study(t, nil)
	before := renderDir(t, dir)
	packV1(t, dir)
	arc, err := record.ReadArchive(filepath.Join(dir, record.RunsArchive))
	require.NoError(t, err)
	was := listing(t, arc)
	require.NotContains(t, was, "runs/"+record.ManifestFile)
	assert.Equal(t, was, opened(t, dir), "an old archive reads as it is")
	assert.Equal(t, before, renderDir(t, dir))

	var out strings.Builder
	require.NoError(t, Repack(dir, &out))
	assert.Contains(t, out.String(), "3 logs bundled")
	assert.Equal(t, before, renderDir(t, dir), "the report renders the same")
	is := opened(t, dir)
	require.Len(t, is, len(was))
	slimmed := 0
	for name, text := range is {
		if !isRecord(name) || !strings.Contains(was[name], `"hdr": "H`) {
			assert.Equal(t, was[name], text, "%s is as it was", name)
			continue
		}
		slimmed++
		assert.Contains(t, text, `"percentiles": null`, name)
		assert.Contains(t, text, `"hdr": "H`, "%s: in a group, it keeps its histogram", name)
		assert.Less(t, len(text), len(was[name]), name)
	}
	assert.Positive(t, slimmed)
	out.Reset()
	require.NoError(t, Repack(dir, &out))
	assert.Contains(t, out.String(), "unchanged")
}

// TestVolumesInstalled: an archive in two volumes reads as the one tree;
// put in place as one volume, the second is removed and nothing is lost.
func TestVolumesInstalled(t *testing.T) {
	dir := study(t, nil)
	require.NoError(t, Pack(dir, new(strings.Builder)))
	require.NoError(t, Repack(dir, new(strings.Builder)))
	runsOf := func() map[string]string {
		folder, err := record.Open(dir)
		require.NoError(t, err)
		sub, err := fs.Sub(folder, record.RunsDir)
		require.NoError(t, err)
		return listing(t, sub)
	}
	want := runsOf()

	arc, err := record.ReadArchive(filepath.Join(dir, record.RunsArchive))
	require.NoError(t, err)
	files := map[string][]byte{}
	for name, text := range listing(t, arc) {
		files[name] = []byte(text)
	}
	parts := []map[string][]byte{{}, {}}
	for name, b := range files {
		parts[len(parts[0])%2][name] = b // about half in each
		if len(parts[0]) > len(files)/2 {
			parts[1][name] = b
			delete(parts[0], name)
		}
	}
	for i, part := range parts {
		require.NotEmpty(t, part)
		tree, err := record.MemFS(part)
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, record.WriteArchive(&b, tree))
		require.NoError(t, os.WriteFile(filepath.Join(dir, record.VolumeName(i+1)), b.Bytes(), 0o644))
	}
	assert.Equal(t, want, runsOf(), "two volumes read as the one tree")
	var out strings.Builder
	require.NoError(t, Repack(dir, &out))
	assert.Contains(t, out.String(), "unchanged", "slim records in small volumes: nothing to do")

	tmps, remove, err := writeTemps(dir, files)
	defer remove()
	require.NoError(t, err)
	require.Len(t, tmps, 1, "they fit in one")
	_, names, err := install(dir, tmps)
	require.NoError(t, err)
	assert.Equal(t, record.RunsArchive, names)
	assert.NoFileExists(t, filepath.Join(dir, record.VolumeName(2)), "the volume past the new archive is removed")
	assert.Equal(t, want, runsOf())
}

// TestSlimRecordKeepsACurveTheHistogramDoesNotGive is the control: a curve
// that is not the histogram's own is no copy of it, and stays.
func TestSlimRecordKeepsACurveTheHistogramDoesNotGive(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(fixture, "runs", "001-counter-go-mutex-vus10-rep1.json"))
	require.NoError(t, err)
	_, ok, err := slimRecord(b)
	require.NoError(t, err)
	require.True(t, ok, "the fixture's record carries both")
	changed := regexp.MustCompile(`(\n\s*\[\n\s*50,\n\s*)[0-9.]+`).ReplaceAll(b, []byte("${1}123.456"))
	require.NotEqual(t, string(b), string(changed))
	_, ok, err = slimRecord(changed)
	require.NoError(t, err)
	assert.False(t, ok)
}

// Packing the same runs twice gives the same bytes, whatever the files'
// times and the logs archive's order.
func TestPackIsDeterministic(t *testing.T) {
	a := study(t, nil)
	b := study(t, nil)
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	require.NoError(t, filepath.WalkDir(b, func(p string, _ fs.DirEntry, err error) error {
		if err == nil {
			err = os.Chtimes(p, old, old)
		}
		return err
	}))
	var out strings.Builder
	require.NoError(t, Pack(a, &out))
	require.NoError(t, Pack(b, &out))
	first, err := os.ReadFile(filepath.Join(a, record.RunsArchive))
	require.NoError(t, err)
	second, err := os.ReadFile(filepath.Join(b, record.RunsArchive))
	require.NoError(t, err)
	assert.Equal(t, first, second)
}

// The control of the check before removing anything: a logs archive that
// holds one more run record makes the archive's report another one, and
// Pack refuses, changing nothing.
func TestPackRefusesWhenTheReportDiffers(t *testing.T) {
	rec, err := os.ReadFile(filepath.Join(fixture, "runs", "001-counter-go-mutex-vus10-rep1.json"))
	require.NoError(t, err)
	// The same run at another level: a group of its own, one more section.
	extra := strings.NewReplacer(`"index": 1,`, `"index": 99,`, `"id": "001-counter-go-mutex-vus10-rep1"`, `"id": "099-counter-go-mutex-vus50-rep1"`,
		`"level": 10,`, `"level": 50,`).Replace(string(rec))
	require.NotEqual(t, string(rec), extra)
	dir := study(t, map[string]string{"099-counter-go-mutex-vus50-rep1.json": extra})
	want := listing(t, os.DirFS(dir))
	var out strings.Builder
	err = Pack(dir, &out)
	require.ErrorIs(t, err, ErrDiffers)
	assert.Contains(t, err.Error(), "its report is not the one runs/ renders")
	assert.Contains(t, err.Error(), "runs/ is kept")
	assert.Equal(t, want, listing(t, os.DirFS(dir)), "nothing changed, nothing left behind")
	assert.Empty(t, out.String())
}

// Runs that make no comparison report (a seed's counted runs: two of a mode
// in a block) are packed on their records' word, and Pack says so.
func TestPackRunsWithoutAReport(t *testing.T) {
	dir := study(t, nil)
	rec, err := os.ReadFile(filepath.Join(dir, "runs", "001-counter-go-mutex-vus10-rep1.json"))
	require.NoError(t, err)
	again := strings.Replace(string(rec), `"index": 1,`, `"index": 99,`, 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "runs", "099-counter-go-mutex-vus10-rep1.json"), []byte(again), 0o644))
	folder, err := record.Open(dir)
	require.NoError(t, err)
	_, err = render.Render(folder)
	require.Error(t, err, "no comparison report from these runs")
	_, want, err := record.LoadFolder(folder)
	require.NoError(t, err)

	var out strings.Builder
	require.NoError(t, Pack(dir, &out))
	assert.Contains(t, out.String(), "its runs make no report")
	assert.Contains(t, out.String(), "their records were compared instead")
	_, got, err := record.LoadDir(dir)
	require.NoError(t, err)
	require.Len(t, got, len(want))
	dropped := 0
	for i, w := range want {
		if w.Result.HDR == "" {
			continue
		}
		// No report reads these histograms: each is dropped, with why, and
		// the rest of the record reads as it did.
		assert.Empty(t, got[i].Result.HDR)
		assert.Contains(t, got[i].HistogramDropped, "no comparison report")
		res := *w.Result
		res.HDR, res.Percentiles = "", nil
		w.Result, w.HistogramDropped = &res, got[i].HistogramDropped
		dropped++
	}
	assert.Positive(t, dropped)
	assert.Equal(t, want, got)

	// The control: one more record in the logs archive, and the records
	// read from the archive are not runs/'s.
	other := study(t, map[string]string{"098-counter-go-mutex-vus10-rep1.json": strings.Replace(again, `"index": 99,`, `"index": 98,`, 1)})
	require.NoError(t, os.WriteFile(filepath.Join(other, "runs", "099-counter-go-mutex-vus10-rep1.json"), []byte(again), 0o644))
	err = Pack(other, &out)
	require.ErrorIs(t, err, ErrDiffers)
	assert.Contains(t, err.Error(), "its records do not read as runs/'s")
	assert.DirExists(t, filepath.Join(other, "runs"))
}

func TestPackRefuses(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"no runs", func(t *testing.T, dir string) { require.NoError(t, os.RemoveAll(filepath.Join(dir, "runs"))) }, "has no runs/ to pack"},
		{"a log that differs from its copy in runs/", func(t *testing.T, dir string) {
			writeLogs(t, filepath.Join(dir, LogsArchive), map[string]string{"001-counter-go-mutex-vus10-rep1.server.log": "another\n"})
		}, "which is right?"},
		{"a corrupt logs archive", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, LogsArchive), []byte("not gzip"), 0o644))
		}, LogsArchive + ": " + record.ErrBadArchive.Error()},
		{"a symlink in runs/", func(t *testing.T, dir string) {
			require.NoError(t, os.Symlink("../meta.json", filepath.Join(dir, "runs", "x.log")))
		}, "neither a file nor a folder"},
		{"no run records", func(t *testing.T, dir string) {
			paths, err := filepath.Glob(filepath.Join(dir, "runs", "*.json"))
			require.NoError(t, err)
			for _, p := range paths {
				require.NoError(t, os.Remove(p))
			}
		}, record.ErrNoRuns.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := study(t, nil)
			tt.setup(t, dir)
			want := listing(t, os.DirFS(dir))
			err := Pack(dir, new(strings.Builder))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Equal(t, want, listing(t, os.DirFS(dir)), "nothing changed")
		})
	}
}

// TestPackDropsTheHistogramsNoReportReads: a run the validity gate left
// out (its cell ran again, and the second attempt counts) keeps its
// summary and loses its histogram, with why; every run in a group keeps
// its own, and the report renders the same.
func TestPackDropsTheHistogramsNoReportReads(t *testing.T) {
	dir := study(t, nil)
	for _, id := range []string{"001-counter-go-mutex-vus10-rep1", "002-counter-go-inputQ-vus10-rep1", "003-counter-go-noop-vus10-rep1"} {
		rec, err := os.ReadFile(filepath.Join(dir, "runs", id+".json"))
		require.NoError(t, err)
		retry := strings.NewReplacer(`"id": "`+id+`"`, `"id": "`+id+`-try2"`, "\n  \"rep\": 1,\n", "\n  \"rep\": 1,\n  \"attempt\": 2,\n").Replace(string(rec))
		require.Contains(t, retry, `"attempt": 2`)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "runs", id+"-try2.json"), []byte(retry), 0o644))
	}
	folder, err := record.Open(dir)
	require.NoError(t, err)
	meta, runs, err := record.LoadFolder(folder)
	require.NoError(t, err)
	rep, err := report.New(meta, runs)
	require.NoError(t, err)
	grouped := map[string]bool{}
	for _, g := range rep.Groups {
		for _, id := range g.Runs {
			grouped[id] = true
		}
	}
	hdr := map[string]string{}
	for _, r := range runs {
		hdr[r.ID] = r.Result.HDR
	}
	require.Len(t, grouped, len(runs)-3, "the first attempts are in no group")
	before := renderDir(t, dir)

	var out strings.Builder
	require.NoError(t, Pack(dir, &out))
	assert.Contains(t, out.String(), "3 histograms no report reads dropped")
	assert.Equal(t, before, renderDir(t, dir), "the report renders the same")
	_, got, err := record.LoadDir(dir)
	require.NoError(t, err)
	require.Len(t, got, len(runs))
	for _, r := range got {
		if grouped[r.ID] {
			assert.Equal(t, hdr[r.ID], r.Result.HDR, r.ID)
			assert.Empty(t, r.HistogramDropped, r.ID)
			continue
		}
		assert.Empty(t, r.Result.HDR, r.ID)
		assert.Contains(t, r.HistogramDropped, "validity gate", r.ID)
		assert.Positive(t, r.Result.LatencyMs.P99, "%s: the summary's percentiles stay", r.ID)
	}

	// The control: a grouped run's histogram is read — report.html draws
	// its group's latency curve from it — and dropping it changes the
	// report, which is what the check before installing catches.
	files := map[string][]byte{}
	for name, text := range opened(t, dir) {
		files[name] = []byte(text)
	}
	name := "runs/001-counter-go-mutex-vus10-rep1-try2.json"
	require.True(t, grouped["001-counter-go-mutex-vus10-rep1-try2"])
	var ok bool
	files[name], ok, err = record.DropHistogram(files[name], "a control")
	require.NoError(t, err)
	require.True(t, ok)
	tree, err := record.MemFS(files)
	require.NoError(t, err)
	wrong, err := render.Render(record.Packed(os.DirFS(dir), tree))
	require.NoError(t, err)
	assert.Contains(t, sameFiles(before, wrong), "report.html")
}

// layoutProblem says why an archive's files are not in the smaller layout,
// or "".
func layoutProblem(t *testing.T, files map[string][]byte) string {
	t.Helper()
	b, ok := files[path.Join(record.RunsDir, record.ManifestFile)]
	if !ok {
		return "no " + record.ManifestFile
	}
	if !strings.Contains(string(b), `"schema": "`+record.ArchiveSchema+`"`) {
		return record.ManifestFile + " of another schema"
	}
	for name, data := range files {
		if path.Dir(name) == record.RunsDir && strings.HasSuffix(name, ".log") && utf8.Valid(data) {
			return name + " is a file of its own"
		}
		if isProfile(name) {
			return name + " is a CPU profile"
		}
		if held, err := heldBy(files, name); err != nil || held {
			return fmt.Sprintf("%s is a summary its record holds whole (%v)", name, err)
		}
	}
	return ""
}

// TestCommittedArchivesAreCompact: every archive under docs/results is in
// the smaller layout (make repack-results); the control is an archive
// packed in the first one.
func TestCommittedArchivesAreCompact(t *testing.T) {
	root := filepath.Join("..", "..", "..", "docs", "results")
	var dirs []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == record.RunsArchive {
			dirs = append(dirs, filepath.Dir(p))
		}
		return err
	}))
	require.NotEmpty(t, dirs)
	for _, dir := range dirs {
		volumes, err := record.Volumes(dir)
		require.NoError(t, err)
		raw, err := record.ReadVolumes(volumes)
		require.NoError(t, err)
		files, err := record.Files(raw)
		require.NoError(t, err)
		assert.Empty(t, layoutProblem(t, files), "%s: make repack-results", dir)
	}

	old := study(t, nil)
	packV1(t, old)
	arc, err := record.ReadArchive(filepath.Join(old, record.RunsArchive))
	require.NoError(t, err)
	files, err := record.Files(arc)
	require.NoError(t, err)
	assert.Equal(t, "no "+record.ManifestFile, layoutProblem(t, files))
	delete(files, "runs/001-counter-go-mutex-vus10-rep1.server.log")
	bundled, err := record.Bundle(files)
	require.NoError(t, err)
	assert.Empty(t, layoutProblem(t, bundled))
	bundled["runs/001-counter-go-mutex-vus10-rep1.server.log"] = []byte("listening\n")
	assert.Contains(t, layoutProblem(t, bundled), "a file of its own")
	delete(bundled, "runs/001-counter-go-mutex-vus10-rep1.server.log")
	bundled["runs/001-counter-go-mutex-vus10-rep1.cpu.pprof"] = []byte("\x1f\x8b")
	assert.Contains(t, layoutProblem(t, bundled), "a CPU profile")
	delete(bundled, "runs/001-counter-go-mutex-vus10-rep1.cpu.pprof")
	var r struct {
		Result json.RawMessage `json:"result"`
	}
	require.NoError(t, json.Unmarshal(bundled["runs/001-counter-go-mutex-vus10-rep1.json"], &r))
	bundled["runs/001-counter-go-mutex-vus10-rep1"+record.SummarySuffix] = r.Result
	assert.Contains(t, layoutProblem(t, bundled), "a summary its record holds whole")
}

// TestPackLeavesTheProfilesOut: an attributed run's CPU profile stays out
// of the archive, and its record keeps every figure folded from it but the
// profile's name.
func TestPackLeavesTheProfilesOut(t *testing.T) {
	dir := study(t, nil)
	const id = "001-counter-go-mutex-vus10-rep1"
	file := filepath.Join(dir, "runs", id+".json")
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var r record.Run
	require.NoError(t, json.Unmarshal(b, &r))
	cpu := map[string]float64{}
	for i, c := range attrib.Categories() {
		cpu[c.Name] = 0.01 * float64(i+1)
	}
	r.Attribution = &record.Attribution{Profile: id + ".cpu.pprof", ProfileSeconds: 1, Samples: 98,
		CPUSeconds: cpu, Calls: 9000, ReadSyscalls: 9100, WriteSyscalls: 9050}
	b, err = record.JSON(&r)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, b, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "runs", id+".cpu.pprof"), []byte("\x1f\x8b a profile"), 0o644))
	got := packChecked(t, dir, "1 CPU profiles left out")
	assert.NotContains(t, got, "runs/"+id+".cpu.pprof")
	_, runs, err := record.LoadDir(dir)
	require.NoError(t, err)
	var found bool
	for _, g := range runs {
		if g.ID != id {
			continue
		}
		found = true
		require.NotNil(t, g.Attribution)
		want := *r.Attribution
		want.Profile = ""
		assert.Equal(t, want, *g.Attribution, "every figure but the profile's name")
	}
	assert.True(t, found)
}

// TestPackLeavesHeldSummariesOut: a driver's summary that its record holds
// whole stays out of the archive; the controls, a summary with a field its
// record lacks and one whose histogram differs, stay in.
func TestPackLeavesHeldSummariesOut(t *testing.T) {
	dir := study(t, nil)
	summaryOf := func(id string, edit func(map[string]any)) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "runs", id+".json"))
		require.NoError(t, err)
		var r struct {
			Result map[string]any `json:"result"`
		}
		require.NoError(t, json.Unmarshal(b, &r))
		require.NotEmpty(t, r.Result["hdr"])
		edit(r.Result)
		out, err := json.MarshalIndent(r.Result, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "runs", id+record.SummarySuffix), out, 0o644))
	}
	summaryOf("001-counter-go-mutex-vus10-rep1", func(map[string]any) {})
	summaryOf("002-counter-go-inputQ-vus10-rep1", func(m map[string]any) { m["driver_note"] = "a field the record lacks" })
	summaryOf("003-counter-go-noop-vus10-rep1", func(m map[string]any) { m["hdr"] = "HISTFAAAAB94nJNpmSzMwMDAzAABMBoEGBkZGRkZ" })
	got := packChecked(t, dir, "1 drivers' summaries left out")
	assert.NotContains(t, got, "runs/001-counter-go-mutex-vus10-rep1"+record.SummarySuffix, "held whole by its record")
	assert.Contains(t, got, "runs/002-counter-go-inputQ-vus10-rep1"+record.SummarySuffix, "a field its record lacks")
	assert.Contains(t, got, "runs/003-counter-go-noop-vus10-rep1"+record.SummarySuffix, "another histogram")
}

// packChecked packs dir, checks that Pack said said and that the report
// renders as it did from runs/, and returns the runs/ tree the archive
// reads as.
func packChecked(t *testing.T, dir, said string) map[string]string {
	t.Helper()
	before := renderDir(t, dir)
	var out strings.Builder
	require.NoError(t, Pack(dir, &out))
	assert.Contains(t, out.String(), said)
	assert.Equal(t, before, renderDir(t, dir), "the report renders the same")
	return opened(t, dir)
}
