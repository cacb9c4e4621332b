// Package capacity is the open-loop capacity study, as one slice: its plan
// (the latency objective, the ladder of offered rates, the knee finder and
// the overload phase's admission policies), its record (capacity.json:
// which run was which step of the search) and its report (each design's
// knee per block, the latency curves, the paired comparison at every fixed
// rate, the overload table).
//
// The study's engine, which starts servers and drivers, is the sub-package
// runner (runner.RunCapacity, its flags and its estimate): it runs through
// package run's doors (run.RunOne, run.StartServer, run.Procs), so that it
// shares the comparison's processes, gate and drivers, and calls this
// package for what to run, what to record and how to judge it. It is a
// package of its own so that what reads a results folder (this package's
// record and report, package render, -rerender, -pack) links no process
// code, and so that run, whose comparison writes its report through render,
// which lists this package's report, imports no slice. The report is a report.Kind: package
// report knows it only through that interface and imports nothing of this
// package; package render puts it in the lab's list.
package capacity
