// Package summary is the driver-neutral record of one load run, the
// locklab.load-summary/v1 document: what the Go driver (package load) and the
// k6 scripts (k6/lib/summary.js) write, and what the comparison runner writes
// for h2load and reads back from all three. Its producers import one schema,
// so they cannot drift apart; latencies travel as an encoded HDR histogram so
// that repetitions merge exactly.
package summary
