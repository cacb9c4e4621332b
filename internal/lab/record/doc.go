// Package record is what a comparison leaves on disk: one JSON record per
// run (runs/<id>.json: the driver's summary, the server's stats before and
// after, both processes' CPU use, the invariants checked) and meta.json, the
// comparison's configuration and machine. The report is computed from these
// files only; Load reads them back, from a results folder Open opens: runs/
// as the runner writes it, or the runs.tar.gz a finished study was packed
// into (ReadArchive, WriteArchive), read alike. An archive packed for git
// is in a smaller layout (ArchiveSchema): its logs in one file, and no
// latency histogram that no report reads (DropHistogram); Open gives every
// reader the tree the runner wrote but for those histograms.
package record
