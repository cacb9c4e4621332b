// Package capacity is the open-loop capacity study, as one slice: its plan
// (the latency objective, the ladder of offered rates, the knee finder and
// the overload phase's admission policies), its record (capacity.json:
// which run was which step of the search) and its report (each design's
// knee per block, the latency curves, the paired comparison at every fixed
// rate, the overload table).
//
// The study's engine, which starts servers and drivers, stays in package
// run beside the comparison's (run.RunCapacity): it shares the runner's
// processes, gate and drivers, and calls this package for what to run,
// what to record and how to judge it. The report is a report.Kind: package
// report knows it only through that interface and imports nothing of this
// package; package render puts it in the lab's list.
package capacity
