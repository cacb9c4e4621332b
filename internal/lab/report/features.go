package report

// The features' sections still in this package, as parts.
var (
	CoresPart  Part = partFunc((*Report).coresBlocks)
	WhyPart    Part = partFunc((*Report).whyBlocks)
	LedgerPart Part = partFunc((*Report).ledgerBlocks)
)

type partFunc func(*Report, bool) []block

func (f partFunc) Blocks(rep *Report, withCharts bool) []Piece { return f(rep, withCharts) }
