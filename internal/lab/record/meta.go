package record

import (
	"fmt"
	"strings"
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
	Baseline   string `json:"baseline,omitempty"`
	ServerCPUs []int  `json:"server_cpus"` // empty: not pinned
	DriverCPUs []int  `json:"driver_cpus"`
	ShareCPUs  bool   `json:"share_cpus"` // -share-cpus: a driver left no CPU of its own ran on the server's
	CPUs       int    `json:"cpus"`
	CPUModel   string `json:"cpu_model"`
	MemTotal   string `json:"mem_total"`
	Kernel     string `json:"kernel"`
	GoVersion  string `json:"go_version"` // the runner's
	// Runtimes are the server binaries, one per -runtime value, each with
	// what `go version -m` says of it; empty in records written before.
	Runtimes      []RuntimeBuild `json:"runtimes,omitempty"`
	K6Version     string         `json:"k6_version,omitempty"`
	H2loadVersion string         `json:"h2load_version,omitempty"`
	// MariaDBVersion is mariadbd --version, for a comparison that keeps the
	// bank in a database (each run's server starts a private MariaDB).
	MariaDBVersion string `json:"mariadb_version,omitempty"`
	// RedisVersion is redis-server --version, for a comparison that puts a
	// Redis cache in front of the database (each run's server starts a
	// private Redis).
	RedisVersion string `json:"redis_version,omitempty"`
	GitCommit    string `json:"git_commit"`
	GitDirty     bool   `json:"git_dirty"`
	Hostname     string `json:"hostname"`
	MaxVUsOpen   int    `json:"max_vus_open,omitempty"`
	// Gate is the validity rule the runner applied, fixed before the first
	// run; nil in records written before there was one.
	Gate *Gate `json:"gate,omitempty"`
	// Objective is a capacity study's objective (capacity.SLO's String) and
	// ObjectiveFrom where it came from: -slo, or a multiple of the floor
	// the study measured first; empty in other studies.
	Objective     string `json:"objective,omitempty"`
	ObjectiveFrom string `json:"objective_from,omitempty"`
}

// RuntimeBuild is the server binary of one -runtime value (plan.Runtime).
type RuntimeBuild struct {
	Runtime string `json:"runtime"`
	Binary  string `json:"binary"`
	// Toolchain and Experiments are the build's GOTOOLCHAIN and
	// GOEXPERIMENT; both empty for the -server binary (local), which the
	// runner did not build.
	Toolchain   string `json:"toolchain,omitempty"`
	Experiments string `json:"experiments,omitempty"`
	// BuildInfo is `go version -m` of the binary: its Go version (with
	// X:experiments), its module and every dependency, its build settings.
	BuildInfo string `json:"build_info"`
}

// Version is the first line of the build's BuildInfo without the path: the
// Go version the binary reports, "go1.27.3 X:nogreenteagc".
func (b RuntimeBuild) Version() string {
	line, _, _ := strings.Cut(b.BuildInfo, "\n")
	if _, v, ok := strings.Cut(line, ": "); ok {
		return v
	}
	return line
}

// Gate is the validity rule of a comparison and what the runner saw of the
// machine before it started: fixed before the data, so that the analysis
// cannot choose which blocks count.
type Gate struct {
	// MaxForeign is the share of a run's CPUs that something other than
	// the lab may take (Derived.Foreign): a run over it spoils its block's
	// cell, which runs again up to Reruns more times (-max-foreign,
	// -reruns). Every attempt keeps its records; the analysis uses clean
	// attempts only.
	MaxForeign float64 `json:"max_foreign"`
	Reruns     int     `json:"reruns"`
	// Margin is the equivalence margin (-margin): "no difference" is said
	// only of an effect shown to lie within ±Margin.
	Margin float64 `json:"margin"`
	// Twin is the mode run twice in every block as the A/A control; empty:
	// none.
	Twin string `json:"twin,omitempty"`
	// Precision is the half-width the primary intervals were to reach
	// (-precision, 0: off); MaxBlocks bounds the blocks added for it, and
	// Added is how many the second stage added.
	Precision float64 `json:"precision,omitempty"`
	MaxBlocks int     `json:"max_blocks,omitempty"`
	Added     int     `json:"added_blocks,omitempty"`
	// Quiet is the machine before the first block: each CPU set's busy
	// share while nothing of the lab ran, over QuietSeconds.
	QuietServer  float64 `json:"quiet_server_busy"`
	QuietDriver  float64 `json:"quiet_driver_busy"`
	QuietSeconds float64 `json:"quiet_seconds"`
}

// Spoils says why a run spoils its block's cell under the gate, or "" when
// it is clean: something other than the lab took more of its CPUs than
// the gate allows. A nil gate (records from before there was one) spoils
// nothing.
func (g *Gate) Spoils(r *Run) string {
	if g == nil || g.MaxForeign <= 0 || r.Derived.Foreign <= g.MaxForeign {
		return ""
	}
	return fmt.Sprintf("foreign CPU %.0f%% of its CPUs (server's %.0f%%, driver's %.0f%%) over %.0f%%",
		100*r.Derived.Foreign, 100*r.Derived.ServerForeign, 100*r.Derived.DriverForeign, 100*g.MaxForeign)
}
