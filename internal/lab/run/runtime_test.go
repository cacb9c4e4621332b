package run

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
)

// fakeGo is a go command for the runner's builds, put first on PATH: its
// "server" is a script that names the toolchain and the experiments it was
// built with, and `go version -m` reads them back. It refuses an
// experiment named bogus as the real one does, and builds its own version
// whatever go1.30.0 asks, as a go command too old for GOTOOLCHAIN would.
const fakeGo = `#!/bin/sh
case "$1" in
build)
	case ",$GOEXPERIMENT," in *,bogus,*) echo "go: unknown GOEXPERIMENT bogus" >&2; exit 2;; esac
	v=$GOTOOLCHAIN
	case "$v" in local|go1.30.0) v=go1.26.8;; esac
	if [ -n "$GOEXPERIMENT" ]; then v="$v X:$GOEXPERIMENT"; fi
	printf '#!/bin/sh\n# %s\n# GOEXPERIMENT=%s\n' "$v" "$GOEXPERIMENT" > "$3"
	chmod +x "$3"
	;;
version)
	[ -f "$3" ] || { echo "$3: no such file" >&2; exit 1; }
	printf '%s: %s\n\tpath\tgithub.com/locklab/locklab\n\tbuild\t%s\n' "$3" "$(sed -n 2p "$3" | cut -c3-)" "$(sed -n 3p "$3" | cut -c3-)"
	;;
*)
	echo "fake go: $*" >&2; exit 1
	;;
esac
`

// withFakeGo puts fakeGo first on PATH for the test.
func withFakeGo(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go"), []byte(fakeGo), 0o755))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestRuntimesBuildOneServerEach: two runtimes build two servers, each
// with its own toolchain and experiments, beside -server; every run starts
// its runtime's binary; meta.json records each binary's `go version -m`,
// the records their runtime, and the report compares the designs on each
// runtime and each design across them.
func TestRuntimesBuildOneServerEach(t *testing.T) {
	withFakeGo(t)
	bin := filepath.Join(t.TempDir(), "bin")
	cfg := testConfig(t, func(o *Options) {
		o.Workloads, o.Modes, o.Drivers, o.VUs, o.Reps = "counter", "mutex,inputQ", "go", "10", 3
		o.Factors = map[string]string{plan.Runtime: "go1.26.8,go1.27.3+nogreenteagc"}
		o.Server = filepath.Join(bin, "locklab")
	})
	builds, err := buildRuntimes(cfg)
	require.NoError(t, err)
	require.Len(t, builds, 2)
	old, next := builds[0], builds[1]
	assert.Equal(t, filepath.Join(bin, "runtime", "go1.26.8", "locklab"), old.Binary)
	assert.Equal(t, filepath.Join(bin, "runtime", "go1.27.3+nogreenteagc", "locklab"), next.Binary)
	assert.Equal(t, "go1.26.8", old.Version())
	assert.Equal(t, "go1.27.3 X:nogreenteagc", next.Version())
	assert.Equal(t, []string{"go1.27.3", "nogreenteagc"}, []string{next.Toolchain, next.Experiments})
	assert.Contains(t, next.BuildInfo, "build\tGOEXPERIMENT=nogreenteagc")
	a, err := os.ReadFile(old.Binary)
	require.NoError(t, err)
	b, err := os.ReadFile(next.Binary)
	require.NoError(t, err)
	assert.NotEqual(t, a, b, "two binaries")
	cfg.Builds = builds

	p := &fakeProcs{admin: &fakeAdmin{}}
	var runs []*record.Run
	for i, spec := range layout(cfg) {
		p.applied, p.acked = int64(500+7*i), int64(500+7*i)
		rec, err := runOne(t.Context(), cfg, p, spec, t.TempDir())
		require.NoError(t, err)
		want := old.Binary
		if spec.Factors.Get(plan.Runtime) == "go1.27.3+nogreenteagc" {
			want = next.Binary
		}
		assert.Equal(t, want, p.bins[len(p.bins)-1], "%s starts its runtime's server", spec.ID)
		runs = append(runs, rec)
	}
	require.Len(t, runs, 3*2*2)
	rb, err := json.Marshal(runs[0])
	require.NoError(t, err)
	assert.Contains(t, string(rb), `"runtime":"`+runs[0].Factors.Get(plan.Runtime)+`"`, "the record names its runtime")

	meta := newMeta(cfg, nil)
	mb, err := json.Marshal(meta)
	require.NoError(t, err)
	var back record.Meta
	require.NoError(t, json.Unmarshal(mb, &back))
	assert.Equal(t, builds, back.Runtimes, "meta.json has both builds")
	assert.Equal(t, []string{"go1.26.8", "go1.27.3+nogreenteagc"}, back.Factors.Values(plan.Runtime))

	rep, err := report.New(meta, runs)
	require.NoError(t, err)
	md := rep.Markdown()
	assert.Contains(t, md, "factors: work 0s, durability none, skew 0, read ratio default, server CPUs half, attribution off, runtime go1.26.8, go1.27.3+nogreenteagc;")
	assert.Contains(t, md, "server runtimes go1.26.8 (go1.26.8), go1.27.3+nogreenteagc (go1.27.3 X:nogreenteagc)")
	assert.Contains(t, md, "## counter · go driver · work 0s, durability none, skew 0, read ratio default, server CPUs half, attribution off, runtime go1.27.3+nogreenteagc")
	for _, mode := range []string{"mutex", "inputQ"} {
		assert.Contains(t, md, "| counter · go · runtime go1.27.3+nogreenteagc · 10 callers | "+mode+" | "+mode+", runtime go1.26.8 | ",
			"each design against itself on the first runtime")
	}
	assert.Contains(t, md, "| counter · go · runtime go1.26.8 · 10 callers | inputQ | mutex |", "the designs compared on each runtime")
	assert.Contains(t, md, "| counter · go · runtime go1.27.3+nogreenteagc · 10 callers | inputQ | mutex |")
	assert.NotContains(t, md, "| counter · go · runtime go1.26.8 · 10 callers | mutex | mutex, runtime", "the first runtime is the reference")
	assert.Contains(t, md, "each design on every other runtime against itself on runtime go1.26.8")
}

// TestRuntimeThatCannotBeBuilt: a value the go command cannot build stops
// the comparison before any run, with the go command's own words; a go
// command that builds another toolchain than the one asked is caught.
func TestRuntimeThatCannotBeBuilt(t *testing.T) {
	withFakeGo(t)
	tests := []struct{ runtimes, want string }{
		{"go1.26.8,go1.26.8+bogus", "-runtime go1.26.8+bogus: cannot build the server (GOTOOLCHAIN=go1.26.8 GOEXPERIMENT=bogus go build github.com/locklab/locklab): exit status 2: go: unknown GOEXPERIMENT bogus"},
		{"go1.30.0", `-runtime go1.30.0: asked GOTOOLCHAIN=go1.30.0, the go command built "go1.26.8"`},
	}
	for _, tt := range tests {
		t.Run(tt.runtimes, func(t *testing.T) {
			cfg := testConfig(t, func(o *Options) {
				o.Factors = map[string]string{plan.Runtime: tt.runtimes}
				o.Server = filepath.Join(t.TempDir(), "locklab")
			})
			_, err := buildRuntimes(cfg)
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
			_, _, err = prepare(cfg)
			assert.ErrorContains(t, err, tt.want, "the prologue of every study stops there")
		})
	}
	cfg := testConfig(t, func(o *Options) {
		o.Factors = map[string]string{plan.Runtime: "go1.26.8+nogreenteagc"}
		o.Server = filepath.Join(t.TempDir(), "locklab")
	})
	builds, err := buildRuntimes(cfg)
	require.NoError(t, err, "the control: a good experiment builds")
	assert.True(t, strings.HasSuffix(builds[0].Version(), "X:nogreenteagc"))
}

// TestDefaultRuntimeBuildsNothing: without -runtime the runs start the
// -server binary, as they always did, and nothing is built.
func TestDefaultRuntimeBuildsNothing(t *testing.T) {
	withFakeGo(t)
	dir := t.TempDir()
	cfg := testConfig(t, func(o *Options) { o.Server = filepath.Join(dir, "locklab") })
	builds, err := buildRuntimes(cfg)
	require.NoError(t, err)
	require.Len(t, builds, 1)
	assert.Equal(t, record.RuntimeBuild{Runtime: plan.RuntimeLocal, Binary: cfg.Server}, builds[0], "a -server go cannot read: recorded without its build")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing built")
	cfg.Builds = builds
	bin, err := cfg.serverFor(layout(cfg)[0].Factors)
	require.NoError(t, err)
	assert.Equal(t, cfg.Server, bin)
	_, err = cfg.serverFor(plan.DefaultPoint().With(plan.Runtime, "go1.27.3"))
	assert.ErrorContains(t, err, "-runtime go1.27.3: no server was built for it")
}
