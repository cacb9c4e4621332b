package record

import (
	"fmt"
	"maps"
	"slices"

	"github.com/locklab/locklab/internal/lab/attrib"
)

// Attribution is where a profiled run's server CPU went (-attribute): its
// CPU profile over the measured window folded into attrib's categories, and
// its read and write system calls counted from /proc/PID/io over the same
// window as the calls they are divided by.
type Attribution struct {
	// Profile is the CPU profile's file beside the record (runs/), kept so
	// that it can be read with `go tool pprof` or folded again; "" if it
	// was not kept.
	Profile string `json:"profile,omitempty"`
	// ProfileSeconds is how long the profile ran, as it states it; Samples
	// how many samples it holds (a category's figure is a count of them).
	ProfileSeconds float64 `json:"profile_seconds"`
	Samples        int64   `json:"samples"`
	// CPUSeconds is the profile's CPU time by category, every category of
	// attrib.Categories a key.
	CPUSeconds map[string]float64 `json:"cpu_seconds"`
	// Calls are the server's requests between the two readings of
	// /proc/PID/io; ReadSyscalls and WriteSyscalls the read and write
	// system calls between them (syscr, syscw).
	Calls         uint64 `json:"calls"`
	ReadSyscalls  int64  `json:"read_syscalls"`
	WriteSyscalls int64  `json:"write_syscalls"`
}

// NewAttribution records a folded profile and the system calls counted
// over calls calls.
func NewAttribution(b attrib.Breakdown, file string, before, after attrib.IO, calls uint64) (*Attribution, error) {
	if after.Reads < before.Reads || after.Writes < before.Writes {
		return nil, fmt.Errorf("syscall counts went backwards (%+v then %+v): not one process", before, after)
	}
	a := &Attribution{Profile: file, ProfileSeconds: b.Wall.Seconds(), Samples: b.Samples, CPUSeconds: map[string]float64{},
		Calls: calls, ReadSyscalls: after.Reads - before.Reads, WriteSyscalls: after.Writes - before.Writes}
	for _, c := range attrib.CategoryNames() {
		a.CPUSeconds[c] = b.CPU[c].Seconds()
	}
	return a, nil
}

// Total is the profile's CPU time, every category's, summed in the
// categories' sorted order: a map's order would move the sum's last bits
// from one reading to the next, and a report rendered twice from the same
// records must be the same bytes.
func (a *Attribution) Total() float64 {
	var t float64
	for _, c := range slices.Sorted(maps.Keys(a.CPUSeconds)) {
		t += a.CPUSeconds[c]
	}
	return t
}

// Share is the category's fraction of the profile's CPU: an error for a
// category the record lacks (folded with another table of categories) or
// a profile with no CPU in it.
func (a *Attribution) Share(category string) (float64, error) {
	s, ok := a.CPUSeconds[category]
	if !ok {
		return 0, fmt.Errorf("attribution has no category %q (folded with another table: fold its profile again)", category)
	}
	t := a.Total()
	if t <= 0 {
		return 0, fmt.Errorf("attribution's profile holds no CPU (%d samples)", a.Samples)
	}
	return s / t, nil
}

// PerCall is the read and write system calls per call.
func (a *Attribution) PerCall() (reads, writes float64, err error) {
	if a.Calls == 0 {
		return 0, 0, fmt.Errorf("attribution counted system calls over no calls")
	}
	return float64(a.ReadSyscalls) / float64(a.Calls), float64(a.WriteSyscalls) / float64(a.Calls), nil
}

// CategoryUs is the category's CPU per call, in µs: its share of the
// profile times the server's CPU per call. The profile apportions and the
// server's own CPU account measures, over the measured window: the
// categories then add up to the report's server CPU per call, and a profile
// window a little longer or shorter than the calls' changes no figure.
func (r *Run) CategoryUs(category string) (float64, error) {
	if r.Attribution == nil {
		return 0, fmt.Errorf("run %s: no attribution", r.ID)
	}
	share, err := r.Attribution.Share(category)
	if err != nil {
		return 0, fmt.Errorf("run %s: %w", r.ID, err)
	}
	return share * r.Derived.ServerCPUPerCallUs, nil
}
