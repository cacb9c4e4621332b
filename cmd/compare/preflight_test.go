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
// ghz missing, a binary that is not the pinned ghz, an -out that holds a
// packed study, or a -runtime whose server the go command cannot build (an
// experiment it does not know), named with the go command's own words.
func TestPreflightExitsTwo(t *testing.T) {
	server, _, loadBin := binaries(t)
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	packed := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(packed, record.RunsArchive), nil, 0o644))
	ghz := []string{"-driver", "ghz"}
	tests := []struct {
		name, ghz, out string
		args           []string
		want           string
	}{
		{"missing ghz", "/nonexistent/ghz", t.TempDir(), ghz, "/nonexistent/ghz not found: run `make ghz` first"},
		{"not ghz", loadBin, t.TempDir(), ghz, "is not ghz"},
		{"a packed study as -out", loadBin, packed, ghz, "-out " + packed + " holds a packed study (runs.tar.gz): give a new folder"},
		{"unknown experiment", loadBin, t.TempDir(), []string{"-driver", "go", "-load", loadBin, "-runtime", "local,local+bogusexperiment"},
			"-runtime local+bogusexperiment: cannot build the server (GOTOOLCHAIN=local GOEXPERIMENT=bogusexperiment go build github.com/locklab/locklab): " +
				"exit status 2: go: unknown GOEXPERIMENT bogusexperiment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := os.ReadDir(tt.out)
			require.NoError(t, err)
			args := append([]string{"-workloads", "counter", "-reps", "1", "-server", server, "-out", tt.out}, tt.args...)
			cmd := exec.Command(os.Args[0], args...) // main, through TestMain
			cmd.Dir = root                           // ghz reads proto/ from the repository's root
			cmd.Env = append(os.Environ(), "GHZ="+tt.ghz, runMainEnv+"=1")
			got, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "want an exit status, got %v: %s", err, got)
			assert.Equal(t, 2, ee.ExitCode())
			assert.Contains(t, string(got), tt.want)
			after, err := os.ReadDir(tt.out)
			require.NoError(t, err)
			assert.Len(t, after, len(before), "nothing ran")
		})
	}
}
