// Package run runs a comparison: it starts a fresh server for every run of
// the plan, pinned to its CPUs, drives it with one of the drivers (one file
// each behind the Driver interface: go, k6, h2load), samples both
// processes' CPU time from /proc over the measured window, checks the
// invariants through the API, writes each run's record, and hands the
// records to the report.
package run
