package record

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/locklab/locklab/internal/lab/plan"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

// writeFolder writes a results folder as the runner leaves one: meta.json,
// capacity.json, and in runs/ three records, a driver's summary and logs.
func writeFolder(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, RunsDir), 0o755))
	require.NoError(t, WriteJSON(filepath.Join(dir, MetaFile), Meta{Command: "compare -reps 3", Modes: []string{"mutex"}, Reps: 3, GitCommit: "abc1234"}))
	require.NoError(t, WriteJSON(filepath.Join(dir, capacityFile), map[string]any{"slo": "p99<=1ms", "refine": 2}))
	for i, calls := range []int64{3000, 1000, 2000} {
		st, err := protojson.Marshal(&locklabv1.GetStatsResponse{WindowSeconds: 1, CpuSeconds: 0.5, Requests: uint64(calls)})
		require.NoError(t, err)
		id := "00" + string(rune('1'+i)) + "-counter-go-mutex-vus10-rep1"
		r := Run{Spec: plan.Spec{Index: 3 - i, ID: id, Workload: "counter", Factors: plan.DefaultPoint()}, Result: &summary.Summary{Calls: calls, DurationS: 1}, Stats: st}
		require.NoError(t, WriteJSON(filepath.Join(dir, RunsDir, id+".json"), r))
		require.NoError(t, os.WriteFile(filepath.Join(dir, RunsDir, id+".server.log"), []byte("listening\n"), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, RunsDir, "001-counter-go-mutex-vus10-rep1"+SummarySuffix), []byte("{}"), 0o644))
}

// pack writes dir's runs/ as its RunsArchive and removes runs/, as a
// packed study folder is.
func pack(t *testing.T, dir string) {
	t.Helper()
	files := map[string][]byte{}
	root := os.DirFS(dir)
	require.NoError(t, fs.WalkDir(root, RunsDir, func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files[name], err = fs.ReadFile(root, name)
		}
		return err
	}))
	tree, err := MemFS(files)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, WriteArchive(&b, tree))
	require.NoError(t, os.WriteFile(filepath.Join(dir, RunsArchive), b.Bytes(), 0o644))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, RunsDir)))
}

// capacityFile is the capacity study's record (package capacity's), which
// the folder keeps beside meta.json like any file of its own.
const capacityFile = "capacity.json"

// loaded is everything the loaders read of a folder.
type loaded struct {
	meta Meta
	runs []*Run
	capa []byte // a study's own record beside the runs (the capacity study's)
}

func loadAll(t *testing.T, dir string) loaded {
	t.Helper()
	folder, err := Open(dir)
	require.NoError(t, err)
	meta, runs, err := LoadFolder(folder)
	require.NoError(t, err)
	c, err := fs.ReadFile(folder, capacityFile)
	require.NoError(t, err)
	return loaded{meta, runs, c}
}

// The loaders read the same from runs/ and from the archive packed from it.
func TestLoadersReadTheArchiveAsTheFolder(t *testing.T) {
	dir := t.TempDir()
	writeFolder(t, dir)
	fromDir := loadAll(t, dir)
	require.Len(t, fromDir.runs, 3, "the driver's summary is not a record")
	assert.Equal(t, []int{1, 2, 3}, []int{fromDir.runs[0].Index, fromDir.runs[1].Index, fromDir.runs[2].Index}, "in run order")

	pack(t, dir)
	require.NoDirExists(t, filepath.Join(dir, RunsDir))
	assert.Equal(t, fromDir, loadAll(t, dir))
	meta, runs, err := LoadDir(dir)
	require.NoError(t, err)
	assert.Equal(t, fromDir.meta, meta)
	assert.Equal(t, fromDir.runs, runs)

	// The control: another record in the archive is read as another run.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, RunsDir), 0o755))
	require.NoError(t, os.Remove(filepath.Join(dir, RunsArchive)))
	writeFolder(t, dir)
	b, err := os.ReadFile(filepath.Join(dir, RunsDir, "001-counter-go-mutex-vus10-rep1.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, RunsDir, "004-counter-go-mutex-vus10-rep2.json"), b, 0o644))
	pack(t, dir)
	assert.NotEqual(t, fromDir, loadAll(t, dir))
}

// A packed folder is an fs.FS like any other: the folder's own files, and
// runs/ from the archive, listed where runs/ was.
func TestPackedFolderIsAnFS(t *testing.T) {
	dir := t.TempDir()
	writeFolder(t, dir)
	pack(t, dir)
	folder, err := Open(dir)
	require.NoError(t, err)
	require.NoError(t, fstest.TestFS(folder, MetaFile, capacityFile, RunsArchive, "runs/001-counter-go-mutex-vus10-rep1.json",
		"runs/003-counter-go-mutex-vus10-rep1.server.log"))
	arc, err := ReadArchive(filepath.Join(dir, RunsArchive))
	require.NoError(t, err)
	require.NoError(t, fstest.TestFS(arc, "runs", "runs/002-counter-go-mutex-vus10-rep1.json", "runs/001-counter-go-mutex-vus10-rep1"+SummarySuffix))
}

func TestOpenRefusesBothOrAStrayArchive(t *testing.T) {
	dir := t.TempDir()
	writeFolder(t, dir)
	pack(t, dir)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, RunsDir), 0o755))
	_, err := Open(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "both runs/ and runs.tar.gz")
	_, _, err = LoadDir(dir)
	require.Error(t, err, "every reader refuses it")

	stray := t.TempDir()
	tree, err := MemFS(map[string][]byte{"runs/a.json": []byte("{}"), "meta.json": []byte("{}")})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, WriteArchive(&b, tree))
	require.NoError(t, os.WriteFile(filepath.Join(stray, RunsArchive), b.Bytes(), 0o644))
	_, err = Open(stray)
	require.ErrorIs(t, err, ErrBadArchive)
	assert.Contains(t, err.Error(), filepath.Join(stray, RunsArchive))
	assert.Contains(t, err.Error(), `"meta.json" is outside runs/`)

	_, err = Open(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// Packing the same files gives the same bytes, whatever their times on disk.
func TestWriteArchiveIsDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeFolder(t, a)
	writeFolder(t, b)
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	require.NoError(t, filepath.WalkDir(b, func(p string, _ fs.DirEntry, err error) error {
		if err == nil {
			err = os.Chtimes(p, old, old)
		}
		return err
	}))
	archive := func(dir string) []byte {
		var buf bytes.Buffer
		require.NoError(t, WriteArchive(&buf, os.DirFS(dir)))
		return buf.Bytes()
	}
	first := archive(a)
	assert.Equal(t, first, archive(a), "the same folder twice")
	assert.Equal(t, first, archive(b), "the same files with other times")

	zr, err := gzip.NewReader(bytes.NewReader(first))
	require.NoError(t, err)
	assert.True(t, zr.ModTime.IsZero(), "no time in the gzip header")
	assert.Empty(t, zr.Name)
	tr := tar.NewReader(zr)
	var names []string
	for h, err := tr.Next(); err == nil; h, err = tr.Next() {
		names = append(names, h.Name)
		assert.Zero(t, h.ModTime.Unix(), h.Name)
		assert.Zero(t, h.Uid+h.Gid, h.Name)
		assert.Empty(t, h.Uname+h.Gname, h.Name)
	}
	assert.IsNonDecreasing(t, names, "entries in lexical order")

	// The control: one byte more in one file is another archive.
	require.NoError(t, os.WriteFile(filepath.Join(b, MetaFile), []byte("{} "), 0o644))
	assert.NotEqual(t, first, archive(b))
}

// A corrupt or truncated archive is refused whole, with its path.
func TestReadArchiveRefusesCorruption(t *testing.T) {
	dir := t.TempDir()
	writeFolder(t, dir)
	var buf bytes.Buffer
	require.NoError(t, WriteArchive(&buf, os.DirFS(dir)))
	good := buf.Bytes()
	file := filepath.Join(t.TempDir(), RunsArchive)
	require.NoError(t, os.WriteFile(file, good, 0o644))
	_, err := ReadArchive(file)
	require.NoError(t, err, "the control: the whole archive reads")

	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0xff
	crcOff := bytes.Clone(good)
	crcOff[len(crcOff)-5] ^= 0xff // the gzip trailer's checksum
	tests := map[string][]byte{
		"empty":            nil,
		"not gzip":         []byte("runs/001.json\n"),
		"gzip header only": good[:10],
		"cut in the data":  good[:len(good)/2],
		"cut before trail": good[:len(good)-8],
		"one byte short":   good[:len(good)-1],
		"a byte flipped":   flipped,
		"checksum wrong":   crcOff,
	}
	for name, b := range tests {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(file, b, 0o644))
			_, err := ReadArchive(file)
			require.ErrorIs(t, err, ErrBadArchive)
			assert.True(t, strings.HasPrefix(err.Error(), file+": "), "names the file: %v", err)
		})
	}
}

// An entry that is not a file or folder inside the archive is refused.
func TestReadArchiveRefusesStrayEntries(t *testing.T) {
	tests := map[string]tar.Header{
		"a parent":     {Name: "../x.json", Typeflag: tar.TypeReg},
		"absolute":     {Name: "/etc/x.json", Typeflag: tar.TypeReg},
		"a symlink":    {Name: "runs/x.json", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
		"a duplicate":  {Name: "runs/a.json", Typeflag: tar.TypeReg},
		"file is dir":  {Name: "runs/a.json/b", Typeflag: tar.TypeReg},
		"dir is file?": {Name: "runs/a.json/", Typeflag: tar.TypeDir},
	}
	for name, h := range tests {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			tw := tar.NewWriter(zw)
			require.NoError(t, tw.WriteHeader(&tar.Header{Name: "runs/a.json", Typeflag: tar.TypeReg, Mode: 0o644}))
			h.Mode = 0o644
			require.NoError(t, tw.WriteHeader(&h))
			require.NoError(t, tw.Close())
			require.NoError(t, zw.Close())
			_, err := readArchive(&buf)
			require.ErrorIs(t, err, ErrBadArchive)
		})
	}
}
