package report

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/record"
)

const dirtyLine = "> **Warning:** made from a working tree with uncommitted changes: locklab commit "

// A report made from a dirty tree says so in its first line, in both
// renderings (the golden files hold the whole of it); a clean one opens
// with its title.
func TestDirtyTreeWarning(t *testing.T) {
	meta, err := record.LoadMeta(os.DirFS("testdata/results"))
	require.NoError(t, err)
	_, runs, err := record.LoadDir("testdata/results")
	require.NoError(t, err)
	require.True(t, meta.GitDirty, "the fixture was made from a dirty tree")

	for _, dirty := range []bool{true, false} {
		meta.GitDirty = dirty
		rep, err := New(meta, runs)
		require.NoError(t, err)
		page, err := rep.HTML()
		require.NoError(t, err)
		cm, cc, cr := capFixture()
		cm.GitCommit, cm.GitDirty = "a29ec72", dirty
		capRep, err := NewCapacity(cm, cc, cr)
		require.NoError(t, err)
		capPage, err := capRep.HTML()
		require.NoError(t, err)
		first := func(s string) string { line, _, _ := strings.Cut(s, "\n"); return line }
		if dirty {
			assert.True(t, strings.HasPrefix(rep.Markdown(), dirtyLine+"a29ec72 is not the whole of the code"), first(rep.Markdown()))
			assert.True(t, strings.HasPrefix(capRep.Markdown(), dirtyLine+"a29ec72"), first(capRep.Markdown()))
			for _, p := range []string{page, capPage} {
				body := p[strings.Index(p, "<body>"):]
				assert.True(t, strings.HasPrefix(body, "<body>\n<p role=\"alert\" style=\"border:3px solid #222;padding:0.5rem 0.8rem;font-weight:bold\">Warning: made from a working tree with uncommitted changes"), body[:200])
			}
			continue
		}
		assert.True(t, strings.HasPrefix(rep.Markdown(), "# locklab comparison: "), first(rep.Markdown()))
		assert.True(t, strings.HasPrefix(capRep.Markdown(), "# locklab capacity study\n"), first(capRep.Markdown()))
		assert.Contains(t, capRep.Markdown(), "from locklab commit a29ec72.", "the capacity report names its commit")
		for _, p := range []string{rep.Markdown(), page, capRep.Markdown(), capPage} {
			assert.NotContains(t, p, "Warning")
			assert.NotContains(t, p, "uncommitted")
		}
	}
}
