// Package report turns the run records of a comparison into its report:
// the metric catalogue (one declaration per figure), the groups of
// repetitions and their statistics (golang.org/x/perf's benchmath), the
// verdicts, and one list of blocks rendered twice, to Markdown and to a
// self-contained HTML page with charts; and -diff, two results directories
// compared.
package report
