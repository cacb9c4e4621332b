package report

import "io"

// testLab is the assembly this package's tests render with: no feature's
// part, whose packages import this one; each feature's tests are its own.
var testLab = Assembly{}

// Rerender rebuilds a results directory's report with testLab.
func Rerender(dir string, out io.Writer) error { return testLab.Rerender(dir, out) }
