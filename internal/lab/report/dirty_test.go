package report

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/record"
)

const (
	dirtyLine = "> **Warning:** made from a working tree with uncommitted changes: locklab commit "
	dirtyPage = "<body>\n<p role=\"alert\" style=\"border:3px solid #222;padding:0.5rem 0.8rem;font-weight:bold\">Warning: made from a working tree with uncommitted changes"
)

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
		rep, err := New(meta, runs, testLab.Parts...)
		require.NoError(t, err)
		page, err := rep.HTML()
		require.NoError(t, err)
		first := func(s string) string { line, _, _ := strings.Cut(s, "\n"); return line }
		if dirty {
			assert.True(t, strings.HasPrefix(rep.Markdown(), dirtyLine+"a29ec72 is not the whole of the code"), first(rep.Markdown()))
			body := page[strings.Index(page, "<body>"):]
			assert.True(t, strings.HasPrefix(body, dirtyPage), body[:200])
			continue
		}
		assert.True(t, strings.HasPrefix(rep.Markdown(), "# locklab comparison: "), first(rep.Markdown()))
		for _, p := range []string{rep.Markdown(), page} {
			assert.NotContains(t, p, "Warning")
			assert.NotContains(t, p, "uncommitted")
		}
	}
}
