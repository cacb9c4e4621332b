// Package plan lays out a comparison: the workloads as the runner names
// them, the table of factors (one row each), the cross product of the
// factors' values, and the runs — their order, their ids, and the cells no
// mode can fill.
//
// A factor is one row of Factors: its flag, default and parser, the
// workloads it applies to, what it adds to the server's and each driver's
// arguments, its CPU placement, its part of the run id, of meta.json and of
// the report's headings. Everything else ranges over the table, so adding a
// factor is adding a row (docs/runner.md).
package plan
