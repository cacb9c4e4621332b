// Package repro is the runner's -diff: two results folders of the same
// plan compared group by group, on the medians of every metric the
// report's catalogue marks for it, with a verdict per group on whether
// its calls/s reproduced. It reads the folders through package record and
// groups their runs with package report's Aggregate, as every report does;
// the report itself has no use for it.
package repro
