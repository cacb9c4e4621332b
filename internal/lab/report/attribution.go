package report

import (
	"github.com/locklab/locklab/internal/lab/attrib"
	"github.com/locklab/locklab/internal/lab/record"
)

// attributed: the run's server was profiled and its CPU folded
// (-attribute).
func attributed(r *record.Run) bool { return r.Attribution != nil }

// whyMetrics are the catalogue's rows of CPU attribution: each category's
// CPU per call (figures.json; the Why section shows them), and the system
// calls per call (the level table).
func whyMetrics() []*Metric {
	var out []*Metric
	for _, c := range attrib.CategoryNames() {
		out = append(out, &Metric{Key: "cpu_us_per_call." + c, Label: "server CPU per call in " + c, Unit: UnitUs, Better: Lower,
			Applies: attributed, Read: func(r *record.Run) (float64, error) { return r.CategoryUs(c) }})
	}
	return append(out, mWritesPerCall, mReadsPerCall)
}

var (
	mWritesPerCall = &Metric{Key: "write_syscalls_per_call", Label: "write system calls per call", Unit: UnitPerCall, Better: Lower,
		Block: BlockServer, HideEmpty: true, Applies: attributed, Read: func(r *record.Run) (float64, error) {
			_, w, err := r.Attribution.PerCall()
			return w, err
		}}
	mReadsPerCall = &Metric{Key: "read_syscalls_per_call", Label: "read system calls per call", Unit: UnitPerCall, Better: Lower,
		Block: BlockServer, HideEmpty: true, Applies: attributed, Read: func(r *record.Run) (float64, error) {
			r0, _, err := r.Attribution.PerCall()
			return r0, err
		}}
)
