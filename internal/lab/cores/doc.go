// Package cores is the report's cores section, as one slice: the demands
// of each design's serial resource and CPU, the operational bound where
// the plan measured it, the mean-value model fitted on some of the plan's
// runs and checked on the others, and the crossover of owner designs and
// the mutex it predicts along the work per command.
//
// The maths sits in the packages beside it and stays there: the bound in
// internal/lab/bottleneck and the mean-value analysis in internal/lab/mva
// are pure functions of numbers, tested on their own against known answers,
// and know nothing of runs or reports; this package reads the runs'
// records through package report and puts those numbers in tables. Its
// plan needs nothing of its own (it reads the factors -server-cpus and
// -work, which are the plan's table), nor does its record (the server's
// serial demand is a field of every run's stats, and the catalogue's rows
// that show it, in the per-level tables, are the report's).
package cores
