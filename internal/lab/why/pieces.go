package why

import "github.com/locklab/locklab/internal/lab/report"

// table is a table being built, row by row, before it becomes a piece.
type table struct {
	header []string
	rows   [][]string
}

func (t table) piece() report.Piece { return report.Table(t.header, t.rows) }
