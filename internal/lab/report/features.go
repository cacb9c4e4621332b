package report

// The features' sections still in this package, as parts.
var (
	WhyPart    Part = partFunc((*Report).whyBlocks)
	LedgerPart Part = partFunc((*Report).ledgerBlocks)
)

type partFunc func(*Report, bool) []block

func (f partFunc) Blocks(rep *Report, withCharts bool) []Piece { return f(rep, withCharts) }
