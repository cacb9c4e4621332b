// Package cpuset reads what a machine's CPUs did over a window, from the
// kernel's per-CPU counters (/proc/stat), and how much of it was foreign:
// neither the lab's processes nor the go test it ran. The comparison
// runner's validity gate (internal/lab/record, internal/lab/run) and
// storeverdict's gate on a user's own rounds read it through this one
// package, so that both apply one rule with one arithmetic.
package cpuset

// DefaultMaxForeign is the validity gate's default rule, for the runner's
// blocks and for storeverdict's rounds alike: a run whose CPUs something
// else took more than 10% of is spoiled. A quiet run reads 0 ± 4% (the
// kernel counts in 10 ms ticks over a 1.5 s window), and each 10 points of
// foreign CPU cost about 9% of calls/s, the size of the effects the lab
// resolves.
const DefaultMaxForeign = 0.10

// Usage is a CPU set's time over a run's measured window, in seconds
// summed over its CPUs, from the kernel's per-CPU counters (/proc/stat):
// everything that ran there, not only one process — interrupts, softirq,
// other processes, and on a virtual machine the time the hypervisor gave
// the CPU to someone else (steal), which no process's own CPU time shows.
type Usage struct {
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

// Sampled reports whether the set's counters were read (the runner's
// records from before it read them have none).
func (u Usage) Sampled() bool { return u.Total() > 0 }

// Total is all the set's time over the window: its CPUs times the window,
// as the kernel accounted it.
func (u Usage) Total() float64 {
	return u.User + u.Nice + u.System + u.Idle + u.Iowait + u.IRQ + u.SoftIRQ + u.Steal
}

// Busy is the share of the set's time spent running anything: processes
// (user, nice, system) and interrupts (irq, softirq).
func (u Usage) Busy() float64 {
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
func (u Usage) Foreign(labCPU float64) float64 {
	if u.Total() <= 0 {
		return 0
	}
	busy := u.User + u.Nice + u.System + u.IRQ + u.SoftIRQ + u.Steal
	return max(0, busy-labCPU) / u.Total()
}

// StealShare is the share of the set's time the hypervisor took.
func (u Usage) StealShare() float64 {
	if u.Total() <= 0 {
		return 0
	}
	return u.Steal / u.Total()
}
