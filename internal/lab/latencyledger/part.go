package latencyledger

import "github.com/locklab/locklab/internal/lab/report"

// Part is the ledger's section of a comparison's report (report.Part):
// where each call's server-side time went, by state, in the runs the plan
// traced, the store's own clocks beside it, and what tracing cost where
// the plan ran it both ways.
type Part struct{}

var _ report.Part = Part{}

// Blocks are the section's pieces; none for a report with no traced run.
func (Part) Blocks(rep *report.Report, withCharts bool) []report.Piece {
	return view{rep}.ledgerBlocks(withCharts)
}

// view is a report as this section reads it.
type view struct{ *report.Report }
