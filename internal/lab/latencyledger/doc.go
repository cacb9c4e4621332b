// Package latencyledger is the report's latency ledger section, as one
// slice: where each call's server-side time went, by state (running,
// runnable, blocked on a channel or a lock, ...), in the runs the plan
// traced (-ledger on), each design against the baseline block by block;
// the store's own clocks from the same runs; and what tracing cost where
// the plan ran it both ways.
//
// It sits beside internal/lab/ledger rather than in it: ledger reads one
// execution trace into a summary, is read by the runner and by package
// record (a run's record holds its summary), and must stay below the
// report; this package is above the report, and reads records through it.
// The factor that turns tracing on is a row of the plan's factor table,
// and the summary a field of every run's record, so the plan and the
// record keep them, as the runner keeps the trace's reading, which shares
// a run's scratch directory and its timing.
package latencyledger
