// Package instrumented is what the report's sections over instrumented
// runs share: the Why section (package why, the runs the plan profiled)
// and the ledger's (package latencyledger, the runs it traced). Such a
// section speaks for only some of a comparison's runs, so it compares the
// designs on those runs cell by cell and block by block, by differences
// rather than ratios (a category a design never enters is zero), and says
// what the instrument cost where the plan ran it both off and on.
//
// It sits between package report, which keeps what every report shares
// and imports none of this, and the slices that read it: a section that
// needs none of it (the cores model) does not carry it, and the report
// does not carry what only two of its sections use.
package instrumented
