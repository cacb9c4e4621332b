package run

import (
	"strconv"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/summary"
)

// goDriver is cmd/load, the Go driver: grpc-go callers, HDR histograms,
// closed and open model.
type goDriver struct{}

func (goDriver) Name() string { return "go" }
func (goDriver) Doc() string {
	return "cmd/load: grpc-go callers, HDR histograms, closed and open model"
}
func (goDriver) Serves(plan.Workload, string) bool     { return true }
func (goDriver) Version(Config) string                 { return "" }
func (goDriver) Binary(cfg Config) (path, hint string) { return cfg.Load, "make build" }

func (goDriver) Result(_ Config, job Job) (*summary.Summary, error) { return summary.Read(job.Summary) }

// Command is cmd/load's command line (docs/load.md). The runner resets the
// server itself and runs the warm-up as its own process, so the driver does
// neither.
func (goDriver) Command(cfg Config, job Job) ([]string, []string, error) {
	s := job.Spec
	argv := []string{cfg.Load, "-addr", job.Addr, "-workload", s.WorkloadDef().Kind, "-model", s.Model,
		"-duration", job.Duration.String(), "-warmup", "0", "-out", job.Summary,
		"-conns", strconv.Itoa(cfg.Conns)}
	argv = append(argv, s.Factors.GoArgs()...)
	if s.Scenario != "" {
		argv = append(argv, "-scenario", s.Scenario)
	}
	if job.Marked {
		argv = append(argv, "-window-stdin")
	}
	if job.Timeline > 0 {
		argv = append(argv, "-timeline", job.Timeline.String())
	}
	if s.Model == "open" {
		argv = append(argv, "-rate", strconv.Itoa(s.Level), "-callers", strconv.Itoa(cfg.MaxVUs))
	} else {
		argv = append(argv, "-callers", strconv.Itoa(s.Level))
	}
	return argv, nil, nil
}
