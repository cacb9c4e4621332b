package report

import (
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/record"
)

// namedPart is a part that adds a heading of its name and a paragraph
// saying whether it drew charts.
type namedPart string

func (p namedPart) Blocks(_ *Report, withCharts bool) []Piece {
	text := "no charts"
	if withCharts {
		text = "with charts"
	}
	return []Piece{Heading(2, string(p)), Para(string(p) + ": " + text)}
}

// TestPartsInTheirOrder: an assembly's parts add their sections after the
// per-level tables and before the list of every run, in the assembly's
// order, to report.md without charts and to report.html with them; the
// control, the zero assembly, renders neither.
func TestPartsInTheirOrder(t *testing.T) {
	meta, err := record.LoadMeta(os.DirFS("testdata/results"))
	require.NoError(t, err)
	_, runs, err := record.LoadDir("testdata/results")
	require.NoError(t, err)
	a := Assembly{Parts: []Part{namedPart("First part"), namedPart("Second part")}}
	rep, err := a.New(meta, runs)
	require.NoError(t, err)
	md := rep.Markdown()
	first, second, every := strings.Index(md, "## First part"), strings.Index(md, "## Second part"), strings.Index(md, "## Every run")
	lastTable := strings.LastIndex(md[:every], "### ")
	require.Positive(t, first)
	assert.Less(t, lastTable, first, "after the per-level tables")
	assert.Less(t, first, second, "in the assembly's order")
	assert.Less(t, second, every, "before the list of every run")
	assert.Contains(t, md, "First part: no charts")
	assert.Contains(t, md, "- [First part](#first-part)", "in the table of contents")
	page, err := rep.HTML()
	require.NoError(t, err)
	assert.Contains(t, page, "First part: with charts")

	plain, err := Assembly{}.New(meta, runs)
	require.NoError(t, err)
	assert.NotContains(t, plain.Markdown(), "First part", "the control: no part, no section")
}

// kindOf is a kind that claims a folder holding a file of its name.
type kindOf string

func (k kindOf) Render(folder fs.FS, meta record.Meta, _ []*record.Run) ([]File, bool, error) {
	if _, err := fs.Stat(folder, string(k)); err != nil {
		return nil, false, nil
	}
	return []File{{Name: "report.md", Data: []byte("# " + string(k) + " of " + meta.Command + "\n")}}, true, nil
}

// TestKindsClaimTheirFolders: a folder one of the kinds claims gets that
// kind's report, the first claim winning; any other folder, and every
// folder under the zero assembly (the control), a comparison's.
func TestKindsClaimTheirFolders(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS("testdata/results")))
	a := Assembly{Kinds: []Kind{kindOf("absent.json"), kindOf("meta.json"), kindOf("runs")}}
	files, err := a.Render(os.DirFS(dir))
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.True(t, strings.HasPrefix(string(files[0].Data), "# meta.json of "), string(files[0].Data))

	files, err = Assembly{}.Render(os.DirFS(dir))
	require.NoError(t, err)
	assert.Greater(t, len(files), 1, "the control: a comparison's report files")
	files, err = Assembly{Kinds: []Kind{kindOf("absent.json")}}.Render(os.DirFS(dir))
	require.NoError(t, err)
	assert.Greater(t, len(files), 1, "a folder no kind claims is a comparison's")
}
