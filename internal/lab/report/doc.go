// Package report turns the run records of a comparison into its report:
// the metric catalogue (one declaration per figure), the groups of
// repetitions and their statistics (golang.org/x/perf's benchmath), the
// verdicts, and one list of blocks rendered twice, to Markdown and to a
// self-contained HTML page with charts.
//
// It keeps what every report shares. A feature with a section of its own
// (the cores model, the CPU attribution, the latency ledger) meets Part, and
// a study with a report of its own (the capacity study) meets Kind, each in
// the feature's own package beside its plan, run and record parts; this
// package imports none of them. An Assembly lists them, and the layer above
// both (package render) declares the lab's one Assembly.
package report
