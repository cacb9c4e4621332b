// Package record is what a comparison leaves on disk: one JSON record per
// run (runs/<id>.json: the driver's summary, the server's stats before and
// after, both processes' CPU use, the invariants checked) and meta.json, the
// comparison's configuration and machine. The report is computed from these
// files only; Load reads them back, from a results folder Open opens: runs/
// as the runner writes it, or the runs.tar.gz a finished study was packed
// into (ReadArchive, WriteArchive), read alike.
package record
