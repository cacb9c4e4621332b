package run

import (
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/summary"
)

// k6Driver runs the k6 scripts in k6/, the seed's tool; the scripts take
// their settings from -e (docs/k6.md).
type k6Driver struct{}

func (k6Driver) Name() string                          { return "k6" }
func (k6Driver) Doc() string                           { return "the k6 scripts in k6/ (the seed's tool)" }
func (k6Driver) Serves(plan.Workload, string) bool     { return true }
func (k6Driver) Binary(cfg Config) (path, hint string) { return cfg.K6, "make k6" }

func (k6Driver) Version(cfg Config) string {
	v, _, _ := strings.Cut(output(cfg.K6, "version"), "\n")
	return v
}

// MinDuration: k6 refuses a scenario shorter than a second ("the duration
// must be at least 1s"), so its warm-up lasts at least that long.
func (k6Driver) MinDuration() time.Duration { return time.Second }

// Conns: every VU opens its own connection (k6's gRPC client is the VU's).
func (k6Driver) Conns(_ Config, level int) int { return level }

func (k6Driver) Result(_ Config, job Job) (*summary.Summary, error) { return summary.Read(job.Summary) }

// Command: RESET=0, the runner resets the server itself.
func (k6Driver) Command(cfg Config, job Job) ([]string, []string, error) {
	argv := []string{cfg.K6, "run", "--no-color", "--quiet", "--no-usage-report"}
	for _, e := range k6Env(cfg, job) {
		argv = append(argv, "-e", e)
	}
	return append(argv, filepath.Join(cfg.Scripts, job.Spec.WorkloadDef().Script)), nil, nil
}

// k6Env is the scripts' configuration (docs/k6.md).
func k6Env(cfg Config, job Job) []string {
	spec := job.Spec
	env := []string{
		"ADDR=" + job.Addr,
		"MODEL=" + spec.Model,
		"DURATION=" + job.Duration.String(),
		"RESET=0",
	}
	if spec.Model == "open" {
		env = append(env, "RATE="+strconv.Itoa(spec.Level), "MAX_VUS="+strconv.Itoa(cfg.MaxVUs))
	} else {
		env = append(env, "VUS="+strconv.Itoa(spec.Level))
	}
	if spec.Scenario != "" {
		env = append(env, "SCENARIO="+spec.Scenario)
	}
	env = append(env, spec.Factors.K6Env()...)
	if job.Summary != "" {
		env = append(env, "SUMMARY_JSON="+job.Summary)
	}
	return env
}
