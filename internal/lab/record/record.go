package record

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/locklab/locklab/internal/lab/ledger"
	"github.com/locklab/locklab/internal/lab/plan"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

// Check is one invariant checked through the API after a run.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Run is everything the report says of one run: the driver's summary and
// the server's stats as received, plus what the runner measured and
// checked. Written as runs/<id>.json.
type Run struct {
	plan.Spec
	Started    time.Time        `json:"started"`
	Result     *summary.Summary `json:"result"`
	DriverExit int              `json:"driver_exit_code"`
	DriverProc ProcUsage        `json:"driver_proc"`           // over the measured driver process's life
	SharedCPUs bool             `json:"shared_cpus,omitempty"` // the driver ran on the server's CPUs (-share-cpus)
	ServerProc ProcUsage        `json:"server_proc"`           // over the same window, from /proc
	// BackendProc is the CPU of the server's child processes over the same
	// window — the private database or cache it started, on its CPUs — or
	// zero where it started none. It is the lab's own CPU to the validity
	// gate; the server's CPU per call leaves it out.
	BackendProc ProcUsage `json:"backend_proc,omitzero"`
	// RunnerProc is the runner's own CPU over the same window (unpinned):
	// the lab's too, counted on every set it could have run on.
	RunnerProc ProcUsage `json:"runner_proc,omitzero"`
	// ServerSet and DriverSet are the two CPU sets' time over the same
	// window, from /proc/stat: what else ran on them, and steal.
	ServerSet   SetUsage        `json:"server_cpu_set"`
	DriverSet   SetUsage        `json:"driver_cpu_set"`
	StatsBefore json.RawMessage `json:"server_stats_before"` // right after the reset, before the driver
	Stats       json.RawMessage `json:"server_stats"`        // AdminService/GetStats after the run
	ServerExit  int             `json:"server_exit_code"`
	StopSeconds float64         `json:"server_stop_seconds"`
	Checks      []Check         `json:"invariants"`
	Problems    []string        `json:"problems,omitempty"`
	Profile     []string        `json:"profile,omitempty"` // files beside the record: CPU profile, trace
	Derived     Derived         `json:"derived"`
	// Attribution is where the server's CPU went (-attribute); nil for a
	// run not profiled.
	Attribution *Attribution `json:"attribution,omitempty"`
	// Ledger is where each call's server-side time went, by state, from the
	// server's execution trace over the measured window (-ledger on); nil
	// for a run not traced.
	Ledger *ledger.Summary `json:"ledger,omitempty"`
	// HistogramDropped says why the result has no latency histogram where
	// its driver wrote one: the archive it was packed into left it out, as
	// no report reads it (DropHistogram); "" for a record that keeps what
	// its driver wrote.
	HistogramDropped string `json:"histogram_dropped,omitempty"`
}

// MarshalJSON writes the record with each latency histogram once: where
// the driver's result has its HDR histogram, the percentile curve drawn
// from it is left out, and Load draws it again (CurveFromHDR). A result
// without a histogram (k6's) keeps its curve, the only copy.
func (r Run) MarshalJSON() ([]byte, error) {
	type plain Run // no MarshalJSON: no recursion
	p := plain(r)
	if res := p.Result; res != nil && res.HDR != "" && res.Percentiles != nil {
		slim := *res
		slim.Percentiles = nil
		p.Result = &slim
	}
	return json.Marshal(p)
}

// CurveFromHDR gives a result read from a record its percentile curve
// back, from its histogram, where the record left it out (MarshalJSON); a
// record from before, with both, keeps the curve it has.
func CurveFromHDR(res *summary.Summary) error {
	if res == nil || res.HDR == "" || len(res.Percentiles) > 0 {
		return nil
	}
	h, err := summary.DecodeHDR(res.HDR)
	if err != nil {
		return err
	}
	res.Percentiles = summary.PercentilesOf(h)
	return nil
}

// Failed reports whether the run broke an invariant or failed outright.
func (r *Run) Failed() bool { return len(r.Problems) > 0 }

// ServerStats is the server's GetStats after the run, typed. The runner
// writes every field, zeros included, so a field a record lacks is one its
// server did not have; fields from a newer server are skipped.
func (r *Run) ServerStats() (*locklabv1.GetStatsResponse, error) {
	if len(r.Stats) == 0 {
		return nil, fmt.Errorf("run %s: no server stats", r.ID)
	}
	var st locklabv1.GetStatsResponse
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(r.Stats, &st); err != nil {
		return nil, fmt.Errorf("run %s: server stats: %w", r.ID, err)
	}
	return &st, nil
}

// StoreBacked reports whether the run's mode kept state (noop does not).
func (r *Run) StoreBacked() bool {
	st, err := r.ServerStats()
	return err == nil && st.GetStoreBacked()
}

// Derived are the per-run figures computed from the raw data; Load
// recomputes them, so the report never trusts a stored copy.
type Derived struct {
	CallsPerSec float64 `json:"calls_per_sec"`
	ServerCores float64 `json:"server_cores"`
	ServerUtil  float64 `json:"server_util"` // of its own CPUs
	// BackendUtil is the share of the server's CPUs that the processes it
	// started (a private database or cache) used; 0 where it started none.
	// The server side — the server and its database — is judged by the sum.
	BackendUtil        float64 `json:"backend_util,omitempty"`
	DriverCores        float64 `json:"driver_cores"`
	DriverUtil         float64 `json:"driver_util"`
	ServerCPUPerCallUs float64 `json:"server_cpu_us_per_call"`
	Class              Class   `json:"class"`
	CPUs               int     `json:"cpus"` // the machine's
	// ServerSetBusy and DriverSetBusy are the CPU sets' busy shares
	// (SetUsage.Busy); Steal the larger of the two sets' steal shares;
	// zero where the sets were not sampled.
	ServerSetBusy float64 `json:"server_set_busy"`
	DriverSetBusy float64 `json:"driver_set_busy"`
	Steal         float64 `json:"steal"`
	// HighSteal flags a run with Steal ≥ NotableSteal.
	HighSteal bool `json:"high_steal"`
	// ServerForeign and DriverForeign are the shares of the two CPU sets
	// that something other than the lab's processes took over the window
	// (SetUsage.Foreign); Foreign is the larger. Zero where the sets were
	// not sampled. The validity gate judges a run by Foreign.
	ServerForeign float64 `json:"server_foreign"`
	DriverForeign float64 `json:"driver_foreign"`
	Foreign       float64 `json:"foreign"`
	// Serial is the store's serial demand over the window; nil where the
	// server reports none for the workload.
	Serial *Serial `json:"serial,omitempty"`
}

// Derive computes the run's derived figures.
func Derive(r *Run) (Derived, error) {
	d := Derived{CPUs: runtime.NumCPU()}
	if r.Result == nil {
		return d, fmt.Errorf("run %s: no driver result", r.ID)
	}
	d.CallsPerSec = r.Result.CallsPerS
	if d.CallsPerSec == 0 && r.Result.DurationS > 0 {
		d.CallsPerSec = float64(r.Result.Calls) / r.Result.DurationS
	}
	st, err := r.ServerStats()
	if err != nil {
		return d, err
	}
	server := r.ServerProc
	if server.WallSeconds == 0 {
		// The runner could not sample the server's /proc (it had
		// exited): its own account of the window stands in.
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
	if r.SharedCPUs {
		// On one set, each is judged against what the other left it.
		n := float64(len(r.ServerProc.CPUs))
		d.ServerUtil = d.ServerCores / max(0.01, n-d.DriverCores)
		d.DriverUtil = d.DriverCores / max(0.01, n-d.ServerCores)
	}
	if n := st.GetRequests(); n > 0 {
		d.ServerCPUPerCallUs = st.GetCpuSeconds() / float64(n) * 1e6
	}
	d.BackendUtil = r.BackendProc.Util(d.CPUs)
	d.Class = Classify(d.ServerUtil+d.BackendUtil, d.DriverUtil)
	d.ServerSetBusy, d.DriverSetBusy = r.ServerSet.Busy(), r.DriverSet.Busy()
	d.Steal = max(r.ServerSet.StealShare(), r.DriverSet.StealShare())
	d.HighSteal = d.Steal >= NotableSteal
	d.ServerForeign, d.DriverForeign = r.ServerSet.Foreign(r.labCPUOn(r.ServerSet)), r.DriverSet.Foreign(r.labCPUOn(r.DriverSet))
	d.Foreign = max(d.ServerForeign, d.DriverForeign)
	d.Serial = serialOf(r.WorkloadDef().Kind, st)
	return d, nil
}

// labCPUOn is the CPU seconds the lab's processes spent on a set: a
// process pinned to CPUs of the set, or not pinned at all (then it could
// run anywhere, the set being the whole machine), is counted in full.
func (r *Run) labCPUOn(set SetUsage) float64 {
	on := func(p ProcUsage) bool {
		if len(p.CPUs) == 0 || len(set.CPUs) == 0 {
			return true
		}
		for _, c := range p.CPUs {
			if slices.Contains(set.CPUs, c) {
				return true
			}
		}
		return false
	}
	var s float64
	for _, p := range []ProcUsage{r.ServerProc, r.DriverProc, r.BackendProc, r.RunnerProc} {
		if on(p) {
			s += p.CPUSeconds
		}
	}
	return s
}

// Limit says what limited the run, as far as its CPU figures show: a
// server-bound run's server, a load-bound run's driver. A run that is
// neither is explained only where a CPU set was busy although its process
// was not — something else ran there (interrupts, softirq, another
// process); otherwise "" — its CPU figures do not say what held it back
// (latency, a wait on a sync or a lock), and the report does not guess.
func (r *Run) Limit() string {
	d := r.Derived
	switch d.Class {
	case ClassServerBound:
		if d.BackendUtil > 0 {
			return fmt.Sprintf("the server's CPUs: the server %.0f%%, the database it started %.0f%%", 100*d.ServerUtil, 100*d.BackendUtil)
		}
		return "the server's CPU"
	case ClassLoadBound:
		return "the driver's CPU"
	}
	var parts []string
	if d.ServerSetBusy >= ServerBusy {
		parts = append(parts, fmt.Sprintf("the server's CPUs were %.0f%% busy, the server itself %.0f%%: the rest interrupts, softirq or other processes",
			100*d.ServerSetBusy, 100*d.ServerUtil))
	}
	if d.DriverSetBusy >= DriverBusy {
		parts = append(parts, fmt.Sprintf("the driver's CPUs were %.0f%% busy, the driver itself %.0f%%: the rest interrupts, softirq or other processes",
			100*d.DriverSetBusy, 100*d.DriverUtil))
	}
	return strings.Join(parts, "; ")
}

// Load reads back the run records of a results folder (Open), in run
// order, and recomputes what is derived from them: the report can always be
// rebuilt from these files alone.
func Load(folder fs.FS) ([]*Run, error) {
	paths, err := fs.Glob(folder, path.Join(RunsDir, "*.json"))
	if err != nil {
		return nil, err
	}
	var runs []*Run
	for _, p := range paths {
		if strings.HasSuffix(p, SummarySuffix) { // the driver's own file
			continue
		}
		b, err := fs.ReadFile(folder, p)
		if err != nil {
			return nil, err
		}
		var r Run
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if err := CurveFromHDR(r.Result); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if r.Derived, err = Derive(&r); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		runs = append(runs, &r)
	}
	// Run order is the order the runs started in: a cell the validity gate
	// ran again repeats its runs' indexes after the runs that followed them.
	slices.SortStableFunc(runs, func(a, b *Run) int {
		return cmp.Or(a.Started.Compare(b.Started), a.Index-b.Index, cmp.Compare(a.Attempt, b.Attempt))
	})
	return runs, nil
}

// SummarySuffix ends the name of a driver's summary beside a run's record.
const SummarySuffix = ".summary.json"

// ErrNoRuns is returned for a results directory without run records.
var ErrNoRuns = errors.New("record: no runs")

// MetaFile is a comparison's Meta, beside its report.
const MetaFile = "meta.json"

// LoadMeta reads a results folder's meta.json.
func LoadMeta(folder fs.FS) (Meta, error) {
	var meta Meta
	b, err := fs.ReadFile(folder, MetaFile)
	if err != nil {
		return meta, err
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return meta, fmt.Errorf("%s: %w", MetaFile, err)
	}
	return meta, nil
}

// LoadFolder reads a results folder (Open): its meta.json and its runs,
// of which there must be one at least.
func LoadFolder(folder fs.FS) (Meta, []*Run, error) {
	meta, err := LoadMeta(folder)
	if err != nil {
		return meta, nil, err
	}
	runs, err := Load(folder)
	if err != nil {
		return meta, nil, err
	}
	if len(runs) == 0 {
		return meta, nil, ErrNoRuns
	}
	return meta, runs, nil
}

// LoadDir opens the results folder dir and reads it (LoadFolder); an error
// names the folder.
func LoadDir(dir string) (Meta, []*Run, error) {
	folder, err := Open(dir)
	if err != nil {
		return Meta{}, nil, err
	}
	meta, runs, err := LoadFolder(folder)
	if err != nil {
		return meta, nil, fmt.Errorf("%s: %w", dir, err)
	}
	return meta, runs, nil
}

// JSON is v as every JSON file of a results directory holds it: indented,
// with a final newline.
func JSON(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// WriteJSON writes v as JSON writes it.
func WriteJSON(file string, v any) error {
	b, err := JSON(v)
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}
