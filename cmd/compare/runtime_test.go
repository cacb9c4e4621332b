package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
)

// TestCompareRuntimesEndToEnd builds the real server a second time, with
// GOEXPERIMENT=nogreenteagc on the go command's own toolchain (nothing to
// download), and runs both servers in the same blocks: meta.json records
// each binary's `go version -m`, every record its runtime and the
// GOMAXPROCS its two processes were given, and the report compares each
// design across the runtimes. The first build of the experiment compiles
// the standard library again; the go command's cache keeps it after.
func TestCompareRuntimesEndToEnd(t *testing.T) {
	server, _, loadBin := binaries(t)
	out := t.TempDir()
	cmd, err := parseFlags([]string{
		"-driver", "go", "-workloads", "counter", "-modes", "mutex,inputQ", "-vus", "2",
		"-duration", "1s", "-warmup", "0", "-reps", "1", "-aa=false", "-max-foreign", "100%",
		"-runtime", "local,local+nogreenteagc",
		"-server", server, "-load", loadBin, "-out", out,
	}, os.Stderr)
	require.NoError(t, err)
	cmd.cfg.Command = "compare (test)"
	var progress strings.Builder
	require.NoError(t, cmd.run(t.Context(), &progress, &progress), progress.String())
	built := filepath.Join(filepath.Dir(server), "runtime", "local+nogreenteagc", "locklab")
	assert.Contains(t, progress.String(), "runtime local+nogreenteagc: "+built+" ("+runtime.Version()+"-X:nogreenteagc)")

	meta, records, err := record.LoadDir(out)
	require.NoError(t, err)
	require.Len(t, meta.Runtimes, 2)
	local, exp := meta.Runtimes[0], meta.Runtimes[1]
	assert.Equal(t, server, local.Binary)
	assert.Equal(t, runtime.Version(), local.Version(), "the -server binary, as make build made it")
	assert.NotContains(t, local.BuildInfo, "GOEXPERIMENT")
	assert.Equal(t, built, exp.Binary)
	assert.Contains(t, exp.Version(), "X:nogreenteagc")
	assert.Contains(t, exp.BuildInfo, "\tbuild\tGOEXPERIMENT=nogreenteagc")

	require.Len(t, records, 4, "two designs on two runtimes in the one block")
	seen := map[string]int{}
	for _, r := range records {
		assert.Empty(t, r.Problems, r.ID)
		seen[r.Factors.Get(plan.Runtime)]++
		want := func(cpus []int) int {
			if len(cpus) == 0 {
				return runtime.NumCPU()
			}
			return len(cpus)
		}
		assert.Equal(t, want(r.ServerProc.CPUs), r.ServerProc.GOMAXPROCS, r.ID)
		assert.Equal(t, want(r.DriverProc.CPUs), r.DriverProc.GOMAXPROCS, r.ID)
	}
	assert.Equal(t, map[string]int{"local": 2, "local+nogreenteagc": 2}, seen)
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "## counter · go driver · work 0s, durability none, skew 0, read ratio default, server CPUs half, attribution off, runtime local+nogreenteagc")
	assert.Contains(t, string(md), "| inputQ | inputQ, runtime local |", "each design against itself on the first runtime")
}
