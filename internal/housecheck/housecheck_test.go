package housecheck

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoRoot is the module's root: the nearest directory above the test's own
// that holds go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the test's directory")
		dir = parent
	}
}

// tracked is the repository's tracked files, as the check reads them.
func tracked(t *testing.T) []File {
	t.Helper()
	root := repoRoot(t)
	listing, err := LsFiles(root)
	require.NoError(t, err, "the check needs git and a clone")
	files, err := Tracked(os.DirFS(root), listing)
	require.NoError(t, err)
	require.Greater(t, len(files), 100, "git ls-files listed the repository")
	return files
}

// TestRepository is the check itself: no tracked executable that is not a
// script, no tracked file over Limit but those Exceptions allow.
func TestRepository(t *testing.T) {
	files := tracked(t)
	for _, p := range Check(files) {
		t.Error(p)
	}
	for _, p := range CheckTotal(files) {
		t.Error(p)
	}
	mk, err := os.ReadFile(filepath.Join(repoRoot(t), "Makefile"))
	require.NoError(t, err)
	for _, p := range CheckMakefile(string(mk)) {
		t.Error(p)
	}
}

// TestCheckMakefile: a Makefile of the limit's lines passes, the control
// one line over does not.
func TestCheckMakefile(t *testing.T) {
	at := strings.Repeat("x\n", MakefileLimit)
	assert.Empty(t, CheckMakefile(at))
	probs := CheckMakefile(at + "y")
	require.Len(t, probs, 1)
	assert.Contains(t, probs[0].String(), fmt.Sprintf("Makefile: %d lines, over the %d", MakefileLimit+1, MakefileLimit))
}

// TestCheckTotal: the files under docs/results are counted together, and
// only they; the control is a listing one byte over.
func TestCheckTotal(t *testing.T) {
	at := []File{
		{Path: "docs/results/a/runs.tar.gz", Size: ResultsLimit - 10},
		{Path: "docs/results/README.md", Size: 10},
		{Path: "docs/results.md", Size: 1 << 30}, // not in the folder
		{Path: "big.bin", Size: 1 << 30},
	}
	assert.Empty(t, CheckTotal(at), "exactly the limit")
	over := append(slices.Clone(at), File{Path: "docs/results/b/report.md", Size: 1})
	probs := CheckTotal(over)
	require.Len(t, probs, 1)
	assert.Equal(t, "docs/results: 10000001 bytes tracked together, over the 10000000 the folder may hold (internal/housecheck ResultsLimit): "+
		"make a study's files smaller, or keep them out of git", probs[0].String())
}

// TestCheckCatchesBinariesAndOversizeFiles is the control: a listing as git
// prints it, over a small tree with an executable binary, a file one byte
// over Limit, a report over its exception's bound, and the files that pass
// beside them (a script, a file of exactly Limit bytes, a report its
// exception allows, a link). Only the planted problems may be reported.
func TestCheckCatchesBinariesAndOversizeFiles(t *testing.T) {
	elf := append([]byte("\x7fELF"), make([]byte, 1000)...)
	fsys := fstest.MapFS{
		"compare":                           {Data: elf, Mode: 0o755},
		"big-binary":                        {Data: append(elf, make([]byte, Limit)...), Mode: 0o755},
		"k6/e2e.sh":                         {Data: []byte("#!/usr/bin/env bash\necho ok\n"), Mode: 0o755},
		"empty-but-executable":              {Data: nil, Mode: 0o755},
		"big.json":                          {Data: bytes.Repeat([]byte("x"), Limit+1)},
		"edge.txt":                          {Data: bytes.Repeat([]byte("x"), Limit)},
		"docs/results/a/b/runs.tar.gz":      {Data: bytes.Repeat([]byte("x"), Limit+1)},
		"docs/results/huge/runs.2.tar.gz":   {Data: bytes.Repeat([]byte("x"), 1<<20+1)},
		"docs/results/runs.tar.gz":          {Data: bytes.Repeat([]byte("x"), Limit+1)}, // ** matches no folder too
		"docs/notes/runs.tar.gz":            {Data: bytes.Repeat([]byte("x"), Limit+1)}, // not under docs/results
		"docs/results/study1/capacity.json": {Data: bytes.Repeat([]byte("x"), 300<<10)},
		"link":                              {Data: bytes.Repeat([]byte("x"), Limit+1), Mode: 0o777 | os.ModeSymlink},
	}
	var listing bytes.Buffer
	for _, e := range []struct{ mode, path string }{
		{"100755", "big-binary"},
		{"100755", "compare"},
		{"100644", "docs/notes/runs.tar.gz"},
		{"100644", "docs/results/a/b/runs.tar.gz"},
		{"100644", "docs/results/huge/runs.2.tar.gz"},
		{"100644", "docs/results/runs.tar.gz"},
		{"100644", "docs/results/study1/capacity.json"},
		{"100644", "edge.txt"},
		{"100644", "big.json"},
		{"100644", "big.json"}, // a conflicted file is listed once per stage
		{"100644", "deleted-in-the-working-tree"},
		{"100755", "empty-but-executable"},
		{"100755", "k6/e2e.sh"},
		{"120000", "link"},
		{"160000", "submodule"},
	} {
		fmt.Fprintf(&listing, "%s 0123456789abcdef0123456789abcdef01234567 0\t%s\x00", e.mode, e.path)
	}
	files, err := Tracked(fsys, listing.Bytes())
	require.NoError(t, err)
	require.Len(t, files, 13, "every path once, the deleted one left out")

	var got []string
	for _, p := range Check(files) {
		assert.NotEmpty(t, p.Why)
		kind := "size"
		if strings.Contains(p.Why, "executable") {
			kind = "executable"
		}
		got = append(got, p.Path+" "+kind)
	}
	assert.Equal(t, []string{
		"big-binary executable",
		"big-binary size",
		"compare executable",
		"docs/notes/runs.tar.gz size",
		"docs/results/huge/runs.2.tar.gz size",
		"big.json size",
		"empty-but-executable executable",
	}, got)

	probs := Check(files)
	assert.Contains(t, probs[0].String(), "big-binary: executable (mode 100755) but not a script")
	assert.Contains(t, probs[1].String(), "big-binary: 201.0 KB, over the 200 KB limit")
	assert.Contains(t, probs[4].String(), "over the 1024 KB its exception docs/results/**/runs*.tar.gz allows")
}

// TestTrackedRejectsAMalformedListing: a listing the check cannot read is
// an error, not an empty repository.
func TestTrackedRejectsAMalformedListing(t *testing.T) {
	_, err := Tracked(fstest.MapFS{}, []byte("README.md\x00"))
	assert.ErrorContains(t, err, "unexpected entry")
}

// TestMatch: "**" is any number of folders, other elements match as
// path.Match does.
func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"docs/results/**/report.html", "docs/results/default/report.html", true},
		{"docs/results/**/report.html", "docs/results/seeds/ngrinder/after/report.html", true},
		{"docs/results/**/report.html", "docs/results/report.html", true},
		{"docs/results/**/report.html", "docs/report.html", false},
		{"docs/results/**/report.html", "docs/results/default/report.html.golden", false},
		{"docs/results/**/report.html", "docs/results/default/runs/report.md", false},
		{"docs/results/store/store-cpus.png", "docs/results/store/store-cpus.png", true},
		{"docs/results/store/store-cpus.png", "x/docs/results/store/store-cpus.png", false},
		{"docs/*/x.json", "docs/a/x.json", true},
		{"docs/*/x.json", "docs/a/b/x.json", false},
		{"**", "anything/at/all", true},
		{"docs/[/x", "docs/[/x", false}, // malformed
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Match(tt.pattern, tt.path), "%s ~ %s", tt.pattern, tt.path)
	}
}

// TestExceptionsHoldTheirReasons: every exception is well formed, raises
// the limit, says why, and names files the repository tracks: one that
// matches nothing any more is left over, and goes.
func TestExceptionsHoldTheirReasons(t *testing.T) {
	files := tracked(t)
	for _, e := range Exceptions {
		for _, elem := range strings.Split(e.Pattern, "/") {
			_, err := path.Match(elem, "")
			assert.NoError(t, err, "%s", e.Pattern)
		}
		assert.Greater(t, e.Max, int64(Limit), "%s: an exception raises the limit", e.Pattern)
		assert.NotEmpty(t, strings.TrimSpace(e.Why), "%s: an exception says why", e.Pattern)
		assert.True(t, slices.ContainsFunc(files, func(f File) bool { return Match(e.Pattern, f.Path) }),
			"exception %s matches no tracked file: remove it", e.Pattern)
		assert.False(t, perStudy(e.Pattern), "%s names one study's files: cut them smaller instead", e.Pattern)
		assert.LessOrEqual(t, e.Max, int64(1<<20), "%s: no committed file over 1 MB", e.Pattern)
	}
}

// TestPerStudy is the control of the check above: a pattern that names a
// study's folder is caught, one that names a kind of file is not.
func TestPerStudy(t *testing.T) {
	tests := []struct {
		pattern string
		want    bool
	}{
		{"docs/results/runtimes/**/runs.tar.gz", true},
		{"docs/results/bank-db/report.md", true},
		{"docs/results/**/default/report.md", true},
		{"docs/results/**/runs*.tar.gz", false},
		{"docs/results/**/*.png", false},
		{"docs/other/big.bin", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, perStudy(tt.pattern), tt.pattern)
	}
}

// TestBuildOutputsIgnored: .gitignore ignores what a bare `go build` and
// `go test` leave behind for the root package and every command under cmd/,
// and nothing the repository tracks, nor a new source beside a tracked one.
func TestBuildOutputsIgnored(t *testing.T) {
	outputs, sources := unignored(t, repoRoot(t))
	assert.Empty(t, outputs, "build outputs .gitignore does not ignore")
	assert.Empty(t, sources, "sources .gitignore hides")
}

// TestBuildOutputsIgnoredControl: a repository whose .gitignore forgets a
// command and hides a package's folder (its name is a command's too) is
// caught on both counts.
func TestBuildOutputsIgnoredControl(t *testing.T) {
	root := t.TempDir()
	for p, data := range map[string]string{
		"go.mod":           "module example.com/tool\n",
		"main.go":          "package main\n",
		"cmd/foo/main.go":  "package main\n",
		"cmd/bar/main.go":  "package main\n",
		"bar/bar.go":       "package bar\n",
		"docs/x/readme.md": "x\n",
	} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte(data), 0o644))
	}
	git(t, root, "init", "-q")
	git(t, root, "add", ".")
	require.NoError(t, os.WriteFile(filepath.Join(root, ".gitignore"), []byte("/bin/\n/tool\n/cmd/foo/foo\n/bar\n*.test\n"), 0o644))

	outputs, sources := unignored(t, root)
	assert.ElementsMatch(t, []string{"foo", "cmd/bar/bar", "cpu.pprof", "cover.out", "__debug_bin123"}, outputs)
	assert.ElementsMatch(t, []string{"bar/bar.go", "bar/new.go"}, sources)
}

// unignored returns the build outputs root's ignore rules let through, and
// the sources they hide. The outputs: the root package's binary and every
// command's (cmd/NAME) at the root, in its own folder and in bin/ (a
// command named as a folder of the root, as cmd/load and load/, lands in
// it: go build refuses to replace a folder, -o writes into it), test
// binaries, profiles, debug builds. The sources: every tracked file and a
// new .go file beside each.
func unignored(t *testing.T, root string) (outputs, sources []string) {
	t.Helper()
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	var module string
	for line := range strings.Lines(string(mod)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			module = path.Base(strings.Trim(f[1], `"`))
		}
	}
	require.NotEmpty(t, module, "go.mod names the module")
	outs := []string{module, "bin/" + module, "locklab.test", "internal/x/x.test", "cpu.pprof", "cover.out", "__debug_bin123"}
	cmds, err := os.ReadDir(filepath.Join(root, "cmd"))
	require.NoError(t, err)
	require.NotEmpty(t, cmds)
	for _, c := range cmds {
		if !c.IsDir() {
			continue
		}
		name := c.Name()
		atRoot := name
		if fi, err := os.Stat(filepath.Join(root, name)); err == nil && fi.IsDir() {
			atRoot = name + "/" + name
		}
		outs = append(outs, atRoot, "cmd/"+name+"/"+name, "bin/"+name)
	}
	var srcs []string
	for _, f := range strings.Split(strings.TrimSuffix(git(t, root, "ls-files", "-z"), "\x00"), "\x00") {
		srcs = append(srcs, f)
		if beside := path.Join(path.Dir(f), "new.go"); !slices.Contains(srcs, beside) {
			srcs = append(srcs, beside)
		}
	}
	require.NotEmpty(t, srcs)

	ignored := checkIgnore(t, root, append(slices.Clone(outs), srcs...))
	for _, o := range outs {
		if !ignored[o] {
			outputs = append(outputs, o)
		}
	}
	for _, s := range srcs {
		if ignored[s] {
			sources = append(sources, s)
		}
	}
	return outputs, sources
}

// checkIgnore asks git which of paths root's rules ignore, whether they
// exist or are tracked or not; the user's own excludes file is left out.
func checkIgnore(t *testing.T, root string, paths []string) map[string]bool {
	t.Helper()
	cmd := exec.Command("git", "-c", "core.excludesFile=/dev/null", "check-ignore", "--no-index", "--stdin", "-z")
	cmd.Dir = root
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\x00") + "\x00")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		err = nil // none ignored
	}
	require.NoError(t, err, "git check-ignore: %s", stderr.String())
	ignored := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			ignored[p] = true
		}
	}
	return ignored
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), stderr.String())
	return string(out)
}
