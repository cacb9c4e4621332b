package run

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyDuet copies a side-by-side results folder's records into a new one,
// its rounds plain.
func copyDuet(t *testing.T, from string) string {
	t.Helper()
	dir := t.TempDir()
	meta, err := os.ReadFile(filepath.Join(from, DuetMetaFile))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, DuetMetaFile), meta, 0o644))
	rounds, err := ReadDuetRounds(from) // the committed folder's, packed
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, DuetRoundsFile), rounds, 0o644))
	return dir
}

// TestPackDuet: a side-by-side folder packed holds rounds.jsonl.gz in
// place of rounds.jsonl, several times smaller, and its report renders
// the same bytes from it as from the plain rounds; packing again changes
// nothing. The control: a folder whose rounds do not render is refused and
// left as it was.
func TestPackDuet(t *testing.T) {
	dir := copyDuet(t, "../../../docs/results/default")
	require.NoError(t, WriteDuetReport(dir, io.Discard))
	want, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	plain, err := os.ReadFile(filepath.Join(dir, DuetRoundsFile))
	require.NoError(t, err)

	var out bytes.Buffer
	require.NoError(t, PackDuet(dir, &out))
	assert.Contains(t, out.String(), "the report rendered the same from both")
	assert.NoFileExists(t, filepath.Join(dir, DuetRoundsFile))
	st, err := os.Stat(filepath.Join(dir, DuetRoundsPacked))
	require.NoError(t, err)
	assert.Less(t, st.Size(), int64(len(plain))/3, "packed, the rounds take a fraction of their size")
	got, err := ReadDuetRounds(dir)
	require.NoError(t, err)
	assert.Equal(t, plain, got, "the packed rounds read back as they were")
	require.NoError(t, os.Remove(filepath.Join(dir, "report.md")))
	require.NoError(t, WriteDuetReport(dir, io.Discard))
	again, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	assert.Equal(t, string(want), string(again), "the report renders from the packed rounds")
	packed, err := os.ReadFile(filepath.Join(dir, DuetRoundsPacked))
	require.NoError(t, err)
	out.Reset()
	require.NoError(t, PackDuet(dir, &out))
	assert.Contains(t, out.String(), "packed already")
	same, err := os.ReadFile(filepath.Join(dir, DuetRoundsPacked))
	require.NoError(t, err)
	assert.Equal(t, packed, same)

	bad := copyDuet(t, "../../../docs/results/default")
	broken := append(bytes.Clone(plain), []byte("{\"group\":\n")...)
	require.NoError(t, os.WriteFile(filepath.Join(bad, DuetRoundsFile), broken, 0o644))
	assert.Error(t, PackDuet(bad, io.Discard), "the control: rounds that do not render")
	assert.FileExists(t, filepath.Join(bad, DuetRoundsFile))
	assert.NoFileExists(t, filepath.Join(bad, DuetRoundsPacked))
}
