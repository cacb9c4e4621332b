// Package duet analyses side-by-side rounds: the arms of a comparison (a
// baseline design, its A/A twin, the baseline with a known extra spin per
// call, and the designs compared with it) run at the same moment, each on
// a fresh server with an equal CPU quota on the same server CPUs and a
// driver of its own, for one short round after another.
//
// The machine's speed drifts by 10–15% from one second to the next on a
// shared virtual machine; measured one after another, no two designs can be
// compared more finely than that. Measured at the same moment, every arm
// of a round meets the same speed, and the ratio of two arms within a
// round cancels it. The analysis pairs the arms within each round and
// treats rounds as the blocks of the paired analysis (package paired):
// Yuen's trimmed mean of the per-round log ratios, Holm over the primary
// comparisons declared before the data, equivalence within a margin.
//
// A round's figures come from the servers themselves: each server's
// requests answered and its own CPU time, read at the same two instants
// for every arm. The window is therefore the same for every arm, whatever
// each driver's own clock says.
package duet

import (
	"fmt"
	"time"
)

// Arm roles: how the analysis treats an arm.
const (
	RoleBaseline = "baseline" // the design every other is compared with
	RoleTwin     = "twin"     // the baseline again, on a server of its own: the A/A control
	RoleKnown    = "known"    // the baseline with a known extra spin per call: the calibration
	RoleDesign   = "design"   // a design compared with the baseline: a primary
	RoleCeiling  = "ceiling"  // noop: the harness's ceiling, estimated, not judged
)

// Arm is one server of a round.
type Arm struct {
	Name string `json:"name"` // "mutex", "mutex (A/A)", "mutex +2µs", "inputQ"
	Mode string `json:"mode"` // the server's -mode
	Role string `json:"role"`
	// Args are the server's flags beyond -mode and -addr.
	Args []string `json:"args,omitempty"`
	// Against is the arm a design is compared with, "" for the group's
	// baseline: a design built by a second Go release is compared with
	// itself built by the first, in the same round.
	Against string `json:"against,omitempty"`
}

// Measure is one arm's figures in one round, over the round's window.
type Measure struct {
	Arm string `json:"arm"`
	// Requests are the workload's calls answered (the lab's admin calls
	// left out); CPU the server's own CPU seconds in the window, and
	// Window the window as the server's clock measured it.
	Requests uint64 `json:"requests"`
	// Writes are the requests of methods that may change state (the
	// proto marks the others NO_SIDE_EFFECTS): the mix the arm served.
	Writes uint64  `json:"writes"`
	CPU    float64 `json:"cpu_s"`
	Window float64 `json:"window_s"`
	// Held is, where the arms took the server CPUs in turns, the seconds
	// this one held them in the window (0 otherwise): its rates are per
	// second of its own turns, the window's other seconds being the other
	// arms'.
	Held float64 `json:"held_s,omitempty"`
	// Quota is the arm's CPU quota in CPUs (0: none); under turns, the
	// whole set, for the time it held it.
	Quota float64 `json:"quota_cpus"`
	// Throttled is the quota periods in the window in which the kernel
	// held the server back.
	Throttled int64 `json:"throttled_periods"`
	// DriverCPU is the arm's driver's CPU seconds in the window.
	DriverCPU float64 `json:"driver_cpu_s"`
	// Wakeups are the times the server's threads were put on a CPU in
	// the window (each thread's run timeslices, summed), and Syscalls its
	// read and write system calls: how a call's work was split. Zero
	// where they could not be read (and in rounds recorded before them).
	Wakeups  uint64 `json:"wakeups,omitempty"`
	Syscalls uint64 `json:"syscalls,omitempty"`
	// P99 is the 99th percentile of the latency the arm's driver saw over
	// the same window, in milliseconds: the calls that ended between the
	// instants the servers were read. Zero in rounds recorded before it.
	P99 float64 `json:"p99_ms,omitempty"`
	// Failed says why the arm's figures cannot be used ("" when they can):
	// the server or the driver failed.
	Failed string `json:"failed,omitempty"`
}

// span is the time the arm's rates are per: the seconds it held the CPUs
// under turns, else the window.
func (m Measure) span() float64 {
	if m.Held > 0 {
		return m.Held
	}
	return m.Window
}

// CallsPerSec is the arm's throughput in the window (under turns, per
// second of its own turns).
func (m Measure) CallsPerSec() float64 {
	if m.span() <= 0 {
		return 0
	}
	return float64(m.Requests) / m.span()
}

// CPUPerCall is the server's CPU per call, in seconds.
func (m Measure) CPUPerCall() float64 {
	if m.Requests == 0 {
		return 0
	}
	return m.CPU / float64(m.Requests)
}

// P99Ms is the callers' 99th-percentile latency, in milliseconds.
func (m Measure) P99Ms() float64 { return m.P99 }

// WakeupsPerCall is the server's wake-ups per call (0 without them).
func (m Measure) WakeupsPerCall() float64 {
	if m.Requests == 0 {
		return 0
	}
	return float64(m.Wakeups) / float64(m.Requests)
}

// WakeupsPerSec is the server's wake-ups per second of the window (0
// without them).
func (m Measure) WakeupsPerSec() float64 {
	if m.span() <= 0 {
		return 0
	}
	return float64(m.Wakeups) / m.span()
}

// SyscallsPerCall is the server's read and write system calls per call (0
// without them).
func (m Measure) SyscallsPerCall() float64 {
	if m.Requests == 0 {
		return 0
	}
	return float64(m.Syscalls) / float64(m.Requests)
}

// Util is the share of its quota the server used: near 1 the server was
// the bottleneck; well below, something else (its driver) set the pace.
func (m Measure) Util() float64 {
	if m.Quota <= 0 || m.span() <= 0 {
		return 0
	}
	return m.CPU / (m.span() * m.Quota)
}

// Round is one side-by-side round of one group.
type Round struct {
	Group string `json:"group"` // "counter · go · 10"
	Index int    `json:"index"` // 1-based within the group
	// Order is the order in which the arms' servers started (and their
	// drivers), drawn per round so that no arm always goes first.
	Order   []string  `json:"order"`
	Started time.Time `json:"started"`
	Arms    []Measure `json:"arms"`
	// The CPU sets over the window: the hypervisor's steal, and the share
	// something other than the lab took (foreign), as fractions.
	ServerSteal   float64 `json:"server_steal"`
	ServerForeign float64 `json:"server_foreign"`
	DriverSteal   float64 `json:"driver_steal"`
	DriverForeign float64 `json:"driver_foreign"`
	// DriverBusy is the share of the driver CPU set the drivers used:
	// near 1 they had no CPU to spare.
	DriverBusy float64 `json:"driver_busy"`
	// Dropped says why the gate dropped the round for every arm ("" when
	// it is clean).
	Dropped string `json:"dropped,omitempty"`
}

// LoadBound says whether an arm's figure in the round measured its
// driver: the server used less than minUtil of its quota while the
// drivers' CPUs were saturated (busy beyond DriverSaturated). A server
// below its quota with drivers to spare is waiting on its callers' round
// trips, which is the closed loop's own pace, not the driver's.
func (r Round) LoadBound(m Measure, minUtil float64) bool {
	return m.Quota > 0 && m.Util() < minUtil && r.DriverBusy >= DriverSaturated
}

// DriverSaturated is the busy share of the driver CPUs beyond which the
// drivers are taken to have had no CPU to spare.
const DriverSaturated = 0.9

// Arm finds an arm's figures in the round.
func (r Round) Arm(name string) (Measure, bool) {
	for _, m := range r.Arms {
		if m.Arm == name {
			return m, true
		}
	}
	return Measure{}, false
}

// Gate drops a round whose CPU sets something else took more than
// maxForeign of, steal included: the round's arms all met it, but a burst
// that spoils one part of the window more than another does not fall
// equally on every arm's requests.
func Gate(r *Round, maxForeign float64) {
	if r.Dropped != "" {
		return
	}
	for _, s := range []struct {
		what string
		v    float64
	}{{"server CPUs' steal", r.ServerSteal}, {"server CPUs' foreign", r.ServerForeign}, {"driver CPUs' steal", r.DriverSteal}, {"driver CPUs' foreign", r.DriverForeign}} {
		if s.v > maxForeign {
			r.Dropped = fmt.Sprintf("%s %.0f%% > %.0f%%", s.what, 100*s.v, 100*maxForeign)
			return
		}
	}
}
