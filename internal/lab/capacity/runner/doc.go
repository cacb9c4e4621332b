// Package runner is the capacity study's engine, the part of the capacity
// slice that runs on the machine: the study's flags (CapacityFlags,
// NewCapacity), its time (CapacityEstimate) and its runs (RunCapacity): the
// noop probe that sets the ladder, the floor that sets the objective, each
// block's ladder and bisection, each block's overload phase with the
// server's RSS and goroutines sampled, every cell through the validity
// gate; then capacity.json, meta.json and the report.
//
// It runs through package run's doors (run.RunOne for a run as the
// comparison makes it; run.StartServer and run.Procs for the overload
// phase's one server under two driver phases), and asks package capacity
// what to run, how to judge it and how to report it. It is a package of its
// own, not part of package capacity, so that what reads a results folder
// (capacity's record and report, package render, -rerender, -pack) links
// no process code: the house check's RunnerFree holds that.
package runner
