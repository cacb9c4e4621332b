// Package render is where the lab's reports are put together: the one
// list of the sections features add to a comparison's report, and of the
// studies with reports of their own. Package report holds what every
// report shares and knows a feature only by its interfaces (report.Part,
// report.Kind); each feature's package holds its own section. This package
// sits above both, so that neither imports the other: the runner, the
// packer and the command build and rerender reports through it.
package render

import (
	"io"
	"io/fs"

	"github.com/locklab/locklab/internal/lab/capacity"
	"github.com/locklab/locklab/internal/lab/cores"
	"github.com/locklab/locklab/internal/lab/latencyledger"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
	"github.com/locklab/locklab/internal/lab/why"
)

// Lab is every report the lab writes: a comparison's sections in the order
// its report shows them, and the kinds of study with reports of their own.
var Lab = report.Assembly{
	Parts: []report.Part{cores.Part{}, why.Part{}, latencyledger.Part{}},
	Kinds: []report.Kind{capacity.Kind{}},
}

// New builds the report of a comparison from its runs, with every part.
func New(meta record.Meta, runs []*record.Run) (*report.Report, error) { return Lab.New(meta, runs) }

// Render rebuilds a results folder's report from its raw files (Lab.Render).
func Render(folder fs.FS) ([]report.File, error) { return Lab.Render(folder) }

// Rerender rebuilds a results directory's report from its raw files,
// running nothing (Lab.Rerender).
func Rerender(dir string, out io.Writer) error { return Lab.Rerender(dir, out) }
