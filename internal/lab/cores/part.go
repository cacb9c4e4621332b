package cores

import "github.com/locklab/locklab/internal/lab/report"

// Part is the cores section of a comparison's report (report.Part): the
// bound where the plan swept the server's CPUs or the server measured a
// serial demand, and the model where the plan also swept the work.
type Part struct{}

var _ report.Part = Part{}

// Blocks are the section's pieces; none for a report with neither a sweep
// of the server's CPUs nor a serial demand.
func (Part) Blocks(rep *report.Report, withCharts bool) []report.Piece {
	return view{rep}.coresBlocks(withCharts)
}

// view is a report as this section reads it.
type view struct{ *report.Report }
