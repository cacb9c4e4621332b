// Package why is the report's Why section, as one slice: where each
// design's server CPU went, per call and per category, in the runs the plan
// profiled (-attribute), each design against the baseline block by block,
// and what profiling cost where the plan ran it both ways.
//
// It sits beside internal/lab/attrib rather than in it: attrib folds one
// profile into categories, is read by the runner and by package record (a
// run's record holds its fold), and must stay below the report; this
// package is above the report, and reads records through it. The factor
// that turns profiling on is a row of the plan's factor table, and the
// fold a field of every run's record, so the plan and the record keep
// them; the catalogue's rows of attribution stay in the report, whose
// per-level tables and figures.json show them.
package why
