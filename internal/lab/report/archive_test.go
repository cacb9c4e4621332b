package report

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/record"
)

// -rerender reads a packed folder's runs.tar.gz as it reads runs/: the
// golden report, byte for byte.
func TestRerenderFromTheArchive(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS("testdata/results")))
	files := map[string][]byte{}
	root := os.DirFS(dir)
	require.NoError(t, fs.WalkDir(root, record.RunsDir, func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files[name], err = fs.ReadFile(root, name)
		}
		return err
	}))
	tree, err := record.MemFS(files)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, record.WriteArchive(&b, tree))
	require.NoError(t, os.WriteFile(filepath.Join(dir, record.RunsArchive), b.Bytes(), 0o644))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, record.RunsDir)))

	require.NoError(t, Rerender(dir, new(strings.Builder)))
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join("testdata", "report.md.golden"))
	require.NoError(t, err)
	assert.Equal(t, string(want), string(md))

	// The control: a truncated archive is refused, named.
	require.NoError(t, os.WriteFile(filepath.Join(dir, record.RunsArchive), b.Bytes()[:b.Len()/2], 0o644))
	err = Rerender(dir, new(strings.Builder))
	require.ErrorIs(t, err, record.ErrBadArchive)
	assert.Contains(t, err.Error(), filepath.Join(dir, record.RunsArchive))
}
