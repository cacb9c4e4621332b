// Package run runs a comparison (Compare): it starts a fresh server for
// every run of the plan, pinned to its CPUs, drives it with one of the
// drivers (one file each behind the Driver interface, listed in Drivers:
// go, k6, h2load, ghz), samples both processes' CPU time from /proc over
// the measured window, checks the invariants through the API, writes each
// run's record, and hands the records to the report. The capacity study's
// engine (internal/lab/capacity/runner, through engine.go's doors: RunOne,
// StartServer, Procs) and the seeds' runs of a fixed number of calls
// (RunCounted) run the same way.
package run
