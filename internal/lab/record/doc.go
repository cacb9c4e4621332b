// Package record is what a comparison leaves on disk: one JSON record per
// run (runs/<id>.json: the driver's summary, the server's stats before and
// after, both processes' CPU use, the invariants checked) and meta.json, the
// comparison's configuration and machine. The report is computed from these
// files only; Load reads them back.
package record
