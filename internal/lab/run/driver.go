package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/prometheus/procfs"

	"github.com/locklab/locklab/internal/lab/cpuset"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/summary"
)

// A Driver is a load generator the runner can start: it turns one job into
// a command line, and reads the driver-neutral summary back once the process
// has exited. Each lives in its own file; Drivers is the one list of them.
type Driver interface {
	Name() string
	Doc() string
	// Serves reports whether the driver can run a workload under a model.
	Serves(wl plan.Workload, model string) bool
	// Command is the driver's command line and extra environment.
	Command(cfg Config, job Job) (argv, env []string, err error)
	// Result reads the run's summary after the process has exited.
	Result(cfg Config, job Job) (*summary.Summary, error)
	// Version names the driver's build for meta.json ("" to leave out).
	Version(cfg Config) string
	// Binary is the program Command runs, and how to get it.
	Binary(cfg Config) (path, hint string)
}

// A connector is a driver whose callers do not share -conns connections:
// Conns is how many a closed-model run at level callers opens, for the
// runner's estimate of the plan's time (PlanDuration). A driver without the
// method shares -conns among its callers, as the Go driver does.
type connector interface {
	Conns(cfg Config, level int) int
}

// Drivers are the load generators, in the order -h lists them.
var Drivers = []Driver{goDriver{}, k6Driver{}, h2loadDriver{}, ghzDriver{}}

// DriverNames lists the drivers' names.
func DriverNames() []string {
	names := make([]string, len(Drivers))
	for i, d := range Drivers {
		names[i] = d.Name()
	}
	return names
}

// LookupDriver finds a driver by name.
func LookupDriver(name string) (Driver, bool) {
	for _, d := range Drivers {
		if d.Name() == name {
			return d, true
		}
	}
	return nil, false
}

// Serves is the plan's view of the drivers.
func Serves(driver string, wl plan.Workload, model string) bool {
	d, ok := LookupDriver(driver)
	return ok && d.Serves(wl, model)
}

// Job is one invocation of a driver: a warm-up or a measured run.
type Job struct {
	Spec     plan.Spec
	Addr     string
	Duration time.Duration
	Warmup   bool
	Summary  string           // where the driver writes its summary (h2load: the runner does)
	Log      string           // the driver's stdout and stderr
	Scratch  string           // a directory for the job's temporary files
	Prior    *summary.Summary // the warm-up's summary, for a measured run
	Place    plan.Placement   // the run's CPUs
	// Timeline asks the driver for the window in intervals this long
	// (0: none); only the Go driver has them.
	Timeline time.Duration
	// Marked: the runner marks the window itself, writing a line to the
	// driver's stdin at each of its two ends and closing it after, and
	// Duration bounds the whole run (the Go driver's -window-stdin; side
	// by side, every arm's latency then covers the servers' window).
	Marked bool
}

// DriverRun is what the runner records of one driver process: its exit
// code, and both processes' CPU use over the driver's measured window.
type DriverRun struct {
	ExitCode int
	Driver   record.ProcUsage
	Server   record.ProcUsage
	// Backend is the CPU of the server's child processes (a private
	// database or cache it started) over the same window: the lab's own.
	Backend record.ProcUsage
	// Runner is the runner's own CPU over the same window: the lab's too.
	Runner    record.ProcUsage
	DriverSet record.SetUsage
	ServerSet record.SetUsage
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
func runDriver(ctx context.Context, cfg Config, d Driver, job Job, serverPID int) (*summary.Summary, DriverRun, error) {
	argv, env, err := d.Command(cfg, job)
	if err != nil {
		return nil, DriverRun{}, err
	}
	argv = pinned(job.Place.Driver, argv)
	log, err := os.Create(job.Log)
	if err != nil {
		return nil, DriverRun{}, err
	}
	defer log.Close()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	maxProcs := cfg.gomaxprocs(job.Place.Driver)
	cmd.Env = append(append(os.Environ(), gomaxprocsEnv(maxProcs)...), env...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, DriverRun{}, fmt.Errorf("%s: %w", d.Name(), err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }() // joined below
	var samples []cpuSample
	// The CPU sets are read beside the processes, at the same moments, so
	// both cover the same window; a /proc/stat that cannot be read leaves
	// the sets unsampled, not the run failed.
	procFS, fsErr := procfs.NewDefaultFS()
	sample := func(driverCPU float64) {
		if serverPID <= 0 {
			return
		}
		srv, err := procCPUSeconds(serverPID)
		if err != nil {
			return
		}
		s := cpuSample{t: time.Now(), server: srv, driver: driverCPU}
		if self, err := procCPUSeconds(os.Getpid()); err == nil {
			s.runner = self
		}
		if fsErr == nil {
			s.backend = descendantsCPUSeconds(procFS, serverPID)
			if c, err := cpuset.Read(procFS); err == nil {
				s.sets, s.serverSet, s.driverSet = true, c.Set(job.Place.Server), c.Set(job.Place.Driver)
			}
		}
		samples = append(samples, s)
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
		return nil, DriverRun{}, fmt.Errorf("%s: %w", d.Name(), err)
	}
	if ctx.Err() != nil {
		return nil, DriverRun{}, ctx.Err()
	}
	run := DriverRun{ExitCode: ps.ExitCode()}
	res, err := d.Result(cfg, job)
	if err != nil {
		return nil, run, fmt.Errorf("%s exited %d and left no result (see %s): %w", d.Name(), run.ExitCode, filepath.Base(job.Log), err)
	}
	run.Server, run.Driver = windowUsage(samples, res.DurationS)
	run.ServerSet, run.DriverSet = windowSets(samples, res.DurationS)
	run.Backend = windowOf(samples, res.DurationS, func(s cpuSample) float64 { return s.backend })
	run.Runner = windowOf(samples, res.DurationS, func(s cpuSample) float64 { return s.runner })
	run.Server.CPUs, run.Driver.CPUs = job.Place.Server, job.Place.Driver
	if run.Backend.CPUSeconds > 0 {
		run.Backend.CPUs = job.Place.Server // a child inherits the server's affinity
	} else {
		run.Backend = record.ProcUsage{}
	}
	// The server was started on the same placement (processes.startServer).
	run.Server.GOMAXPROCS, run.Driver.GOMAXPROCS = cfg.gomaxprocs(job.Place.Server), maxProcs
	return res, run, nil
}

// cpuSample is both processes' CPU time so far, at one moment, and their CPU
// sets' counters (sets false when /proc/stat could not be read).
type cpuSample struct {
	t                    time.Time
	server, driver       float64
	backend              float64 // the server's child processes
	runner               float64 // the runner itself
	sets                 bool
	serverSet, driverSet record.SetUsage
}

// windowStart finds where the last window seconds of the samples begin:
// between samples i-1 and i, a fraction f of the way (i = 0: at the first
// sample, the window being longer than the samples or unknown). ok is false
// with fewer than two samples.
func windowStart(samples []cpuSample, window float64) (i int, f float64, ok bool) {
	if len(samples) < 2 {
		return 0, 0, false
	}
	first, last := samples[0], samples[len(samples)-1]
	if span := last.t.Sub(first.t).Seconds(); !(window > 0 && window < span) {
		return 0, 0, true
	}
	at := last.t.Add(-time.Duration(window * float64(time.Second)))
	for i = 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		if b.t.Before(at) {
			continue
		}
		if d := b.t.Sub(a.t); d > 0 {
			f = float64(at.Sub(a.t)) / float64(d)
		}
		return i, f, true
	}
	return 0, 0, true
}

// windowUsage is both processes' CPU use over the last window seconds of the
// samples (all of them when the window is longer or unknown), the start
// interpolated between the samples around it.
func windowUsage(samples []cpuSample, window float64) (server, driver record.ProcUsage) {
	return windowOf(samples, window, func(s cpuSample) float64 { return s.server }),
		windowOf(samples, window, func(s cpuSample) float64 { return s.driver })
}

// windowOf is one process's CPU (get reads it from a sample) over the
// window windowUsage describes; never negative (a child that exits takes
// its CPU out of a descendants' sum).
func windowOf(samples []cpuSample, window float64, get func(cpuSample) float64) record.ProcUsage {
	i, f, ok := windowStart(samples, window)
	if !ok {
		return record.ProcUsage{}
	}
	t0, v0, last := samples[0].t, get(samples[0]), samples[len(samples)-1]
	if i > 0 {
		a, b := samples[i-1], samples[i]
		t0, v0 = a.t.Add(time.Duration(f*float64(b.t.Sub(a.t)))), get(a)+f*(get(b)-get(a))
	}
	return record.ProcUsage{CPUSeconds: max(get(last)-v0, 0), WallSeconds: last.t.Sub(t0).Seconds()}
}

// windowSets is the two CPU sets' time over the same window as
// windowUsage, from the samples that read /proc/stat; zero when fewer than
// two did.
func windowSets(samples []cpuSample, window float64) (server, driver record.SetUsage) {
	var read []cpuSample
	for _, s := range samples {
		if s.sets {
			read = append(read, s)
		}
	}
	i, f, ok := windowStart(read, window)
	if !ok {
		return record.SetUsage{}, record.SetUsage{}
	}
	start, last := read[0], read[len(read)-1]
	if i > 0 {
		a, b := read[i-1], read[i]
		start.serverSet, start.driverSet = cpuset.Lerp(a.serverSet, b.serverSet, f), cpuset.Lerp(a.driverSet, b.driverSet, f)
	}
	return last.serverSet.Minus(start.serverSet), last.driverSet.Minus(start.driverSet)
}
