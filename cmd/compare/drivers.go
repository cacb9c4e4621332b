package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// A driver is a load generator the runner can start: it turns one job into a
// command line, and reads the driver-neutral Result back once the process
// has exited. drivers is the one list of them.
type driver struct {
	Name string
	Doc  string
	// serves reports whether the driver can run a workload under a model.
	serves func(wl Workload, model string) bool
	// command is the driver's command line and extra environment.
	command func(cfg Config, job driverJob) (argv, env []string, err error)
	// result reads the run's Result after the process has exited.
	result func(cfg Config, job driverJob) (*Result, error)
}

var drivers = []driver{
	{Name: "go", Doc: "cmd/load: grpc-go callers, HDR histograms, closed and open model",
		serves: func(Workload, string) bool { return true }, command: goCommand, result: readJobSummary},
	{Name: "k6", Doc: "the k6 scripts in k6/ (the seed's tool)",
		serves: func(Workload, string) bool { return true }, command: k6Command, result: readJobSummary},
	{Name: "h2load", Doc: "nghttp2's h2load sending one fixed gRPC frame: the counter's ceiling driver",
		serves:  func(wl Workload, model string) bool { return wl.Kind == "counter" && model == "closed" },
		command: h2loadCommand, result: h2loadResult},
}

func driverNames() []string {
	names := make([]string, len(drivers))
	for i, d := range drivers {
		names[i] = d.Name
	}
	return names
}

func lookupDriver(name string) (driver, bool) {
	for _, d := range drivers {
		if d.Name == name {
			return d, true
		}
	}
	return driver{}, false
}

// driverJob is one invocation of a driver: a warm-up or a measured run.
type driverJob struct {
	spec     RunSpec
	addr     string
	duration time.Duration
	warmup   bool
	summary  string  // where the driver writes its Result (h2load: the runner does)
	log      string  // the driver's stdout and stderr
	scratch  string  // a directory for the job's temporary files
	prior    *Result // the warm-up's Result, for a measured run
}

// driverRun is what the runner records of one driver process.
type driverRun struct {
	ExitCode int
	Usage    ProcUsage
}

// runDriver runs one driver process to completion, pinned to the driver's
// CPUs. Its CPU time is the process's whole life (rusage): started right
// after the reset and stopped right after its measured window, it is the
// window give or take connecting and exiting. ctx cancellation stops it with
// SIGINT, which k6 and cmd/load treat as an early end.
func runDriver(ctx context.Context, cfg Config, d driver, job driverJob) (*Result, driverRun, error) {
	argv, env, err := d.command(cfg, job)
	if err != nil {
		return nil, driverRun{}, err
	}
	argv = pinned(cfg.DriverCPUs, argv)
	log, err := os.Create(job.log)
	if err != nil {
		return nil, driverRun{}, err
	}
	defer log.Close()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), gomaxprocsEnv(cfg.DriverCPUs)...), env...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	cmd.Stdout, cmd.Stderr = log, log
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start).Seconds()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return nil, driverRun{}, fmt.Errorf("%s: %w", d.Name, err)
	}
	if ctx.Err() != nil {
		return nil, driverRun{}, ctx.Err()
	}
	ps := cmd.ProcessState
	run := driverRun{ExitCode: ps.ExitCode(), Usage: ProcUsage{
		CPUs: cfg.DriverCPUs, CPUSeconds: (ps.UserTime() + ps.SystemTime()).Seconds(), WallSeconds: wall,
	}}
	res, err := d.result(cfg, job)
	if err != nil {
		return nil, run, fmt.Errorf("%s exited %d and left no result (see %s): %w", d.Name, run.ExitCode, filepath.Base(job.log), err)
	}
	return res, run, nil
}

func readJobSummary(_ Config, job driverJob) (*Result, error) { return readSummary(job.summary) }

// goCommand is cmd/load's command line (PLAN.md). The runner resets the
// server itself and runs the warm-up as its own process, so the driver does
// neither.
func goCommand(cfg Config, job driverJob) ([]string, []string, error) {
	s := job.spec
	argv := []string{cfg.Load, "-addr", job.addr, "-workload", s.wl.Kind, "-model", s.Model,
		"-duration", job.duration.String(), "-warmup", "0", "-out", job.summary,
		"-conns", strconv.Itoa(cfg.Conns), "-skew", fmtFloat(s.Factors.Skew), "-read-ratio", fmtFloat(s.Factors.ReadRatio)}
	if s.Scenario != "" {
		argv = append(argv, "-scenario", s.Scenario)
	}
	if s.Model == "open" {
		argv = append(argv, "-rate", strconv.Itoa(s.Level), "-callers", strconv.Itoa(cfg.MaxVUs))
	} else {
		argv = append(argv, "-callers", strconv.Itoa(s.Level))
	}
	return argv, nil, nil
}

// k6Command runs a k6 script (docs/k6.md); the scripts take their settings
// from -e. RESET=0: the runner resets the server itself.
func k6Command(cfg Config, job driverJob) ([]string, []string, error) {
	argv := []string{cfg.K6, "run", "--no-color", "--quiet", "--no-usage-report"}
	for _, e := range k6Env(cfg, job.spec, job.addr, job.duration, job.summary) {
		argv = append(argv, "-e", e)
	}
	return append(argv, filepath.Join(cfg.Scripts, job.spec.wl.Script)), nil, nil
}

// k6Env is the scripts' configuration (docs/k6.md).
func k6Env(cfg Config, spec RunSpec, addr string, d time.Duration, summaryPath string) []string {
	env := []string{
		"ADDR=" + addr,
		"MODEL=" + spec.Model,
		"DURATION=" + d.String(),
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
	if spec.Factors.Skew != 0 {
		env = append(env, "SKEW="+fmtFloat(spec.Factors.Skew))
	}
	if spec.Factors.ReadRatio != defaultReadRatio {
		env = append(env, "READ_RATIO="+fmtFloat(spec.Factors.ReadRatio))
	}
	if summaryPath != "" {
		env = append(env, "SUMMARY_JSON="+summaryPath)
	}
	return env
}
