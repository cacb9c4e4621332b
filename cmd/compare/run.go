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

	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
)

// RunSpec is one cell of the comparison's grid.
type RunSpec struct {
	Index    int    `json:"index"` // 1-based, in execution order
	ID       string `json:"id"`
	Workload string `json:"workload"`
	Scenario string `json:"scenario,omitempty"`
	Mode     string `json:"mode"`
	Model    string `json:"model"`
	Level    int    `json:"level"` // VUs (closed) or iterations/s (open)
	Rep      int    `json:"rep"`   // 1-based

	wl Workload
}

// Check is one invariant checked through the API after a run.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// RunRecord is everything the report says of one run: the raw k6 summary and
// server stats, as received, plus what the runner measured and checked.
// Written as runs/<id>.json; the report is computed from these files only.
type RunRecord struct {
	RunSpec
	Started     time.Time       `json:"started"`
	K6          k6Result        `json:"k6"`
	Summary     *K6Summary      `json:"k6_summary"`
	StatsBefore json.RawMessage `json:"server_stats_before"` // right after the reset, before k6
	Stats       json.RawMessage `json:"server_stats"`        // AdminService/GetStats after the run
	ServerExit  int             `json:"server_exit_code"`
	StopSeconds float64         `json:"server_stop_seconds"`
	Checks      []Check         `json:"invariants"`
	Problems    []string        `json:"problems,omitempty"`
	Derived     Derived         `json:"derived"`
}

// Failed reports whether the run broke an invariant or failed outright.
func (r *RunRecord) Failed() bool { return len(r.Problems) > 0 }

// plan lays out the runs: repetitions outermost so that drift over time hits
// every mode alike, and modes alternating in direction from one repetition to
// the next (A B C, C B A, …) so no mode always runs first.
func plan(cfg Config) []RunSpec {
	var specs []RunSpec
	for rep := 1; rep <= cfg.Reps; rep++ {
		for _, wl := range cfg.Workloads {
			for _, level := range cfg.Levels {
				for i := range cfg.Modes {
					mode := cfg.Modes[i]
					if rep%2 == 0 {
						mode = cfg.Modes[len(cfg.Modes)-1-i]
					}
					specs = append(specs, RunSpec{
						Workload: wl.Name, Scenario: wl.Scenario, Mode: mode, Model: cfg.Model,
						Level: level, Rep: rep, wl: wl,
					})
				}
			}
		}
	}
	for i := range specs {
		s := &specs[i]
		s.Index = i + 1
		s.ID = fmt.Sprintf("%03d-%s-%s-%s%d-rep%d", s.Index, s.Workload, s.Mode, levelUnit(s.Model), s.Level, s.Rep)
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
	s := fmt.Sprintf("%.0f req/s, p95 %s, p99 %s, k6 %.2f cores, server %.2f cores",
		r.Derived.RequestsPerSec, fmtMs(r.Summary.GRPCReqDuration.All.P95), fmtMs(r.Summary.GRPCReqDuration.All.P99),
		r.K6.Cores, r.Derived.ServerCores)
	if r.Derived.K6Saturated {
		s += ", K6 SATURATED"
	}
	if r.Failed() {
		s += fmt.Sprintf(", FAILED: %v", r.Problems)
	}
	return s
}

// runOne starts a fresh server, warms it up, resets it, measures, checks the
// invariants and stops the server.
func runOne(ctx context.Context, cfg Config, spec RunSpec, runsDir string) (*RunRecord, error) {
	rec := &RunRecord{RunSpec: spec, Started: time.Now().UTC()}
	srv, err := startServer(cfg.Server, spec.Mode, filepath.Join(runsDir, spec.ID+".server.log"))
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
	script := filepath.Join(cfg.Scripts, spec.wl.Script)

	if cfg.Warmup > 0 {
		env := k6Env(cfg, spec, srv.addr, cfg.Warmup, "")
		res, err := runK6(ctx, cfg.K6, script, env, filepath.Join(runsDir, spec.ID+".warmup.log"))
		if err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
		if res.ExitCode != 0 {
			rec.Problems = append(rec.Problems, fmt.Sprintf("warm-up k6 exited %d (see %s.warmup.log)", res.ExitCode, spec.ID))
		}
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
	summaryPath := filepath.Join(runsDir, spec.ID+".k6.json")
	env := k6Env(cfg, spec, srv.addr, cfg.Duration, summaryPath)
	if rec.K6, err = runK6(ctx, cfg.K6, script, env, filepath.Join(runsDir, spec.ID+".k6.log")); err != nil {
		return nil, err
	}
	if rec.Summary, err = readK6Summary(summaryPath); err != nil {
		return nil, err
	}
	after, err := admin.GetStats(ctx, &locklabv1.GetStatsRequest{})
	if err != nil {
		return nil, fmt.Errorf("stats after: %w", err)
	}
	if rec.StatsBefore, err = protojson.Marshal(before); err != nil {
		return nil, err
	}
	if rec.Stats, err = protojson.Marshal(after); err != nil {
		return nil, err
	}
	stopped = true
	exit, took := srv.stop()
	rec.ServerExit, rec.StopSeconds = exit, took.Seconds()
	if rec.K6.ExitCode != 0 {
		rec.Problems = append(rec.Problems, fmt.Sprintf("k6 exited %d: failed checks or thresholds (see %s.k6.log)", rec.K6.ExitCode, spec.ID))
	}
	if rec.ServerExit != 0 {
		rec.Problems = append(rec.Problems, fmt.Sprintf("server exited %d after SIGTERM, want 0", rec.ServerExit))
	}
	rec.Checks = checkInvariants(spec, rec.Summary, before, after)
	for _, c := range rec.Checks {
		if !c.OK {
			rec.Problems = append(rec.Problems, "INVARIANT VIOLATED: "+c.Name+": "+c.Detail)
		}
	}
	rec.Derived = derive(rec.Summary, rec.K6, after)
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

// k6Env is the scripts' configuration (docs/k6.md). The runner resets the
// server itself, so the scripts must not (RESET=0).
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
	if summaryPath != "" {
		env = append(env, "SUMMARY_JSON="+summaryPath)
	}
	return env
}

// checkInvariants checks what must hold after any run of a store-backed mode:
// money conserved and never negative, and no acknowledged increment lost.
func checkInvariants(spec RunSpec, sum *K6Summary, before, after *locklabv1.GetStatsResponse) []Check {
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
	acked := int64(sum.AckedIncrementDelta)
	got := after.GetCounterValue() - before.GetCounterValue()
	if sum.UnexpectedErrors == 0 {
		add("no lost increment", got == acked, "counter moved by %d, k6 saw %d acknowledged", got, acked)
	} else {
		// A call that failed in flight may still have been applied; only
		// the acknowledged ones are owed.
		add("no lost increment", got >= acked, "counter moved by %d, k6 saw %d acknowledged and %.0f unexpected errors", got, acked, sum.UnexpectedErrors)
	}
	return checks
}

// Derived are the per-run figures computed from the raw data.
type Derived struct {
	RequestsPerSec   float64 `json:"requests_per_sec"`
	ServerCores      float64 `json:"server_cores"`
	ServerCPUPerReqU float64 `json:"server_cpu_us_per_request"`
	// K6Saturated: k6 used nearly all the CPU the server left it, so the
	// run's throughput is a property of the load generator.
	K6Saturated bool    `json:"k6_saturated"`
	MachineBusy float64 `json:"machine_busy"` // (k6 + server cores) / CPUs
	CPUs        int     `json:"cpus"`
}

// saturation is the share of the CPU left by the server that k6 must use for
// the run to count as load-generator bound.
const saturation = 0.85

func derive(sum *K6Summary, k6 k6Result, st *locklabv1.GetStatsResponse) Derived {
	d := Derived{CPUs: runtime.NumCPU()}
	if secs := sum.TestRunDurationMs / 1000; secs > 0 {
		d.RequestsPerSec = sum.GRPCReqDuration.All.Count / secs
	}
	if w := st.GetWindowSeconds(); w > 0 {
		d.ServerCores = st.GetCpuSeconds() / w
	}
	if n := st.GetRequests(); n > 0 {
		d.ServerCPUPerReqU = st.GetCpuSeconds() / float64(n) * 1e6
	}
	d.MachineBusy = (k6.Cores + d.ServerCores) / float64(d.CPUs)
	d.K6Saturated = k6.Cores >= saturation*(float64(d.CPUs)-d.ServerCores)
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
