package capacity

import (
	"gonum.org/v1/plot/plotter"

	"github.com/locklab/locklab/internal/lab/report"
)

// block is one piece of the capacity report (report.Piece).
type block = report.Piece

// table is a table being built, row by row, before it becomes a piece.
type table struct {
	header []string
	rows   [][]string
}

func (t table) piece() block { return report.Table(t.header, t.rows) }

func heading(level int, text string) block { return report.Heading(level, text) }

func para(text string) block { return report.Para(text) }

// errPoints are points with vertical error bars, for plotter.YErrorBars.
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}
