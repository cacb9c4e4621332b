package record

// ProcUsage is one process's CPU use over a run's measured window.
type ProcUsage struct {
	CPUs        []int   `json:"cpus"` // the set it was pinned to; empty: not pinned
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

// SetUsage is a CPU set's time over a run's measured window, in seconds
// summed over its CPUs, from the kernel's per-CPU counters (/proc/stat):
// everything that ran there, not only one process — interrupts, softirq,
// other processes, and on a virtual machine the time the hypervisor gave
// the CPU to someone else (steal), which no process's own CPU time shows.
type SetUsage struct {
	CPUs    []int   `json:"cpus"` // the set; all the machine's when unpinned
	User    float64 `json:"user"` // guest time is inside user, as the kernel counts it
	Nice    float64 `json:"nice"`
	System  float64 `json:"system"`
	Idle    float64 `json:"idle"`
	Iowait  float64 `json:"iowait"`
	IRQ     float64 `json:"irq"`
	SoftIRQ float64 `json:"softirq"`
	Steal   float64 `json:"steal"`
}

// Sampled reports whether the runner read the set's counters (records from
// before it did have none).
func (u SetUsage) Sampled() bool { return u.Total() > 0 }

// Total is all the set's time over the window: its CPUs times the window,
// as the kernel accounted it.
func (u SetUsage) Total() float64 {
	return u.User + u.Nice + u.System + u.Idle + u.Iowait + u.IRQ + u.SoftIRQ + u.Steal
}

// Busy is the share of the set's time spent running anything: processes
// (user, nice, system) and interrupts (irq, softirq).
func (u SetUsage) Busy() float64 {
	if u.Total() <= 0 {
		return 0
	}
	return (u.User + u.Nice + u.System + u.IRQ + u.SoftIRQ) / u.Total()
}

// Foreign is the share of the set's time taken by anything but the lab's
// own processes on it: labCPU is their CPU seconds over the same window
// (the server's, and the driver's where it shared the set). What is left of
// the set's busy time is other processes' (niced or not), interrupts and
// softirq, and steal: time the lab's processes lost to something else. The
// kernel counts both sides in 10 ms ticks, so a quiet run reads a few
// percent either side of zero; a negative share is read as zero.
func (u SetUsage) Foreign(labCPU float64) float64 {
	if u.Total() <= 0 {
		return 0
	}
	busy := u.User + u.Nice + u.System + u.IRQ + u.SoftIRQ + u.Steal
	return max(0, busy-labCPU) / u.Total()
}

// StealShare is the share of the set's time the hypervisor took.
func (u SetUsage) StealShare() float64 {
	if u.Total() <= 0 {
		return 0
	}
	return u.Steal / u.Total()
}

// NotableSteal is the steal, as a share of a run's CPUs, at which the run is
// flagged. Steal is time the run's processes lost without seeing it in their
// own CPU time, and it comes and goes with the neighbours on the host, not
// with the design: at 5% it is as large as the smaller effects the paired
// analysis resolves, so such a run's figures may carry the neighbours'.
const NotableSteal = 0.05
