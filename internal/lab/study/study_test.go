package study

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/seeds"
)

// TestCatalogueChecks: the catalogue passes its own check, and the check
// catches each kind of bad row (the controls).
func TestCatalogueChecks(t *testing.T) {
	require.NoError(t, Check(Studies))
	bad := []struct {
		name string
		edit func(*Study)
	}{
		{"a name twice", func(s *Study) { s.Name = Studies[0].Name }},
		{"a reserved name", func(s *Study) { s.Name = Reserved[0] }},
		{"a name of two words", func(s *Study) { s.Name = "two words" }},
		{"an unknown engine", func(s *Study) { s.Engine = "soak" }},
		{"no plan", func(s *Study) { s.Plans = nil }},
		{"a seeds step on the runner", func(s *Study) { s.SeedArgs = "ladder -in {out}" }},
		{"another's folder", func(s *Study) { s.Out = Studies[0].Out; s.Plans = Studies[0].Plans }},
		{"no description", func(s *Study) { s.Desc = "" }},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			row := Study{Name: "scratch", Engine: Runner, Plans: []Plan{{Args: "-reps 1"}}, Out: "scratch", Desc: "a row of a test"}
			require.NoError(t, Check(append(slices.Clone(Studies), row)), "the row as it is")
			tt.edit(&row)
			assert.Error(t, Check(append(slices.Clone(Studies), row)))
		})
	}
}

// TestLookup: a study by name; a wrong name is ErrUnknown, naming them all.
func TestLookup(t *testing.T) {
	for _, s := range Studies {
		got, err := Lookup(Studies, s.Name)
		require.NoError(t, err)
		assert.Equal(t, s.Name, got.Name)
	}
	_, err := Lookup(Studies, "nope")
	assert.ErrorIs(t, err, ErrUnknown)
	for _, name := range Names(Studies) {
		assert.Contains(t, err.Error(), name)
	}
}

// TestEverySeedIsAStudy: each seed of internal/lab/seeds is the row
// seed-<name>, run by the seed engine into its folder.
func TestEverySeedIsAStudy(t *testing.T) {
	for _, sd := range seeds.Seeds {
		s, err := Lookup(Studies, "seed-"+sd.Name)
		if assert.NoError(t, err, sd.Name) {
			assert.Equal(t, Seed, s.Engine)
			assert.Equal(t, seeds.Dir+"/"+sd.Name, s.Root())
		}
	}
}

// TestEveryResultsFolderIsAStudy: every folder under docs/results that a
// runner or a seed wrote (its meta.json) is a plan's folder or a seed's of
// some row, so the index misses none; and every row's pages exist. The
// control: a folder no row names is caught.
func TestEveryResultsFolderIsAStudy(t *testing.T) {
	root := "../../.."
	var folders []string
	err := filepath.WalkDir(filepath.Join(root, Dir), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "meta.json" {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			folders = append(folders, filepath.ToSlash(rel))
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, folders)
	assert.Empty(t, orphans(Studies, folders))
	assert.Equal(t, []string{Dir + "/soak"}, orphans(Studies, append(folders, Dir+"/soak")), "the control")
	for _, s := range Studies {
		for _, p := range s.Pages() {
			assert.FileExists(t, filepath.Join(root, Dir, p), s.Name)
		}
	}
}

// orphans are the folders no row of studies writes.
func orphans(studies []Study, folders []string) []string {
	var out []string
	for _, f := range folders {
		if !slices.ContainsFunc(studies, func(s Study) bool {
			return f == s.Root() || slices.ContainsFunc(s.Plans, func(p Plan) bool { return f == s.Folder(p) })
		}) {
			out = append(out, f)
		}
	}
	return out
}

// TestDescriptionsStateOnlyTheirPlans: a figure in a row's description is
// one its plans give (no number typed beside the plan that owns it). The
// control: a figure the plans do not give is caught.
func TestDescriptionsStateOnlyTheirPlans(t *testing.T) {
	for _, s := range Studies {
		assert.Empty(t, unplannedFigures(s), s.Name)
	}
	s, err := Lookup(Studies, "crossover")
	require.NoError(t, err)
	s.Desc = strings.Replace(s.Desc, "2 server CPUs", "4 server CPUs", 1)
	assert.Equal(t, []string{"4"}, unplannedFigures(s), "the control")
}

var figure = regexp.MustCompile(`[0-9]+(?:\.[0-9]+)?`)

// unplannedFigures are the numbers of s's description that none of its
// plans' or its seeds step's arguments holds.
func unplannedFigures(s Study) []string {
	args := s.SeedArgs
	for _, p := range s.Plans {
		args += " " + p.Args
	}
	given := figure.FindAllString(args, -1)
	var out []string
	for _, f := range figure.FindAllString(regexp.MustCompile(`[A-Za-z]+[0-9]+`).ReplaceAllString(s.Desc, ""), -1) {
		if !slices.Contains(given, f) {
			out = append(out, f)
		}
	}
	return out
}

// TestIndexBlock: WithIndex replaces only the block between the markers,
// and a page without them is refused, unchanged.
func TestIndexBlock(t *testing.T) {
	page := "# Title\n\n" + IndexBegin + "\nold\n" + IndexEnd + "\n\nthe rest\n"
	got, err := WithIndex(page, "new\n")
	require.NoError(t, err)
	assert.Equal(t, "# Title\n\n"+IndexBegin+"\nnew\n"+IndexEnd+"\n\nthe rest\n", got)
	_, err = WithIndex("# Title\n", "new\n")
	assert.True(t, errors.Is(err, ErrNoMarkers))

	dir := t.TempDir()
	p := filepath.Join(dir, "README.md")
	require.NoError(t, os.WriteFile(p, []byte("# no block\n"), 0o644))
	assert.ErrorIs(t, WriteIndex(p, Studies), ErrNoMarkers)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "# no block\n", string(b), "a page without the block is left as it was")
}
