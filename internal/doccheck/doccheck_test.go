package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/run"
	"github.com/locklab/locklab/store"
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

// TestRepository is the check itself: every link, anchor, § reference and
// quoted document path in the repository resolves.
func TestRepository(t *testing.T) {
	probs, err := Check(os.DirFS(repoRoot(t)))
	require.NoError(t, err)
	for _, p := range probs {
		t.Error(p)
	}
}

// TestCheckCatchesDeadReferences is the control: a small tree with one
// reference of each kind that resolves and one that does not. Only the
// planted dead ones may be reported, each once.
func TestCheckCatchesDeadReferences(t *testing.T) {
	fsys := fstest.MapFS{
		"README.md": {Data: []byte(strings.Join([]string{
			"# Top",
			"See [design](docs/design.md), [its API](docs/design.md#the-api), [here](#top) and [web](https://example.com/x.md).",
			"Dead: [gone](docs/gone.md).",
			"Dead anchor: [api](docs/design.md#no-such-heading).",
			"Dead own anchor: [x](#nowhere).",
			"Section: docs/design.md §the-api and `docs/design.md` §The-API, own §top.",
			"Dead section: docs/design.md §nothing-here.",
			"A dead document: GONE.md §intro.",
			"Prose about the sign: a § alone names nothing.",
			"Quoted: `docs/design.md`, `docs/results/`, `report.md`, `results/<timestamp>/report.md`.",
			"Dead quoted: `docs/results/store.md`.",
			"In a code span, no link: `[x](nowhere.md)`.",
			"```",
			"[fenced](nowhere.md) §fenced",
			"```",
			"[ref]: docs/design.md#repeated-1",
			"[deadref]: docs/missing.md",
		}, "\n"))},
		"docs/design.md": {Data: []byte(strings.Join([]string{
			"# Design",
			"## The API",
			`<a id="explicit"></a>`,
			"## Repeated",
			"## Repeated",
			"Back to [top](../README.md#top), [explicit](#explicit), [dead](../README.md#bottom).",
		}, "\n"))},
		"docs/results/README.md": {Data: []byte("[up](../design.md) [dead up](../../docs/nope.md)\n")},
		"main.go": {Data: []byte(strings.Join([]string{
			"// The API is in docs/design.md §the-api.",
			"// Dead: docs/design.md §gone.",
			"// No document: see §3.",
		}, "\n"))},
		"notes/other.md": {Data: []byte("[not checked](nowhere.md)\n")},
		"bin/tool.go":    {Data: []byte("// §not-walked\n")},
	}
	probs, err := Check(fsys)
	require.NoError(t, err)
	var got []string
	for _, p := range probs {
		got = append(got, p.File+":"+p.Ref)
	}
	assert.ElementsMatch(t, []string{
		"README.md:docs/gone.md",
		"README.md:docs/design.md#no-such-heading",
		"README.md:#nowhere",
		"README.md:docs/design.md §nothing-here",
		"README.md:GONE.md §intro",
		"README.md:`docs/results/store.md`",
		"README.md:docs/missing.md",
		"docs/design.md:../README.md#bottom",
		"docs/results/README.md:../../docs/nope.md",
		"main.go:docs/design.md §gone",
		"main.go:§3",
	}, got)
	for _, p := range probs {
		assert.NotEmpty(t, p.Why, "%s", p)
		assert.Positive(t, p.Line, "%s", p)
	}
}

// TestSlug follows GitHub's anchors for headings like the repository's.
func TestSlug(t *testing.T) {
	tests := []struct{ heading, want string }{
		{"The API", "the-api"},
		{"The store library (`store/`)", "the-store-library-store"},
		{"bank-A · k6 driver · work 0s, durability none", "bank-a--k6-driver--work-0s-durability-none"},
		{"The summary: `locklab.load-summary/v1`", "the-summary-locklabload-summaryv1"},
		{"Use [the designs](x.md) on your own state", "use-the-designs-on-your-own-state"},
		{"snake_case and Ünïcode", "snake_case-and-ünïcode"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Slug(tt.heading), tt.heading)
	}
}

// TestAnchorsNumberRepeats: a repeated heading's anchors are -1, -2, ...
func TestAnchorsNumberRepeats(t *testing.T) {
	as := Anchors([]string{"# A", "## A", "### A", "not # a heading", "#nospace"})
	assert.Equal(t, map[string]bool{"a": true, "a-1": true, "a-2": true}, as)
}

// TestDesignDocNamesEveryDesign: docs/design.md's table of designs has a row
// for every design of the registry, so a new design cannot go undocumented.
func TestDesignDocNamesEveryDesign(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "design.md"))
	require.NoError(t, err)
	for _, name := range store.DesignNames() {
		assert.Contains(t, string(b), "\n| `"+name+"` |", "docs/design.md has no row for design %q", name)
	}
}

// TestRunDocNamesEveryDriver: package run's comment lists the drivers behind
// its Driver interface, the list Drivers holds, in its order. The control:
// the comment as it was before ghz joined the list does not pass.
func TestRunDocNamesEveryDriver(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "internal", "lab", "run", "doc.go"))
	require.NoError(t, err)
	assert.Equal(t, run.DriverNames(), driversNamed(string(b)), "internal/lab/run/doc.go")
	old := "// drives it with one of the drivers (one file\n// each behind the Driver interface: go, k6, h2load), samples both"
	assert.NotEqual(t, run.DriverNames(), driversNamed(old), "the control")
}

// driversNamed reads the list after "behind the Driver interface ...:" in a
// Go comment, up to the closing parenthesis.
func driversNamed(comment string) []string {
	text := strings.Join(strings.Fields(strings.ReplaceAll(comment, "//", " ")), " ")
	m := regexp.MustCompile(`behind the Driver interface[^:)]*: ([^)]*)\)`).FindStringSubmatch(text)
	if m == nil {
		return nil
	}
	return strings.Split(m[1], ", ")
}
