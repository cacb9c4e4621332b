package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/locklab/locklab/load"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
)

// RunSpec is one cell of the comparison's grid.
type RunSpec struct {
	Index    int     `json:"index"` // 1-based, in execution order
	ID       string  `json:"id"`
	Workload string  `json:"workload"`
	Scenario string  `json:"scenario,omitempty"`
	Driver   string  `json:"driver"`
	Factors  Factors `json:"factors"`
	Mode     string  `json:"mode"`
	Model    string  `json:"model"`
	Level    int     `json:"level"` // callers (closed) or calls/s (open)
	Rep      int     `json:"rep"`   // 1-based

	wl Workload
}

// Check is one invariant checked through the API after a run.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// RunRecord is everything the report says of one run: the driver's result
// and the server's stats as received, plus what the runner measured and
// checked. Written as runs/<id>.json; the report is computed from these files
// only.
type RunRecord struct {
	RunSpec
	Started     time.Time       `json:"started"`
	Result      *Result         `json:"result"`
	DriverExit  int             `json:"driver_exit_code"`
	DriverProc  ProcUsage       `json:"driver_proc"`         // over the measured driver process's life
	ServerProc  ProcUsage       `json:"server_proc"`         // over the same window, from /proc
	StatsBefore json.RawMessage `json:"server_stats_before"` // right after the reset, before the driver
	Stats       json.RawMessage `json:"server_stats"`        // AdminService/GetStats after the run
	ServerExit  int             `json:"server_exit_code"`
	StopSeconds float64         `json:"server_stop_seconds"`
	Checks      []Check         `json:"invariants"`
	Problems    []string        `json:"problems,omitempty"`
	Profile     []string        `json:"profile,omitempty"` // files beside the record: CPU profile, trace
	Derived     Derived         `json:"derived"`

	// Legacy fields: records written before the driver seam held k6's own
	// summary and process figures; loadRecords carries them over.
	LegacySummary *load.K6Summary `json:"k6_summary,omitempty"`
	LegacyK6      *struct {
		CPUSeconds  float64 `json:"cpu_seconds"`
		WallSeconds float64 `json:"wall_seconds"`
		ExitCode    int     `json:"exit_code"`
	} `json:"k6,omitempty"`
}

// Failed reports whether the run broke an invariant or failed outright.
func (r *RunRecord) Failed() bool { return len(r.Problems) > 0 }

// plan lays out the runs: repetitions outermost so that drift over time hits
// every mode and driver alike, and modes alternating in direction from one
// repetition to the next (A B C, C B A, …) so no mode always runs first.
// Cells no mode can fill (see naCells) get no runs.
func plan(cfg Config) []RunSpec {
	na := naCells(cfg)
	var specs []RunSpec
	for rep := 1; rep <= cfg.Reps; rep++ {
		for _, wl := range cfg.Workloads {
			for _, drvName := range cfg.Drivers {
				d, _ := lookupDriver(drvName)
				if !d.serves(wl, cfg.Model) {
					continue
				}
				seen := map[Factors]bool{}
				for _, f := range cfg.Factors.combos() {
					f = f.forWorkload(wl.Kind)
					if seen[f] {
						continue
					}
					seen[f] = true
					for _, level := range cfg.levels(drvName) {
						for i := range cfg.Modes {
							mode := cfg.Modes[i]
							if rep%2 == 0 {
								mode = cfg.Modes[len(cfg.Modes)-1-i]
							}
							if _, ok := naFor(na, wl.Name, mode, f.Durability); ok {
								continue
							}
							specs = append(specs, RunSpec{
								Workload: wl.Name, Scenario: wl.Scenario, Driver: drvName, Factors: f, Mode: mode,
								Model: cfg.Model, Level: level, Rep: rep, wl: wl,
							})
						}
					}
				}
			}
		}
	}
	for i := range specs {
		s := &specs[i]
		s.Index = i + 1
		s.ID = fmt.Sprintf("%03d-%s-%s-%s-%s%d%s-rep%d", s.Index, s.Workload, s.Driver, s.Mode, levelUnit(s.Model), s.Level, s.Factors.idSuffix(), s.Rep)
	}
	return specs
}

func levelUnit(model string) string {
	if model == "open" {
		return "rate"
	}
	return "vus"
}

// runAll runs every spec, writing each record as it finishes, and returns the
// records. Progress goes to out.
func runAll(ctx context.Context, cfg Config, specs []RunSpec, out io.Writer) ([]*RunRecord, error) {
	runsDir := filepath.Join(cfg.Out, "runs")
	if err := os.MkdirAll(runsDir, 0o755); err != nil {
		return nil, err
	}
	var records []*RunRecord
	start := time.Now()
	for i, spec := range specs {
		rec, err := runOne(ctx, cfg, spec, runsDir)
		if err != nil {
			return records, fmt.Errorf("run %s: %w", spec.ID, err)
		}
		if err := writeJSON(filepath.Join(runsDir, spec.ID+".json"), rec); err != nil {
			return records, err
		}
		records = append(records, rec)
		elapsed := time.Since(start)
		left := time.Duration(float64(elapsed) / float64(i+1) * float64(len(specs)-i-1))
		fmt.Fprintf(out, "[%d/%d] %s\n        %s | elapsed %s, about %s left\n",
			i+1, len(specs), spec.ID, headline(rec), elapsed.Round(time.Second), left.Round(time.Second))
	}
	return records, nil
}

func headline(r *RunRecord) string {
	s := fmt.Sprintf("%s calls/s, p50 %s, p99 %s, server %.0f%% of %d CPU, %s %.0f%% of %d CPU: %s",
		fmtNum(r.Derived.CallsPerSec), fmtMs(r.Result.LatencyMs.P50), fmtMs(r.Result.LatencyMs.P99),
		r.Derived.ServerUtil*100, cpuCount(r.ServerProc, r.Derived.CPUs), r.Driver, r.Derived.DriverUtil*100, cpuCount(r.DriverProc, r.Derived.CPUs), r.Derived.Class)
	if r.Failed() {
		s += fmt.Sprintf(", FAILED: %v", r.Problems)
	}
	return s
}

func cpuCount(u ProcUsage, machine int) int {
	if len(u.CPUs) > 0 {
		return len(u.CPUs)
	}
	return machine
}

// serverArgs are the server's flags for a run: its mode, a free loopback
// port, and the factors the server takes.
func serverArgs(spec RunSpec, dataDir, metricsAddr string) []string {
	args := []string{"-mode", spec.Mode, "-addr", "127.0.0.1:0"}
	if spec.Factors.Work > 0 {
		args = append(args, "-work", spec.Factors.Work.String())
	}
	if spec.Factors.Durability == durabilityWAL {
		args = append(args, "-durability", durabilityWAL, "-data-dir", dataDir)
	}
	if metricsAddr != "" {
		args = append(args, "-metrics-addr", metricsAddr)
	}
	return args
}

// runOne starts a fresh server, warms it up, resets it, measures, checks the
// invariants and stops the server.
func runOne(ctx context.Context, cfg Config, spec RunSpec, runsDir string) (*RunRecord, error) {
	rec := &RunRecord{RunSpec: spec, Started: time.Now().UTC()}
	d, _ := lookupDriver(spec.Driver)
	scratch, err := os.MkdirTemp("", "locklab-run-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch) // the WAL directory, h2load's frame and request log
	dataDir := filepath.Join(scratch, "data")
	if err := os.Mkdir(dataDir, 0o700); err != nil {
		return nil, err
	}
	profiling := isProfileRun(cfg.Profile, spec)
	var metricsAddr string
	if profiling {
		if metricsAddr, err = freeLoopbackAddr(); err != nil {
			return nil, err
		}
	}
	srv, err := startServer(cfg.Server, serverArgs(spec, dataDir, metricsAddr), cfg.ServerCPUs, filepath.Join(runsDir, spec.ID+".server.log"))
	if err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			srv.stop()
		}
	}()
	conn, err := grpc.NewClient(srv.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	admin := locklabv1.NewAdminServiceClient(conn)

	job := driverJob{spec: spec, addr: srv.addr, scratch: scratch}
	if cfg.Warmup > 0 {
		w := job
		w.warmup, w.duration = true, cfg.Warmup
		w.summary = filepath.Join(scratch, "warmup.json")
		w.log = filepath.Join(runsDir, spec.ID+".warmup.log")
		res, run, err := runDriver(ctx, cfg, d, w, 0)
		if err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
		if run.ExitCode != 0 {
			rec.Problems = append(rec.Problems, fmt.Sprintf("warm-up %s exited %d (see %s.warmup.log)", d.Name, run.ExitCode, spec.ID))
		}
		job.prior = res
	}
	// The reset starts the server's measurement window and gives the
	// measured run known state to check against.
	if _, err := admin.Reset(ctx, resetRequest(spec)); err != nil {
		return nil, fmt.Errorf("reset: %w", err)
	}
	before, err := admin.GetStats(ctx, &locklabv1.GetStatsRequest{})
	if err != nil {
		return nil, fmt.Errorf("stats before: %w", err)
	}
	var prof *profiler
	if profiling {
		prof = startProfile(ctx, metricsAddr, cfg.Duration, filepath.Join(runsDir, spec.ID))
		defer prof.wait() // on an early return; a second wait returns at once
	}
	job.duration = cfg.Duration
	job.summary = filepath.Join(runsDir, spec.ID+".summary.json")
	job.log = filepath.Join(runsDir, spec.ID+"."+d.Name+".log")
	res, run, err := runDriver(ctx, cfg, d, job, srv.pid())
	if err != nil {
		return nil, err
	}
	rec.Result, rec.DriverExit, rec.DriverProc, rec.ServerProc = res, run.ExitCode, run.Driver, run.Server
	if prof != nil {
		files, err := prof.wait()
		if err != nil {
			rec.Problems = append(rec.Problems, "profile: "+err.Error())
		}
		rec.Profile = files
	}
	after, err := admin.GetStats(ctx, &locklabv1.GetStatsRequest{})
	if err != nil {
		return nil, fmt.Errorf("stats after: %w", err)
	}
	// Zeros written out too: a figure the server has but measured as zero
	// is told apart from one it does not have.
	asJSON := protojson.MarshalOptions{EmitUnpopulated: true}
	if rec.StatsBefore, err = asJSON.Marshal(before); err != nil {
		return nil, err
	}
	if rec.Stats, err = asJSON.Marshal(after); err != nil {
		return nil, err
	}
	stopped = true
	exit, took := srv.stop()
	rec.ServerExit, rec.StopSeconds = exit, took.Seconds()
	if rec.DriverExit != 0 {
		rec.Problems = append(rec.Problems, fmt.Sprintf("%s exited %d: failed checks or thresholds (see %s.%s.log)", d.Name, rec.DriverExit, spec.ID, d.Name))
	}
	if rec.ServerExit != 0 {
		rec.Problems = append(rec.Problems, fmt.Sprintf("server exited %d after SIGTERM, want 0", rec.ServerExit))
	}
	rec.Checks = checkInvariants(spec, rec.Result, before, after)
	for _, c := range rec.Checks {
		if !c.OK {
			rec.Problems = append(rec.Problems, "INVARIANT VIOLATED: "+c.Name+": "+c.Detail)
		}
	}
	rec.Derived = derive(rec)
	return rec, nil
}

// resetRequest is the state every measured run starts from: the bank in the
// workload's scenario with the default size and balance.
func resetRequest(spec RunSpec) *locklabv1.ResetRequest {
	sc := locklabv1.Scenario_SCENARIO_A
	switch spec.Scenario {
	case "B":
		sc = locklabv1.Scenario_SCENARIO_B
	case "C":
		sc = locklabv1.Scenario_SCENARIO_C
	}
	return &locklabv1.ResetRequest{Scenario: sc}
}

// checkInvariants checks what must hold after any run of a store-backed mode:
// money conserved and never negative, and no acknowledged increment lost.
// For h2load, which cannot read gRPC trailers, the last check is what proves
// its calls succeeded: the counter must equal the calls it completed.
func checkInvariants(spec RunSpec, res *Result, before, after *locklabv1.GetStatsResponse) []Check {
	if !after.GetStoreBacked() {
		return []Check{{Name: "store-backed", OK: true, Detail: "mode " + after.GetMode() + " keeps no state: nothing to check"}}
	}
	var checks []Check
	add := func(name string, ok bool, format string, args ...any) {
		checks = append(checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
	}
	add("money conserved", after.GetTotalBalance() == before.GetTotalBalance(),
		"total balance %d before, %d after", before.GetTotalBalance(), after.GetTotalBalance())
	add("no negative balance", after.GetMinBalance() >= 0, "smallest balance %d", after.GetMinBalance())
	acked := res.AckedIncrementDelta
	got := after.GetCounterValue() - before.GetCounterValue()
	if res.UnexpectedErrors == 0 {
		add("no lost increment", got == acked, "counter moved by %d, %s saw %d acknowledged", got, spec.Driver, acked)
	} else {
		// A call that failed in flight may still have been applied; only
		// the acknowledged ones are owed.
		add("no lost increment", got >= acked, "counter moved by %d, %s saw %d acknowledged and %d unexpected errors", got, spec.Driver, acked, res.UnexpectedErrors)
	}
	return checks
}

// Derived are the per-run figures computed from the raw data; loadRecords
// recomputes them, so the report never trusts a stored copy.
type Derived struct {
	CallsPerSec        float64 `json:"calls_per_sec"`
	ServerCores        float64 `json:"server_cores"`
	ServerUtil         float64 `json:"server_util"` // of its own CPUs
	DriverCores        float64 `json:"driver_cores"`
	DriverUtil         float64 `json:"driver_util"`
	ServerCPUPerCallUs float64 `json:"server_cpu_us_per_call"`
	Class              Class   `json:"class"`
	CPUs               int     `json:"cpus"` // the machine's
}

func derive(r *RunRecord) Derived {
	d := Derived{CPUs: runtime.NumCPU()}
	if r.Result != nil {
		d.CallsPerSec = r.Result.CallsPerS
		if d.CallsPerSec == 0 && r.Result.DurationS > 0 {
			d.CallsPerSec = float64(r.Result.Calls) / r.Result.DurationS
		}
	}
	st := stats(r)
	server := r.ServerProc
	if server.WallSeconds == 0 { // records from before the runner read /proc
		server = ProcUsage{CPUSeconds: st.GetCpuSeconds(), WallSeconds: st.GetWindowSeconds()}
	}
	d.ServerCores, d.ServerUtil = server.Cores(), server.Util(d.CPUs)
	d.DriverCores, d.DriverUtil = r.DriverProc.Cores(), r.DriverProc.Util(d.CPUs)
	if len(server.CPUs) == 0 && len(r.DriverProc.CPUs) == 0 {
		// Unpinned, the two share the machine: each is judged against
		// the CPU the other left it.
		d.ServerUtil = d.ServerCores / max(0.01, float64(d.CPUs)-d.DriverCores)
		d.DriverUtil = d.DriverCores / max(0.01, float64(d.CPUs)-d.ServerCores)
	}
	if n := st.GetRequests(); n > 0 {
		d.ServerCPUPerCallUs = st.GetCpuSeconds() / float64(n) * 1e6
	}
	d.Class = classify(d.ServerUtil, d.DriverUtil)
	return d
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func fmtMs(ms float64) string {
	switch {
	case ms >= 1000:
		return strconv.FormatFloat(ms/1000, 'f', 2, 64) + "s"
	case ms >= 1:
		return strconv.FormatFloat(ms, 'f', 2, 64) + "ms"
	default:
		return strconv.FormatFloat(ms*1000, 'f', 1, 64) + "µs"
	}
}
