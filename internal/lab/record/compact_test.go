package record

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDropHistogram: the record loses its histogram and says why; every
// other field reads as it did, and Load reads it with no curve.
func TestDropHistogram(t *testing.T) {
	r := histogramRun(t)
	b, err := JSON(r)
	require.NoError(t, err)
	out, ok, err := DropHistogram(b, "no report reads it")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Less(t, len(out), len(b))
	assert.JSONEq(t, `""`, string(resultField(t, out, "hdr")))

	var got Run
	require.NoError(t, json.Unmarshal(out, &got))
	assert.Equal(t, "no report reads it", got.HistogramDropped)
	require.NoError(t, CurveFromHDR(got.Result))
	assert.Empty(t, got.Result.Percentiles, "no histogram, no curve")
	want := *r
	res := *r.Result
	res.HDR, res.Percentiles = "", nil
	want.Result, want.HistogramDropped = &res, "no report reads it"
	wantJSON, err := JSON(want)
	require.NoError(t, err)
	assert.Equal(t, string(wantJSON), string(out), "the bytes JSON writes for the record without it")

	again, ok, err := DropHistogram(out, "twice")
	require.NoError(t, err)
	assert.False(t, ok, "nothing left to drop")
	assert.Equal(t, out, again)
}

// TestDropHistogramRefuses is the control: a record the rewrite would
// change elsewhere, or one not laid out as JSON writes it, is refused, and
// a drop needs its reason.
func TestDropHistogramRefuses(t *testing.T) {
	b, err := JSON(histogramRun(t))
	require.NoError(t, err)
	_, _, err = DropHistogram(b, "")
	assert.ErrorContains(t, err, "for a reason")

	// A second "hdr" at the same indent, in another object: which is the
	// histogram's is not for a pattern to guess.
	twice := bytes.Replace(b, []byte("\n  \"derived\": {"), []byte("\n  \"derived\": {\n    \"hdr\": \"x\","), 1)
	require.NotEqual(t, b, twice)
	_, _, err = DropHistogram(twice, "why")
	assert.ErrorContains(t, err, "not laid out")

	compact := new(bytes.Buffer)
	require.NoError(t, json.Compact(compact, b))
	_, _, err = DropHistogram(compact.Bytes(), "why")
	assert.ErrorContains(t, err, "not laid out")

	// A record whose only "hdr" at that indent is not the result's: the
	// rewrite would change another field, and says so.
	moved := bytes.Replace(b, []byte("\n    \"hdr\": \""), []byte("\n     \"hdr\": \""), 1)
	moved = bytes.Replace(moved, []byte("\n  \"derived\": {"), []byte("\n  \"derived\": {\n    \"hdr\": \"x\","), 1)
	_, _, err = DropHistogram(moved, "why")
	assert.ErrorContains(t, err, "changed more than the histogram")
}

// TestBundle: the logs of runs/ go into the manifest and come back at
// their names; the other files, and a log that is not text, stay as they
// are.
func TestBundle(t *testing.T) {
	files := map[string][]byte{
		"runs/001-a.json":          []byte("{}\n"),
		"runs/001-a.server.log":    []byte("locklab: listening\nlocklab: stopped\n"),
		"runs/001-a.go.log":        []byte("load: 10 calls\n"),
		"runs/001-a.cpu.log":       {0xff, 0xfe, 0x00}, // not UTF-8: a file of its own
		"runs/prof/nested.log":     []byte("not directly under runs/\n"),
		"runs/001-a.summary.json":  []byte("{}"),
		"runs/002-b.warmup.log":    nil,
		"runs/003-c.k6.log.gz.txt": []byte("not a log by its name\n"),
	}
	out, err := Bundle(files)
	require.NoError(t, err)
	assert.Len(t, files, 8, "its argument is not changed")
	var m Manifest
	require.NoError(t, json.Unmarshal(out[path.Join(RunsDir, ManifestFile)], &m))
	assert.Equal(t, ArchiveSchema, m.Schema)
	assert.Equal(t, map[string]string{"001-a.server.log": "locklab: listening\nlocklab: stopped\n", "001-a.go.log": "load: 10 calls\n", "002-b.warmup.log": ""}, m.Logs)
	for _, kept := range []string{"runs/001-a.json", "runs/001-a.cpu.log", "runs/prof/nested.log", "runs/001-a.summary.json", "runs/003-c.k6.log.gz.txt"} {
		assert.Equal(t, files[kept], out[kept], kept)
	}
	assert.Len(t, out, 6)

	back, err := Unbundle(out)
	require.NoError(t, err)
	assert.Equal(t, len(files), len(back))
	for name, b := range files {
		assert.Equal(t, string(b), string(back[name]), name)
	}
	_, err = Bundle(out)
	assert.ErrorContains(t, err, "bundled")
}

// TestUnbundleRefuses is the control: a manifest of another schema, one
// that names a file twice or a path outside runs/, is refused; a tree
// without one (the first layout) is read as it is.
func TestUnbundleRefuses(t *testing.T) {
	manifest := func(schema string, logs map[string]string) map[string][]byte {
		b, err := JSON(Manifest{Schema: schema, Logs: logs})
		require.NoError(t, err)
		return map[string][]byte{path.Join(RunsDir, ManifestFile): b, "runs/001-a.server.log": []byte("x\n")}
	}
	_, err := Unbundle(manifest("locklab.runs-archive/v3", nil))
	assert.ErrorIs(t, err, ErrArchiveSchema)
	_, err = Unbundle(manifest(ArchiveSchema, map[string]string{"001-a.server.log": "y\n"}))
	assert.ErrorIs(t, err, ErrBadArchive)
	assert.ErrorContains(t, err, "both")
	_, err = Unbundle(manifest(ArchiveSchema, map[string]string{"../etc/passwd.log": "y\n"}))
	assert.ErrorIs(t, err, ErrBadArchive)
	_, err = Unbundle(map[string][]byte{path.Join(RunsDir, ManifestFile): []byte("{")})
	assert.ErrorIs(t, err, ErrBadArchive)

	v1 := map[string][]byte{"runs/001-a.server.log": []byte("x\n")}
	got, err := Unbundle(v1)
	require.NoError(t, err)
	assert.Equal(t, v1, got)
}

// TestOpenReadsBothLayouts: a folder packed in the first layout, in the
// second, and the second extracted into runs/ all read as the same tree,
// logs at their names; a manifest of an unknown schema is refused, naming
// the archive.
func TestOpenReadsBothLayouts(t *testing.T) {
	want := t.TempDir()
	writeFolder(t, want)
	runsOf := func(t *testing.T, dir string) map[string][]byte {
		folder, err := Open(dir)
		require.NoError(t, err)
		sub, err := fs.Sub(folder, RunsDir)
		require.NoError(t, err)
		files, err := Files(sub)
		require.NoError(t, err)
		return files
	}
	wantFiles := runsOf(t, want)
	require.Len(t, wantFiles, 7, "records, logs and a summary")

	packV2 := func(t *testing.T, dir string, schema string) {
		runs, err := Files(os.DirFS(dir))
		require.NoError(t, err)
		inRuns := map[string][]byte{}
		for name, b := range runs {
			if strings.HasPrefix(name, RunsDir+"/") {
				inRuns[name] = b
			}
		}
		bundled, err := Bundle(inRuns)
		require.NoError(t, err)
		if schema != ArchiveSchema {
			b, err := JSON(Manifest{Schema: schema})
			require.NoError(t, err)
			bundled[path.Join(RunsDir, ManifestFile)] = b
		}
		tree, err := MemFS(bundled)
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, WriteArchive(&b, tree))
		require.NoError(t, os.WriteFile(filepath.Join(dir, RunsArchive), b.Bytes(), 0o644))
		require.NoError(t, os.RemoveAll(filepath.Join(dir, RunsDir)))
	}
	extract := func(t *testing.T, dir string) {
		arc, err := ReadArchive(filepath.Join(dir, RunsArchive))
		require.NoError(t, err)
		files, err := Files(arc)
		require.NoError(t, err)
		for name, b := range files {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
		}
		require.NoError(t, os.Remove(filepath.Join(dir, RunsArchive)))
	}
	tests := []struct {
		name   string
		layout func(t *testing.T, dir string)
	}{
		{"first layout", pack},
		{"smaller layout", func(t *testing.T, dir string) { packV2(t, dir, ArchiveSchema) }},
		{"smaller layout, extracted", func(t *testing.T, dir string) { packV2(t, dir, ArchiveSchema); extract(t, dir) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFolder(t, dir)
			tt.layout(t, dir)
			assert.Equal(t, wantFiles, runsOf(t, dir))
			folder, err := Open(dir)
			require.NoError(t, err)
			_, runs, err := LoadFolder(folder)
			require.NoError(t, err)
			assert.Len(t, runs, 3)
		})
	}

	dir := t.TempDir()
	writeFolder(t, dir)
	packV2(t, dir, "locklab.runs-archive/v9")
	_, err := Open(dir)
	require.ErrorIs(t, err, ErrArchiveSchema, "the control: a layout this reader does not know")
	assert.ErrorContains(t, err, filepath.Join(dir, RunsArchive))
}

// TestDropProfile: a record without its profile's name is the bytes JSON
// writes for it, every figure kept; the control is a record not laid out as
// JSON writes it, refused.
func TestDropProfile(t *testing.T) {
	r := histogramRun(t)
	r.Attribution = &Attribution{Profile: "001-x.cpu.pprof", ProfileSeconds: 1, Samples: 98, CPUSeconds: map[string]float64{"store": 0.4}, Calls: 10}
	b, err := JSON(r)
	require.NoError(t, err)
	out, file, ok, err := DropProfile(b)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "001-x.cpu.pprof", file)
	want := *r
	a := *r.Attribution
	a.Profile = ""
	want.Attribution = &a
	wantJSON, err := JSON(want)
	require.NoError(t, err)
	assert.Equal(t, string(wantJSON), string(out))

	again, _, ok, err := DropProfile(out)
	require.NoError(t, err)
	assert.False(t, ok, "nothing left to drop")
	assert.Equal(t, out, again)

	compact := new(bytes.Buffer)
	require.NoError(t, json.Compact(compact, b))
	_, _, _, err = DropProfile(compact.Bytes())
	assert.ErrorContains(t, err, "not laid out")
}
