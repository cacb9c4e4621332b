package why

import "github.com/locklab/locklab/internal/lab/report"

// Part is the Why section of a comparison's report (report.Part): where
// the server's CPU went, per design and cell, where the plan profiled its
// runs, and what profiling cost where the plan measured it.
type Part struct{}

var _ report.Part = Part{}

// Blocks are the section's pieces; none for a report with no profiled run.
func (Part) Blocks(rep *report.Report, withCharts bool) []report.Piece {
	return view{rep}.whyBlocks(withCharts)
}

// view is a report as this section reads it.
type view struct{ *report.Report }
