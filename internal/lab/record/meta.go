package record

import (
	"time"

	"github.com/locklab/locklab/internal/lab/plan"
)

// Meta is what a reader needs to reproduce a comparison: the command, the
// configuration (every factor swept, the CPU split), the machine and the
// versions. Written as meta.json.
type Meta struct {
	Command      string     `json:"command"`
	Started      time.Time  `json:"started"`
	Finished     time.Time  `json:"finished"`
	Workloads    []string   `json:"workloads"`
	Modes        []string   `json:"modes"`
	Drivers      []string   `json:"drivers"`
	Model        string     `json:"model"`
	Levels       []int      `json:"levels"`
	H2loadLevels []int      `json:"h2load_levels,omitempty"`
	Conns        int        `json:"conns"`
	Factors      plan.Space `json:"factors"`
	NA           []plan.NA  `json:"not_applicable,omitempty"`
	Duration     string     `json:"duration"`
	Warmup       string     `json:"warmup"`
	Reps         int        `json:"reps"`
	// Seed drew each block's order of the modes (paired.Order); nil in
	// records written before blocks were ordered by a seed.
	Seed *int `json:"seed,omitempty"`
	// Baseline is the design the report compares the others with; empty
	// in records written before it could be chosen (the report then takes
	// its default).
	Baseline      string `json:"baseline,omitempty"`
	ServerCPUs    []int  `json:"server_cpus"` // empty: not pinned
	DriverCPUs    []int  `json:"driver_cpus"`
	ShareCPUs     bool   `json:"share_cpus"` // -share-cpus: a driver left no CPU of its own ran on the server's
	CPUs          int    `json:"cpus"`
	CPUModel      string `json:"cpu_model"`
	MemTotal      string `json:"mem_total"`
	Kernel        string `json:"kernel"`
	GoVersion     string `json:"go_version"`
	K6Version     string `json:"k6_version,omitempty"`
	H2loadVersion string `json:"h2load_version,omitempty"`
	GitCommit     string `json:"git_commit"`
	GitDirty      bool   `json:"git_dirty"`
	Hostname      string `json:"hostname"`
	MaxVUsOpen    int    `json:"max_vus_open,omitempty"`
}
