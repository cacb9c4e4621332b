package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/duet"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
)

// fakeGo is a go command for the runner's runtime builds, first on PATH in
// a test: `go build -o OUT` writes OUT as a script that names the
// toolchain and experiments it was built with in the go command's own
// words, notes each start in a log and execs the real server; `go version
// -m` of such a script reads them back, and of any other file is the real
// go command's. The servers the runs start are real, with no compiler run:
// a real GOEXPERIMENT build compiles the standard library again (minutes
// on two CPUs). It refuses an experiment named bogus as the real one does.
const fakeGo = `#!/bin/sh
real=%[1]q server=%[2]q starts=%[3]q
case "$1" in
build)
	case ",$GOEXPERIMENT," in *,bogus,*) echo "go: unknown GOEXPERIMENT bogus" >&2; exit 2;; esac
	v=$GOTOOLCHAIN
	[ "$v" = local ] && v=%[4]s
	[ -n "$GOEXPERIMENT" ] && v="$v-X:$GOEXPERIMENT"
	printf '#!/bin/sh\n# %%s\n# GOEXPERIMENT=%%s\necho "$0" >> "%%s"\nexec "%%s" "$@"\n' "$v" "$GOEXPERIMENT" "$starts" "$server" > "$3"
	chmod +x "$3"
	;;
version)
	if [ "$(head -c 2 "$3")" != "#!" ]; then exec "$real" "$@"; fi
	printf '%%s: %%s\n\tpath\tgithub.com/locklab/locklab\n\tbuild\t%%s\n' "$3" "$(sed -n 2p "$3" | cut -c3-)" "$(sed -n 3p "$3" | cut -c3-)"
	;;
*)
	exec "$real" "$@"
	;;
esac
`

// withFakeGo puts fakeGo first on PATH for the test, its servers exec'ing
// server; starts is the log of their starts, one line each.
func withFakeGo(t *testing.T, server string) (starts string) {
	t.Helper()
	real, err := exec.LookPath("go")
	require.NoError(t, err)
	dir := t.TempDir()
	starts = filepath.Join(dir, "starts.log")
	script := fmt.Sprintf(fakeGo, real, server, starts, runtime.Version())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go"), []byte(script), 0o755))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return starts
}

// TestCompareRuntimesEndToEnd builds a second server for
// local+nogreenteagc with a fake go command (fakeGo) and runs both in the
// same blocks, real servers measured by the real Go driver: meta.json
// records each binary's `go version -m`, every record its runtime and the
// GOMAXPROCS its two processes were given, the runs of the second runtime
// start its binary, and the report compares each design across the
// runtimes. A real GOEXPERIMENT build is make study NAME=runtimes' own; the bad
// experiment's exit status 2 is TestPreflightExitsTwo's, with the real go
// command.
func TestCompareRuntimesEndToEnd(t *testing.T) {
	server, _, loadBin := binaries(t)
	starts := withFakeGo(t, server)
	out := t.TempDir()
	progress := runCompare(t,
		"-measure", "isolated", "-driver", "go", "-workloads", "counter", "-modes", "mutex,inputQ", "-vus", "2",
		"-duration", "1s", "-warmup", "0", "-reps", "1", "-aa=false", "-max-foreign", "100%",
		"-runtime", "local,local+nogreenteagc",
		"-server", server, "-load", loadBin, "-out", out,
	)
	built := filepath.Join(filepath.Dir(server), "runtime", "local+nogreenteagc", "locklab")
	assert.Contains(t, progress, "runtime local+nogreenteagc: "+built+" ("+runtime.Version()+"-X:nogreenteagc)")
	a, err := os.ReadFile(server)
	require.NoError(t, err)
	b, err := os.ReadFile(built)
	require.NoError(t, err)
	assert.NotEqual(t, a, b, "two binaries")

	meta, records, err := record.LoadDir(out)
	require.NoError(t, err)
	require.Len(t, meta.Runtimes, 2)
	local, exp := meta.Runtimes[0], meta.Runtimes[1]
	assert.Equal(t, server, local.Binary)
	assert.Equal(t, runtime.Version(), local.Version(), "the -server binary, as make build made it, read by the real go command")
	assert.Contains(t, local.BuildInfo, "\tmod\tgithub.com/locklab/locklab", "the real go command's build information")
	assert.NotContains(t, local.BuildInfo, "GOEXPERIMENT")
	assert.Equal(t, built, exp.Binary)
	assert.Contains(t, exp.Version(), "X:nogreenteagc")
	assert.Contains(t, exp.BuildInfo, "\tbuild\tGOEXPERIMENT=nogreenteagc")

	require.Len(t, records, 4, "two designs on two runtimes in the one block")
	seen := map[string]int{}
	for _, r := range records {
		assert.Empty(t, r.Problems, r.ID)
		assert.Positive(t, r.Result.Calls, r.ID)
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
	b, err = os.ReadFile(starts)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat(built+"\n", seen["local+nogreenteagc"]), string(b), "each run of the second runtime started its binary, and only those")
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "## counter · go driver · work 0s, durability none, skew 0, read ratio default, server CPUs half, attribution off, runtime local+nogreenteagc")
	assert.Contains(t, string(md), "| inputQ | inputQ, runtime local |", "each design against itself on the first runtime")
}

// TestDuetRuntimesEndToEnd: side by side, every design of a group is built
// by each release and runs in the same rounds; a design built by the
// second is judged against itself built by the first, and the twin, the
// known answer and noop are the first release's alone. Each round starts
// the second release's binary once per design, and only for those arms;
// duet.json keeps each binary's `go version -m`.
func TestDuetRuntimesEndToEnd(t *testing.T) {
	server, _, loadBin := binaries(t)
	starts := withFakeGo(t, server)
	out := t.TempDir()
	runCompare(t,
		"-measure", "duet", "-driver", "go", "-workloads", "counter", "-modes", "mutex,inputQ,noop", "-vus", "2",
		"-warmup", "200ms", "-reps", "3", "-precision", "0", "-max-foreign", "100%",
		"-runtime", "local,local+nogreenteagc",
		"-server", server, "-load", loadBin, "-out", out,
	)
	built := filepath.Join(filepath.Dir(server), "runtime", "local+nogreenteagc", "locklab")

	var meta struct {
		Groups   map[string][]duet.Arm `json:"groups"`
		Runtimes []record.RuntimeBuild `json:"runtimes"`
	}
	b, err := os.ReadFile(filepath.Join(out, "duet.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &meta))
	require.Len(t, meta.Groups, 1, "one group: the release is an arm of it")
	var names []string
	for _, arms := range meta.Groups {
		for _, a := range arms {
			names = append(names, a.Name)
			if strings.HasSuffix(a.Name, " · local+nogreenteagc") {
				assert.Equal(t, duet.RoleDesign, a.Role, a.Name)
				assert.Equal(t, a.Mode, a.Against, "%s: against itself built by the first release", a.Name)
			}
		}
	}
	assert.ElementsMatch(t, []string{"mutex", "mutex (A/A)", "mutex +2µs", "inputQ", "noop", "mutex · local+nogreenteagc", "inputQ · local+nogreenteagc"}, names)
	require.Len(t, meta.Runtimes, 2)
	assert.Contains(t, meta.Runtimes[1].BuildInfo, "GOEXPERIMENT=nogreenteagc")

	// The probe round and 3 rounds, each starting the second release's
	// two designs.
	s, err := os.ReadFile(starts)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat(built+"\n", 2*4), string(s), "each round started the second release's binary for its two arms, and only those")
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "| inputQ · local+nogreenteagc (against inputQ) | calls/s |")
	assert.Contains(t, string(md), "| mutex · local+nogreenteagc | calls/s |", "against the baseline: nothing to say")
	assert.Contains(t, string(md), "every design built by each Go release")
}
