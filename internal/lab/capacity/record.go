package capacity

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
)

// CapacityFile is the capacity study's own record beside meta.json and
// runs/: which run was which step of the search, and the overload phase.
const CapacityFile = "capacity.json"

// Capacity is what a capacity study did: its objective and ladder, the
// ceiling it scaled the ladder by, every run of the search judged against
// the objective, each block's knee, and the overload runs.
type Capacity struct {
	SLO          string    `json:"slo"`
	Steps        []float64 `json:"steps,omitempty"` // fractions of the ceiling; empty with explicit Rates
	Rates        []int     `json:"rates,omitempty"` // an explicit ladder, calls/s
	Refine       int       `json:"refine"`          // bisection steps after the ladder, per block
	ProbeCallers int       `json:"probe_callers"`
	Overload     float64   `json:"overload"` // of the best design's capacity
	Recover      float64   `json:"recover"`
	// FloorMultiple is -floor-multiple when the objective was set from the
	// floor (0 when -slo gave it); Floors are the noop server's p99 at the
	// ladder's lowest rate, per workload, that set it.
	FloorMultiple float64 `json:"floor_multiple,omitempty"`
	Floors        []Floor `json:"floors,omitempty"`
	// Ceilings are the noop server's calls/s per workload and driver.
	Ceilings []Ceiling     `json:"ceilings"`
	Points   []CapPoint    `json:"points"`
	Knees    []CapKnee     `json:"knees"`
	Overruns []OverloadRun `json:"overload_runs"`
	Policies []string      `json:"policies"`
	// Gate is what the validity gate did (Meta.Gate is its rule).
	Gate CapGate `json:"gate"`
}

// CapGate counts the validity gate's work in a capacity study: the cells
// it judged (a ladder rate with every design, one refinement run, one
// design under one policy in the overload phase, each in a block), those
// rerun, those dropped after every rerun, and the spoiled runs.
type CapGate struct {
	Cells       int `json:"cells"`
	Rerun       int `json:"rerun"`
	Dropped     int `json:"dropped"`
	SpoiledRuns int `json:"spoiled_runs"`
}

// Ceiling is the noop server's throughput under the probe.
type Ceiling struct {
	Workload  string  `json:"workload"`
	Driver    string  `json:"driver"`
	CallsPerS float64 `json:"calls_per_s"`
	RunID     string  `json:"run"`
}

// Floor is the noop server's p99 at a low offered rate in the open model:
// what the driver, the network stack and the wake-ups cost, no store.
type Floor struct {
	Workload string  `json:"workload"`
	Driver   string  `json:"driver"`
	Rate     int     `json:"rate"`
	P99Ms    float64 `json:"p99_ms"`
	RunID    string  `json:"run"`
	// Spoiled says why the gate spoiled every attempt: the floor is the
	// last attempt's all the same, and the report says so.
	Spoiled string `json:"spoiled,omitempty"`
}

// CapPoint is one run of the search: a design at an offered rate in a
// block, and whether it met the objective.
type CapPoint struct {
	Workload string `json:"workload"`
	Driver   string `json:"driver"`
	Mode     string `json:"mode"`
	Block    int    `json:"block"`
	Phase    string `json:"phase"` // "ladder" or "refine"
	Rate     int    `json:"rate"`
	RunID    string `json:"run"`
	Pass     bool   `json:"pass"`
	Why      string `json:"why,omitempty"` // the term it broke
	// Beyond says why the driver did not offer the rate (it dropped calls
	// while using its CPUs to the full): the point is the driver's, not
	// the design's, and is not plotted.
	Beyond string `json:"beyond_driver,omitempty"`
	// Spoiled says why the validity gate dropped the point's cell (every
	// attempt spoiled): the point is kept, but neither judged nor compared.
	Spoiled string `json:"spoiled,omitempty"`
}

// CapKnee is a design's knee in one block.
type CapKnee struct {
	Workload string `json:"workload"`
	Driver   string `json:"driver"`
	Mode     string `json:"mode"`
	Block    int    `json:"block"`
	State    string `json:"state"` // KneeState's String
	Found    bool   `json:"found"`
	Rate     int    `json:"rate,omitempty"` // highest passing
	Fail     int    `json:"fail,omitempty"` // lowest failing
}

// OverloadRun is one design under one admission policy past capacity, then
// back below it.
type OverloadRun struct {
	Workload    string `json:"workload"`
	Driver      string `json:"driver"`
	Mode        string `json:"mode"`
	Policy      string `json:"policy"`
	Block       int    `json:"block"`
	Attempt     int    `json:"attempt,omitempty"` // 1, 2, …: the gate's reruns
	Bound       int    `json:"bound,omitempty"`   // N of the policy's flag
	Capacity    int    `json:"capacity"`          // the best design's, that the rates scale
	Rate        int    `json:"rate"`
	RecoverRate int    `json:"recover_rate"`
	RunID       string `json:"run"`         // the overload phase
	RecoverID   string `json:"recover_run"` // the phase after it
	// BaseRSS is the server's RSS after the warm-up at Capacity; PeakRSS
	// and PeakGoroutines the largest sampled during both phases.
	BaseRSS        uint64      `json:"base_rss_bytes"`
	PeakRSS        uint64      `json:"peak_rss_bytes"`
	PeakGoroutines int64       `json:"peak_goroutines"`
	Samples        []ProcPoint `json:"samples,omitempty"`
	// RecoveryS is the time from the drop to the start of the first
	// interval from which on every interval met the objective's latency;
	// Recovered false when none did.
	RecoveryS float64 `json:"recovery_s"`
	Recovered bool    `json:"recovered"`
	NA        string  `json:"not_applicable,omitempty"`
	// Spoiled says why the validity gate spoiled this attempt; only the
	// clean attempts are analysed.
	Spoiled string `json:"spoiled,omitempty"`
}

// ProcPoint is one sample of the server during the overload runs.
type ProcPoint struct {
	T          float64 `json:"t_s"`
	RSS        uint64  `json:"rss_bytes"`
	Goroutines int64   `json:"goroutines"`
}

// LoadCapacity reads a results folder's capacity.json (Open); ok false
// when the folder holds no capacity study.
func LoadCapacity(folder fs.FS) (c *Capacity, ok bool, err error) {
	b, err := fs.ReadFile(folder, CapacityFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	c = &Capacity{}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, false, fmt.Errorf("%s: %w", CapacityFile, err)
	}
	return c, true, nil
}
