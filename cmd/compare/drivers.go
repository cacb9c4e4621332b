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

// driverRun is what the runner records of one driver process: its exit
// code, and both processes' CPU use over the driver's measured window.
type driverRun struct {
	ExitCode int
	Driver   ProcUsage
	Server   ProcUsage
}

// cpuSampleEvery is how often the runner reads both processes' CPU time
// while a measured driver runs: the window's start falls between two
// samples and is interpolated. /proc counts in 10 ms ticks.
const cpuSampleEvery = 50 * time.Millisecond

// runDriver runs one driver process to completion, pinned to the driver's
// CPUs. With serverPID > 0 it samples both processes' CPU time while the
// driver runs, and reports their use over the driver's measured window only:
// the last duration_s seconds before the driver exited, so that connecting
// (a second for a thousand connections) is not counted as load. ctx
// cancellation stops the driver with SIGINT, which k6 and cmd/load treat as
// an early end.
func runDriver(ctx context.Context, cfg Config, d driver, job driverJob, serverPID int) (*Result, driverRun, error) {
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
	if err := cmd.Start(); err != nil {
		return nil, driverRun{}, fmt.Errorf("%s: %w", d.Name, err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }() // joined below
	var samples []cpuSample
	sample := func(driverCPU float64) {
		if serverPID <= 0 {
			return
		}
		srv, err := procCPUSeconds(serverPID)
		if err != nil {
			return
		}
		samples = append(samples, cpuSample{t: time.Now(), server: srv, driver: driverCPU})
	}
	tick := time.NewTicker(cpuSampleEvery)
	defer tick.Stop()
	sample(0)
loop:
	for {
		select {
		case err = <-waited:
			break loop
		case <-tick.C:
			if c, err := procCPUSeconds(cmd.Process.Pid); err == nil {
				sample(c)
			}
		}
	}
	ps := cmd.ProcessState
	driverTotal := (ps.UserTime() + ps.SystemTime()).Seconds()
	sample(driverTotal) // the exact total at exit
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return nil, driverRun{}, fmt.Errorf("%s: %w", d.Name, err)
	}
	if ctx.Err() != nil {
		return nil, driverRun{}, ctx.Err()
	}
	run := driverRun{ExitCode: ps.ExitCode()}
	res, err := d.result(cfg, job)
	if err != nil {
		return nil, run, fmt.Errorf("%s exited %d and left no result (see %s): %w", d.Name, run.ExitCode, filepath.Base(job.log), err)
	}
	run.Server, run.Driver = windowUsage(samples, res.DurationS)
	run.Server.CPUs, run.Driver.CPUs = cfg.ServerCPUs, cfg.DriverCPUs
	return res, run, nil
}

// cpuSample is both processes' CPU time so far, at one moment.
type cpuSample struct {
	t              time.Time
	server, driver float64
}

// windowUsage is both processes' CPU use over the last window seconds of the
// samples (all of them when the window is longer or unknown), the start
// interpolated between the samples around it.
func windowUsage(samples []cpuSample, window float64) (server, driver ProcUsage) {
	if len(samples) < 2 {
		return ProcUsage{}, ProcUsage{}
	}
	first, last := samples[0], samples[len(samples)-1]
	start := first
	if span := last.t.Sub(first.t).Seconds(); window > 0 && window < span {
		at := last.t.Add(-time.Duration(window * float64(time.Second)))
		for i := 1; i < len(samples); i++ {
			a, b := samples[i-1], samples[i]
			if b.t.Before(at) {
				continue
			}
			f := 0.0
			if d := b.t.Sub(a.t); d > 0 {
				f = float64(at.Sub(a.t)) / float64(d)
			}
			start = cpuSample{t: at, server: a.server + f*(b.server-a.server), driver: a.driver + f*(b.driver-a.driver)}
			break
		}
	}
	wall := last.t.Sub(start.t).Seconds()
	return ProcUsage{CPUSeconds: last.server - start.server, WallSeconds: wall},
		ProcUsage{CPUSeconds: last.driver - start.driver, WallSeconds: wall}
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
