package report

import "io"

// testLab is the lab's assembly as far as this package holds its features.
var testLab = Assembly{Parts: []Part{WhyPart, LedgerPart}}

// Rerender rebuilds a results directory's report with testLab.
func Rerender(dir string, out io.Writer) error { return testLab.Rerender(dir, out) }
