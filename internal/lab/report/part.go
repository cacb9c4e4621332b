package report

import (
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/locklab/locklab/internal/lab/record"
)

// A Part is a section that a feature of the lab adds to a comparison's
// report, after the per-level tables and before the list of every run: the
// cores model, the CPU attribution, the latency ledger. Each lives in its
// feature's own package, with the feature's plan, run and record code; this
// package knows a Part only by this interface, and imports none of them.
type Part interface {
	// Blocks are the part's section of rep: none when rep's runs carry
	// nothing for it. withCharts is false for report.md, true for
	// report.html.
	Blocks(rep *Report, withCharts bool) []Piece
}

// A Kind is a study whose results folder has a report of its own in place
// of a comparison's (the capacity study's), in the feature's own package.
type Kind interface {
	// Render is the folder's report files, with ok false when the folder
	// is not of this kind (and then no error).
	Render(folder fs.FS, meta record.Meta, runs []*record.Run) (files []File, ok bool, err error)
}

// Assembly is what the lab's reports are made of: the parts of a
// comparison's report in their order, and the kinds of study with reports
// of their own. The runner's layer that knows every feature declares the
// one list; the zero Assembly renders a comparison's common sections only.
type Assembly struct {
	Parts []Part
	Kinds []Kind
}

// New builds the report of a comparison from its runs, with a's parts.
func (a Assembly) New(meta record.Meta, runs []*record.Run) (*Report, error) {
	return New(meta, runs, a.Parts...)
}

// Write writes a comparison's report files into a results directory.
func (a Assembly) Write(dir string, meta record.Meta, runs []*record.Run) error {
	rep, err := a.New(meta, runs)
	if err != nil {
		return err
	}
	return Write(dir, rep)
}

// Render rebuilds a results folder's report (record.Open) from its raw
// files, running nothing, and returns the files Rerender writes: the
// report of the first of a's kinds the folder is, else a comparison's.
func (a Assembly) Render(folder fs.FS) ([]File, error) {
	meta, runs, err := record.LoadFolder(folder)
	if err != nil {
		return nil, err
	}
	for _, k := range a.Kinds {
		files, ok, err := k.Render(folder, meta, runs)
		if err != nil || ok {
			return files, err
		}
	}
	rep, err := a.New(meta, runs)
	if err != nil {
		return nil, err
	}
	return rep.Files()
}

// Rerender rebuilds a results directory's report from its raw files —
// runs/, or the runs.tar.gz it was packed into — running nothing.
func (a Assembly) Rerender(dir string, out io.Writer) error {
	folder, err := record.Open(dir)
	if err != nil {
		return err
	}
	files, err := a.Render(folder)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if err := WriteFiles(dir, files); err != nil {
		return err
	}
	fmt.Fprintf(out, "report: %s\n", filepath.Join(dir, "report.md"))
	return nil
}

// Piece is one block of a report (not a metric's Block of rows), rendered
// to Markdown and to HTML alike; a Part makes its pieces with Heading,
// Para, Table, Chart and Picture.
type Piece = block

// Heading is a heading of a level (1 the title; a part's section is 2).
func Heading(level int, text string) Piece { return heading{level, text} }

// Para is a paragraph; `x` is code in both renderings.
func Para(text string) Piece { return para(text) }

// Table is a table: a header row, then rows as long.
func Table(header []string, rows [][]string) Piece { return table{header: header, rows: rows} }

// Chart is an SVG image that only the HTML rendering shows.
func Chart(title string, svg []byte) Piece { return chart{title: title, svg: svg} }

// Picture is a chart that is also a file beside report.md, which links it.
func Picture(title string, svg []byte, file string) Piece {
	return picture{chart: chart{title: title, svg: svg}, file: file}
}

// Rows is a table a part builds row by row; Piece makes it a block.
type Rows struct {
	Header []string
	Rows   [][]string
}

// Piece is the table as a block of the report.
func (t Rows) Piece() Piece { return table{header: t.Header, rows: t.Rows} }
