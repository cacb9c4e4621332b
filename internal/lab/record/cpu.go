package record

import "github.com/locklab/locklab/internal/lab/cpuset"

// ProcUsage is one process's CPU use over a run's measured window.
type ProcUsage struct {
	CPUs []int `json:"cpus"` // the set it was pinned to; empty: not pinned
	// GOMAXPROCS is what the runner started it with; 0 in records from
	// before the runner gave it to every process.
	GOMAXPROCS  int     `json:"gomaxprocs,omitempty"`
	CPUSeconds  float64 `json:"cpu_seconds"`
	WallSeconds float64 `json:"wall_seconds"`
}

// Cores is the average number of CPUs the process kept busy.
func (u ProcUsage) Cores() float64 {
	if u.WallSeconds <= 0 {
		return 0
	}
	return u.CPUSeconds / u.WallSeconds
}

// Util is Cores as a share of the CPUs the process could use.
func (u ProcUsage) Util(machineCPUs int) float64 {
	n := len(u.CPUs)
	if n == 0 {
		n = machineCPUs
	}
	if n == 0 {
		return 0
	}
	return u.Cores() / float64(n)
}

// Class says what limited a run.
type Class string

const (
	// ClassServerBound: the server used nearly all its CPUs and the driver
	// had CPU to spare: the throughput is the design's.
	ClassServerBound Class = "server-bound"
	// ClassLoadBound: the driver used nearly all its CPUs: the throughput is
	// the driver's, and only the server's CPU per call speaks of the design.
	ClassLoadBound Class = "load-bound"
	// ClassNeither: neither was busy enough (latency-bound, or waiting).
	ClassNeither Class = "neither"
)

// Classes lists the classes in the order the report counts them.
var Classes = []Class{ClassServerBound, ClassLoadBound, ClassNeither}

// The thresholds of the classes, as shares of each process's own CPUs.
const (
	ServerBusy = 0.90
	DriverBusy = 0.85
)

// Classify classes a run by the CPU use of the server and the driver, each
// as a share of its own CPU set. A busy driver makes the run load-bound even
// when the server is busy too: the driver may be what held it back.
func Classify(serverUtil, driverUtil float64) Class {
	switch {
	case driverUtil >= DriverBusy:
		return ClassLoadBound
	case serverUtil >= ServerBusy:
		return ClassServerBound
	}
	return ClassNeither
}

// SetUsage is a CPU set's time over a run's measured window: the runner's
// name for cpuset.Usage, which storeverdict's gate reads too.
type SetUsage = cpuset.Usage

// NotableSteal is the steal, as a share of a run's CPUs, at which the run is
// flagged. Steal is time the run's processes lost without seeing it in their
// own CPU time, and it comes and goes with the neighbours on the host, not
// with the design: at 5% it is as large as the smaller effects the paired
// analysis resolves, so such a run's figures may carry the neighbours'.
const NotableSteal = 0.05
