package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/record"
)

// A preflight failure exits 2, like a bad flag, before anything runs: here
// ghz missing, a binary that is not the pinned ghz, or an -out that holds a
// packed study.
func TestPreflightExitsTwo(t *testing.T) {
	server, _, loadBin := binaries(t)
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	compare := filepath.Join(t.TempDir(), "compare")
	out, err := exec.Command("go", "build", "-o", compare, ".").CombinedOutput()
	require.NoError(t, err, "build compare: %s", out)
	packed := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(packed, record.RunsArchive), nil, 0o644))
	tests := []struct{ name, ghz, out, want string }{
		{"missing ghz", "/nonexistent/ghz", t.TempDir(), "/nonexistent/ghz not found: run `make ghz` first"},
		{"not ghz", loadBin, t.TempDir(), "is not ghz"},
		{"a packed study as -out", loadBin, packed, "-out " + packed + " holds a packed study (runs.tar.gz): give a new folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(compare, "-driver", "ghz", "-workloads", "counter", "-reps", "1", "-server", server, "-out", tt.out)
			cmd.Dir = root // ghz reads proto/ from the repository's root
			cmd.Env = append(os.Environ(), "GHZ="+tt.ghz)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "want an exit status, got %v: %s", err, out)
			assert.Equal(t, 2, ee.ExitCode())
			assert.Contains(t, string(out), tt.want)
		})
	}
}
