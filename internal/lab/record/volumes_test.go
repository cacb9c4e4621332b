package record

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noisyTree is runs/ with n records of random digits: they gzip to about
// half, so that a small limit needs several volumes.
func noisyTree(t *testing.T, n int) map[string][]byte {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	files := map[string][]byte{}
	for i := range n {
		var b bytes.Buffer
		for range 4000 {
			fmt.Fprintf(&b, "%d", r.IntN(10))
		}
		files[fmt.Sprintf("runs/%03d.json", i)] = b.Bytes()
	}
	return files
}

func writeVolumes(t *testing.T, dir string, vols [][]byte) {
	t.Helper()
	for i, v := range vols {
		require.NoError(t, os.WriteFile(filepath.Join(dir, VolumeName(i+1)), v, 0o644))
	}
}

// TestVolumes: a tree over the limit is cut into volumes under it, the
// same bytes each time, and Open reads them back as the one tree.
func TestVolumes(t *testing.T) {
	files := noisyTree(t, 40)
	tree, err := MemFS(files)
	require.NoError(t, err)
	const limit = 20 << 10
	vols, err := WriteVolumes(tree, limit)
	require.NoError(t, err)
	require.Greater(t, len(vols), 2)
	for i, v := range vols {
		assert.LessOrEqual(t, int64(len(v)), int64(limit), "volume %d", i+1)
	}
	again, err := WriteVolumes(tree, limit)
	require.NoError(t, err)
	assert.Equal(t, vols, again, "the same files, the same volumes")

	dir := t.TempDir()
	require.NoError(t, WriteJSON(filepath.Join(dir, MetaFile), Meta{}))
	writeVolumes(t, dir, vols)
	folder, err := Open(dir)
	require.NoError(t, err)
	for name, b := range files {
		got, err := fs.ReadFile(folder, name)
		require.NoError(t, err)
		assert.Equal(t, b, got, name)
	}
	entries, err := fs.ReadDir(folder, RunsDir)
	require.NoError(t, err)
	assert.Len(t, entries, len(files))
}

// TestVolumesOneFits: a tree under the limit is one volume, the bytes
// WriteArchive writes.
func TestVolumesOneFits(t *testing.T) {
	tree, err := MemFS(noisyTree(t, 3))
	require.NoError(t, err)
	vols, err := WriteVolumes(tree, VolumeLimit)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, WriteArchive(&b, tree))
	assert.Equal(t, [][]byte{b.Bytes()}, vols)
}

// TestVolumesRefused: a missing volume, a second volume without the first,
// and a file in two volumes are refused with what is wrong; the control,
// the same volumes whole, opens.
func TestVolumesRefused(t *testing.T) {
	tree, err := MemFS(noisyTree(t, 40))
	require.NoError(t, err)
	vols, err := WriteVolumes(tree, 20<<10)
	require.NoError(t, err)
	setup := func(vols [][]byte) string {
		dir := t.TempDir()
		require.NoError(t, WriteJSON(filepath.Join(dir, MetaFile), Meta{}))
		writeVolumes(t, dir, vols)
		return dir
	}
	_, err = Open(setup(vols))
	require.NoError(t, err, "the control: every volume, once")

	dir := setup(vols)
	require.NoError(t, os.Remove(filepath.Join(dir, VolumeName(2))))
	_, err = Open(dir)
	require.ErrorContains(t, err, VolumeName(2)+" is missing")

	dir = setup(vols)
	require.NoError(t, os.Remove(filepath.Join(dir, RunsArchive)))
	_, err = Open(dir)
	require.ErrorContains(t, err, "not "+RunsArchive+", the first volume")

	dir = setup(append([][]byte{vols[0]}, vols...))
	_, err = Open(dir)
	require.ErrorIs(t, err, ErrBadArchive)
	require.ErrorContains(t, err, "twice")
}
