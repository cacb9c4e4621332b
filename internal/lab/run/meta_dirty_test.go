package run

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGitDirtyIgnoresResults: a changed results folder, or changed prose,
// leaves the tree clean (a study replacing its own folder still runs the
// commit it names); a changed file of code makes it dirty — the control.
func TestGitDirtyIgnoresResults(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	git("init", "-q")
	write("main.go", "package main\n")
	write("README.md", "old\n")
	write(filepath.Join("docs", "methodology.md"), "old\n")
	write(filepath.Join(ResultsDir, "study", "report.md"), "old\n")
	git("add", ".")
	git("commit", "-q", "-m", "init")
	require.False(t, gitDirty(dir), "a fresh commit")

	require.NoError(t, os.Remove(filepath.Join(dir, ResultsDir, "study", "report.md")))
	write(filepath.Join(ResultsDir, "other", "report.md"), "new\n")
	require.False(t, gitDirty(dir), "only results changed")

	write("README.md", "prose\n")
	write(filepath.Join("docs", "methodology.md"), "prose\n")
	require.False(t, gitDirty(dir), "only prose changed")

	write("main.go", "package main // changed\n")
	require.True(t, gitDirty(dir), "the code changed")
}
