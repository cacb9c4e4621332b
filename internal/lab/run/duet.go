package run

import (
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/locklab/locklab/internal/lab/cgroup"
	"github.com/locklab/locklab/internal/lab/chart"
	"github.com/locklab/locklab/internal/lab/cpuset"
	"github.com/locklab/locklab/internal/lab/duet"
	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

// DuetMetaFile and DuetRoundsFile are a side-by-side results folder's
// records: the command, its commit and every group's arms; every round's
// figures, one JSON line each.
const (
	DuetMetaFile   = "duet.json"
	DuetRoundsFile = "rounds.jsonl"
	// DuetRoundsPacked is DuetRoundsFile gzipped, as a study folder kept
	// for readers holds it (make pack-results); the report reads either.
	DuetRoundsPacked = DuetRoundsFile + ".gz"
)

// ReadDuetRounds reads a side-by-side folder's rounds: DuetRoundsFile,
// or where the folder was packed, DuetRoundsPacked.
func ReadDuetRounds(dir string) ([]byte, error) {
	raw, err := os.ReadFile(filepath.Join(dir, DuetRoundsFile))
	if !errors.Is(err, fs.ErrNotExist) {
		return raw, err
	}
	f, perr := os.Open(filepath.Join(dir, DuetRoundsPacked))
	if errors.Is(perr, fs.ErrNotExist) {
		return nil, err // the plain file's error: neither is there
	}
	if perr != nil {
		return nil, perr
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	raw, err = io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return raw, zr.Close()
}

// Measures are the ways the runner can measure, the default first.
var Measures = []string{MeasureDuet, MeasureIsolated}

const (
	// MeasureDuet runs the arms of each group side by side, at the same
	// moment, each server with an equal CPU quota (docs/methodology.md).
	MeasureDuet = "duet"
	// MeasureIsolated runs one server at a time, the arms in blocks.
	MeasureIsolated = "isolated"
)

// Duet is how side-by-side rounds run.
type Duet struct {
	// Known is the known-answer arm's extra spin per call (the baseline
	// with -call-work); 0 leaves the arm out.
	Known time.Duration
	// Share is the part of the server CPU set the arms' quotas add up
	// to: each of k arms gets Share × CPUs / k. Less than 1 leaves the
	// kernel's network work room on the set.
	Share float64
	// CPU is how the arms share the server CPUs: one of DuetCPUs.
	CPU string
	// Fallback lets a group whose drivers cannot keep up with its servers
	// under equal weights run under equal quotas instead, when the probe
	// shows they keep up there: set where -duet-cpu was not given.
	Fallback bool
	// Metrics names the metrics judged (duet.Metrics' names; empty: the
	// default ones).
	Metrics []string
	// Windows is a round's window for the groups each named driver
	// drives, in place of the plan's Duration.
	Windows map[string]time.Duration
	// Sched is how the servers' threads are scheduled: one of DuetScheds.
	Sched string
	// SchedFallback lets Sched give way to the kernel's default in a plan
	// over a database (resolveSched): set where -duet-sched was not given.
	SchedFallback bool
	// Slice is the servers' threads' scheduler slice (setSlice); 0 is
	// the kernel's own.
	Slice time.Duration
	// SliceFallback lets Slice give way to the kernel's own on a kernel
	// that keeps no custom slice (resolveSlice): set where -duet-slice
	// was not given.
	SliceFallback bool
	// Turn is an arm's turn on the server CPUs under CPUTurns.
	Turn time.Duration
}

// window is a round's window for a group that driver drives.
func (d Duet) window(driver string, dflt time.Duration) time.Duration {
	if w, ok := d.Windows[driver]; ok {
		return w
	}
	return dflt
}

// windowOf is group g's round window under cfg.
func (cfg Config) windowOf(g duetGroup) time.Duration {
	return cfg.Duet.window(g.driver(), cfg.Duration)
}

// windowsText names the rounds' windows of groups: "a 1s window" when
// they share it, else the plan's and each other with its driver ("a 1s
// window, 2s under h2load").
func windowsText(cfg Config, groups []duetGroup) string {
	var ws []time.Duration
	parts := []string{"a " + cfg.Duration.String() + " window"}
	for _, g := range groups {
		w := cfg.windowOf(g)
		if !slices.Contains(ws, w) {
			ws = append(ws, w)
		}
		if p := fmt.Sprintf("%v under %s", w, g.driver()); w != cfg.Duration && !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	if len(ws) == 1 {
		return "a " + ws[0].String() + " window"
	}
	return strings.Join(parts, ", ")
}

// How the arms of a round share the server CPUs (-duet-cpu): CPUWeight
// puts each in a CPU group of equal weight, so that arms that all want the
// CPU split it equally, however many threads each wakes, with no
// throttling; CPUQuota gives each a fixed quota (Duet.Share of the set,
// split equally) that it cannot pass, spent in 10 ms periods; CPUNone is
// the control, the servers' threads compete. Measured side by side
// (docs/results/duet-method/), weights and quotas read the same effects,
// and the weights' intervals were about half as wide: the quota's
// throttling adds noise of its own.
//
// CPUTurns gives the server CPUs to one arm at a time, in turns of
// Duet.Turn in the round's order, every other arm's server stopped
// (turns.go): no co-runner runs beside an arm at any instant, and turns of
// a few milliseconds still meet the machine's speed as every other arm's
// do. Measured against equal weights in the same run
// (docs/results/turns/), the known arm was woken as often per call as its
// baseline and the spin read closer to its size at 10 Go callers, still
// over it, with wider A/A intervals: every turn starts on caches the
// other arms filled, a cost per second again. So weights stay the
// default. A call that arrives in another arm's turn waits for it, so the
// callers' latency measures the turns, and p99 is not judged under turns.
const (
	CPUWeight = "weight"
	CPUTurns  = "turns"
	CPUQuota  = "quota"
	CPUNone   = "none"
)

// DuetCPUs are the ways the arms can share the server CPUs, the default
// first.
var DuetCPUs = []string{CPUWeight, CPUTurns, CPUQuota, CPUNone}

// DefaultTurn is an arm's turn under CPUTurns, and MinTurn and MaxTurn
// bound -duet-turn: a turn shorter than a few hundred microseconds is
// mostly the stopping and starting; one of tens of milliseconds leaves a
// round's window few turns to share the machine's speed over.
const (
	DefaultTurn = 2 * time.Millisecond
	MinTurn     = 500 * time.Microsecond
	MaxTurn     = 50 * time.Millisecond
)

// How the servers' threads are scheduled side by side (-duet-sched):
// SchedBatch starts every server under SCHED_BATCH (chrt --batch 0, which
// the server's threads and its database inherit), so that a server woken
// by a call does not preempt another arm's server on the CPU: the running
// one keeps it until it blocks or its slice ends. SchedNormal, the
// kernel's default, lets a waking thread preempt the running one, and each
// such switch costs the arm switched out and the one switched in. Batch is
// the default: run in alternation with the kernel's default, twice on two
// days (docs/results/sched-alt/ and its history), it left the A/A pair a
// round about 0.6 of the variance and read the known spin inside its
// interval about as often (docs/methodology.md, the choices table). A
// plan over a database keeps the kernel's default unless -duet-sched asks
// for batch (resolveSched): batch was not measured there. The drivers
// always keep the default: a driver that waits for the running one to
// block delays every call of a closed loop.
const (
	SchedNormal = "normal"
	SchedBatch  = "batch"
)

// DuetScheds are the ways the servers' threads can be scheduled, the
// default first.
var DuetScheds = []string{SchedBatch, SchedNormal}

// resolveSched gives a plan over a database the kernel's default
// scheduling where -duet-sched was not given, and says so for the
// report's setup (note).
func resolveSched(d Duet, overDB bool) (_ Duet, note string) {
	if !overDB || !d.SchedFallback {
		return d, ""
	}
	d.Sched = SchedNormal
	return d, setupNormalDB
}

// The setup's line on the servers' scheduling, one of which every run
// records (writeMeta); beforeBatch reads their absence.
const (
	setupBatch    = "the servers' threads (and their databases') scheduled SCHED_BATCH: a server woken by a call does not preempt another arm's on the CPU"
	setupNormal   = "the servers' threads (and their databases') under the kernel's default scheduling (-duet-sched normal): a server woken by a call may preempt another arm's on the CPU"
	setupNormalDB = "the servers' threads (and their databases') keep the kernel's default scheduling, as every plan over a database does unless -duet-sched asks for batch: batch was measured without a database only"
	// setupOverDB opens the setup's line of a plan over a database.
	setupOverDB = "over a database: "
)

// schedArgv is argv started under the scheduling policy sched.
func schedArgv(sched string, argv []string) []string {
	if sched == SchedBatch {
		return append([]string{"chrt", "--batch", "0"}, argv...)
	}
	return argv
}

// MinRound is the shortest window a duet round may have: every arm's
// server is read at its two ends, and the kernel's quota works in 10 ms
// periods.
const MinRound = 250 * time.Millisecond

// DefaultKnown and DefaultShare are the duet's defaults. The Go driver
// spends about as much CPU per call as a server does under a quota (each
// about 20–30 µs in the default groups, five arms side by side): with the
// arms' quotas at 0.6 of the server CPUs, their drivers need about as much
// of the driver CPUs and keep room to spare there (Round.LoadBound).
const (
	DefaultKnown = 2 * time.Microsecond
	DefaultShare = 0.6
)

// DuetDrivers are the drivers a duet round can start several of at once:
// each runs for a fixed time and needs no summary of its own (the servers
// count the calls).
var DuetDrivers = []string{"go", "h2load"}

// ErrDriverCannotKeepUp is returned before any round when a probe round
// showed a judged arm's server using less than its quota: the driver, not
// the server, would set the pace.
var ErrDriverCannotKeepUp = errors.New("the plan's driver cannot keep up with its servers")

// DuetApplies says why a plan cannot run side by side ("" when it can).
func DuetApplies(cfg Config) string {
	switch {
	case cfg.Model != "closed":
		return "the open model's latency at a fixed rate is what it measures, and co-runners sharing a CPU quota change latency"
	case cfg.Profile != "" || cfg.Factors.Attributes() || cfg.Factors.Ledgers():
		return "profiles, attribution and the latency ledger read one server's own time"
	case len(cfg.ServerCPUs) == 0:
		return "the server and the driver need CPU sets of their own (two CPUs at least, -pin)"
	case slices.ContainsFunc(cfg.Factors.Values(plan.ServerCPUs), func(v string) bool {
		p, err := cfg.placement(plan.DefaultPoint().With(plan.ServerCPUs, v))
		return err == nil && p.Shared
	}):
		return "a group whose server CPUs leave its drivers none of their own (-share-cpus) would have its drivers take CPU from the arms' groups"
	case slices.ContainsFunc(cfg.Factors.Values(plan.Backend), plan.OverDatabase) && !isTmpfs(DBFilesRoot):
		// On a disk, the databases' flushes kept kernel threads busy
		// outside every arm's CPU group, past the gate's limit in the
		// first rounds (docs/decisions.md); on a tmpfs they cost the
		// database's own CPU (duetdb.go).
		return "over a database, side by side keeps the arms' database files on a tmpfs, and " + DBFilesRoot + " is not one: on a disk each arm's writes keep kernel threads busy outside its CPU group"
	}
	for _, d := range cfg.Drivers {
		if !slices.Contains(DuetDrivers, d) {
			return "driver " + d + " runs one process per run with a summary of its own; duet rounds start " + strings.Join(DuetDrivers, " or ")
		}
	}
	return ""
}

// DuetPlanDuration estimates how long a side-by-side plan takes: a probe
// round of every group, then the first stage's rounds, then the rounds
// -precision may add, at most up to -max-blocks and no later than
// -time-budget. A round is its servers' start (at once; a private
// database's more), the warm-up, the window, h2load's tail and the stop;
// a Go driver's connections take about 1.5 ms each.
func DuetPlanDuration(cfg Config, specs []plan.Spec) time.Duration {
	groups, err := duetGroups(cfg, specs)
	if err != nil {
		return 0
	}
	var probe, round time.Duration
	for _, g := range groups {
		s := g.specs[g.arms[0].Name]
		per := 400*time.Millisecond + cfg.Warmup + time.Duration(len(g.arms))*time.Duration(2*min(s.Level, max(cfg.Conns, 1)))*1500*time.Microsecond
		if plan.OverDatabase(s.Factors.Get(plan.Backend)) {
			per += dbStartup + time.Duration(len(g.arms))*dbStartup/4 // installs side by side on the servers' CPUs
		}
		probe += per + 500*time.Millisecond
		round += per + cfg.windowOf(g)
		if g.driver() != (goDriver{}).Name() { // the Go driver ends once the window is read (endMarked)
			round += duetTail
		}
	}
	first := probe + time.Duration(cfg.Reps)*round
	if cfg.Gate.Precision <= 0 {
		return first
	}
	most := probe + time.Duration(max(cfg.Reps, cfg.Gate.MaxBlocks))*round
	if cfg.TimeBudget > 0 {
		most = min(most, max(first, cfg.TimeBudget+round))
	}
	return most
}

// markedSlack is how much longer than the window and its tail a Go
// driver, which endMarked ends, may run on its own: only a backstop for a
// runner gone, long enough that a runner slow to read its servers (a
// loaded machine, a race-enabled test) still marks the window's end
// inside the run.
const markedSlack = 30 * time.Second

// duetTail is how long every driver runs past the window's end, so that
// none is winding down inside it: h2load runs it out, the Go driver is
// ended sooner (endMarked) and keeps it as its bound.
const duetTail = 300 * time.Millisecond

// duetGroup is one group's arms and what each runs.
type duetGroup struct {
	name  string
	arms  []duet.Arm
	specs map[string]plan.Spec // by arm name
	place plan.Placement
	// cpu is how its arms share the server CPUs: the plan's -duet-cpu,
	// or quotas where its drivers could not keep up under weights
	// (Duet.Fallback).
	cpu string
}

// driver is the driver of the group's arms (one for all of them).
func (g duetGroup) driver() string {
	return g.specs[g.arms[0].Name].Driver
}

// duetGroups reads the groups and their arms from the plan's first block,
// and adds the known-answer arm to each.
func duetGroups(cfg Config, specs []plan.Spec) ([]duetGroup, error) {
	var out []duetGroup
	runtimes := cfg.Factors.Values(plan.Runtime)
	byCell := map[string]int{}
	for _, s := range specs {
		if s.Rep != 1 {
			continue
		}
		key := strings.TrimSuffix(s.Cell(), "|1")
		i, ok := byCell[key]
		if !ok {
			place, err := cfg.placement(s.Factors)
			if err != nil {
				return nil, err
			}
			name := fmt.Sprintf("%s · %s · %d", s.Workload, s.Driver, s.Level)
			if k := s.Factors.WithoutArms().Changed(); k != "" {
				name += " · " + k
			}
			out = append(out, duetGroup{name: name, specs: map[string]plan.Spec{}, place: place, cpu: cfg.Duet.CPU})
			i = len(out) - 1
			byCell[key] = i
		}
		g := &out[i]
		a := duet.Arm{Name: s.Arm(), Mode: s.Mode}
		if rt := s.Factors.Get(plan.Runtime); len(runtimes) > 1 && rt != runtimes[0] {
			// A second release's build: each design against itself
			// built by the first, in the same round. The baseline's
			// twin, the known answer and the ceiling are the first
			// release's alone.
			if s.Twin || s.Mode == "noop" {
				continue
			}
			a = duet.Arm{Name: s.Mode + " · " + rt, Mode: s.Mode, Role: duet.RoleDesign, Against: s.Mode}
			g.arms = append(g.arms, a)
			g.specs[a.Name] = s
			continue
		}
		switch {
		case s.Twin:
			a.Role = duet.RoleTwin
		case s.Mode == cfg.Baseline:
			a.Role = duet.RoleBaseline
		case s.Mode == "noop":
			a.Role = duet.RoleCeiling
		default:
			a.Role = duet.RoleDesign
		}
		g.arms = append(g.arms, a)
		g.specs[a.Name] = s
	}
	for i := range out {
		g := &out[i]
		base := slices.IndexFunc(g.arms, func(a duet.Arm) bool { return a.Role == duet.RoleBaseline })
		if base < 0 {
			return nil, fmt.Errorf("group %s: the baseline %s does not serve it", g.name, cfg.Baseline)
		}
		if cfg.Duet.Known > 0 {
			k := duet.Arm{Name: fmt.Sprintf("%s +%v", cfg.Baseline, cfg.Duet.Known), Mode: cfg.Baseline, Role: duet.RoleKnown}
			g.arms = append(g.arms, k)
			g.specs[k.Name] = g.specs[g.arms[base].Name]
		}
	}
	return out, nil
}

// knownArgs are the server flags of a known-answer arm: the baseline's,
// with the known spin in every data call, outside the stores
// (-call-work), so that the CPU it adds to a call is known whatever the
// design does with its callers.
func knownArgs(args []string, known time.Duration) []string {
	return append(slices.Clone(args), "-call-work", known.String())
}

// duetRunner runs rounds and keeps them.
type duetRunner struct {
	cfg    Config
	groups []duetGroup
	ctl    *cgroup.Controller
	db     *dbFiles // over a database: where the arms' databases keep their files
	rounds []duet.Round
	file   *os.File // rounds.jsonl
	out    io.Writer
	// sliceNote says, for the setup, that the default slice gave way to
	// the kernel's own (resolveSlice).
	sliceNote string
	// schedNote says, for the setup, that a plan over a database kept
	// the kernel's default scheduling (resolveSched).
	schedNote string
	// commit is the work tree's commit when the runner started (with
	// "+dirty" if its code had changed): what ran, whatever is edited
	// while the rounds run.
	commit string
}

// RunDuet runs the comparison side by side, round after round, and writes
// its results directory: rounds.jsonl as the rounds finish, then
// duet.json and report.md.
func RunDuet(ctx context.Context, cfg Config, out, warn io.Writer) error {
	cfg, cat, err := prepare(cfg)
	if err != nil {
		return err
	}
	if why := DuetApplies(cfg); why != "" {
		return fmt.Errorf("-measure duet: %s; use -measure isolated", why)
	}
	specs := plan.Layout(cfg.Config, cat, Serves)
	groups, err := duetGroups(cfg, specs)
	if err != nil {
		return err
	}
	if len(groups) == 0 {
		return errors.New("nothing to run: no mode serves these workloads under these factors")
	}
	r := &duetRunner{cfg: cfg, groups: groups, out: out}
	overDB := slices.ContainsFunc(specs, func(s plan.Spec) bool { return plan.OverDatabase(s.Factors.Get(plan.Backend)) })
	if r.cfg.Duet, r.sliceNote, err = resolveSlice(cfg.Duet, overDB, sliceKept); err != nil {
		return err
	}
	r.cfg.Duet, r.schedNote = resolveSched(r.cfg.Duet, overDB)
	if cfg.Duet.CPU != CPUNone {
		if r.ctl, err = cgroup.Open("/sys/fs/cgroup"); err != nil {
			return err
		}
	}
	if cfg.Out == "" {
		cfg.Out = filepath.Join("results", time.Now().UTC().Format("20060102-150405"))
		r.cfg.Out = cfg.Out
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return err
	}
	release, err := labLock(ctx, lockPath(), out)
	if err != nil {
		return err
	}
	defer release()
	if overDB {
		if r.db, err = newDBFiles(ctx); err != nil {
			return err
		}
		defer r.db.close()
	}
	started := time.Now()
	r.commit = treeCommit()
	fmt.Fprintf(out, "locklab compare, side by side: %d groups of %d to %d arms, %d rounds each at first (%s, after a %s warm-up), precision ±%s within %d rounds; results in %s\n",
		len(groups), minArms(groups), maxArms(groups), cfg.Reps, windowsText(cfg, groups), cfg.Warmup, paired.PctAbs(cfg.Gate.Precision), max(cfg.Reps, cfg.Gate.MaxBlocks), cfg.Out)
	if err := r.probe(ctx); err != nil {
		return err
	}
	if r.file, err = os.Create(filepath.Join(cfg.Out, DuetRoundsFile)); err != nil {
		return err
	}
	defer r.file.Close()
	if err := r.writeMeta(started); err != nil {
		return err
	}
	done := map[string]int{}
	first := map[string]int{}
	for _, g := range groups {
		first[g.name] = cfg.Reps
	}
	if err := r.runRounds(ctx, done, first); err != nil {
		return err
	}
	// -precision: look at each group's widths, add the rounds its widest
	// asks, and look again, until every interval is within the target,
	// each group's rounds reach -max-blocks or the time budget ends
	// (duet.Rounds, duet.WithinBudget), the intervals the run's budget can
	// bring within the target first (duet.Reachable); one look places at
	// most half the budget left (duet.PerLook).
	for cfg.Gate.Precision > 0 {
		res, err := r.analyse()
		if err != nil {
			return err
		}
		want := duet.Rounds(res, done, cfg.Gate.Precision, cfg.Gate.MaxBlocks)
		if cfg.TimeBudget > 0 {
			ran := 0
			for _, n := range done {
				ran += n
			}
			per := time.Since(started) / time.Duration(ran)
			left := int((cfg.TimeBudget - time.Since(started)) / per)
			ask, reachable := duet.Asks(res, done, cfg.Gate.Precision), duet.Reachable(res, done, cfg.Gate.Precision, left)
			want = duet.WithinBudget(done, want, ask, reachable, duet.PerLook(left))
		}
		more := false
		for _, g := range groups {
			hw, _ := res.Widest(g.name)
			fmt.Fprintf(out, "precision: %s after %d rounds, the widest interval ±%s (the A/A control's at %.2f times its half-width; target ±%s): %d rounds in all\n", g.name, done[g.name], paired.PctAbs(hw), res.AAWidth(), paired.PctAbs(cfg.Gate.Precision), want[g.name])
			more = more || want[g.name] > done[g.name]
		}
		if !more {
			break
		}
		if err := r.runRounds(ctx, done, want); err != nil {
			return err
		}
	}
	return WriteDuetReport(cfg.Out, out)
}

func minArms(gs []duetGroup) int {
	n := len(gs[0].arms)
	for _, g := range gs {
		n = min(n, len(g.arms))
	}
	return n
}

func maxArms(gs []duetGroup) int {
	n := 0
	for _, g := range gs {
		n = max(n, len(g.arms))
	}
	return n
}

// duetMeta is duet.json: what the rounds were, for the report and for
// -rerender.
type duetMeta struct {
	Command string                `json:"command"`
	Commit  string                `json:"commit"`
	Started time.Time             `json:"started"`
	Options duet.Options          `json:"options"`
	Groups  map[string][]duet.Arm `json:"groups"`
	Setup   []string              `json:"setup"`
	Window  time.Duration         `json:"window"`
	// Windows are the groups' windows where they are not Window.
	Windows  map[string]time.Duration `json:"windows,omitempty"`
	Warmup   time.Duration            `json:"warmup"`
	Seed     int                      `json:"seed"`
	CPU      string                   `json:"cpu"`
	Sched    string                   `json:"sched,omitempty"`
	Slice    time.Duration            `json:"slice,omitempty"`
	MaxForgn float64                  `json:"max_foreign"`
	// CPUModel and Kernel are the machine's (hostFacts): the same plan can
	// answer differently on another CPU model.
	CPUModel string `json:"cpu_model,omitempty"`
	Kernel   string `json:"kernel,omitempty"`
	// Runtimes are the server binaries of a plan that builds each design
	// with several Go releases, each with its `go version -m`.
	Runtimes []record.RuntimeBuild `json:"runtimes,omitempty"`
}

func (r *duetRunner) options() duet.Options {
	o := duet.DefaultOptions
	o.Margin, o.Known, o.Metrics = r.cfg.Gate.Margin, r.cfg.Duet.Known, r.cfg.Duet.Metrics
	return o
}

func (r *duetRunner) writeMeta(started time.Time) error {
	m := duetMeta{Command: r.cfg.Command, Commit: r.commit, Started: started.UTC(), Options: r.options(), Groups: map[string][]duet.Arm{},
		Window: r.cfg.Duration, Warmup: r.cfg.Warmup, Seed: r.cfg.Seed, CPU: r.cfg.Duet.CPU, Sched: r.cfg.Duet.Sched, Slice: r.cfg.Duet.Slice, MaxForgn: r.cfg.Gate.MaxForeign}
	m.CPUModel, m.Kernel = hostFacts()
	m.Setup = append(m.Setup, machineLine(m.CPUModel, r.cfg.NumCPU, m.Kernel))
	for _, g := range r.groups {
		m.Groups[g.name] = g.arms
		if w := r.cfg.windowOf(g); w != r.cfg.Duration {
			if m.Windows == nil {
				m.Windows = map[string]time.Duration{}
			}
			m.Windows[g.name] = w
		}
		var quota string
		switch g.cpu {
		case CPUNone:
			quota = "no CPU group (the control): their threads compete for the CPU"
		case CPUWeight:
			quota = fmt.Sprintf("each in a CPU group of equal weight, a fair share of %.3g CPU when all want it", r.quota(g))
		case CPUTurns:
			quota = fmt.Sprintf("taking the server CPUs in turns of %v, one server at a time in the round's order, every other stopped; each read during its own turn, its rates per second of the turns it held", r.cfg.Duet.Turn)
		default:
			quota = fmt.Sprintf("each a CPU quota of %.3g CPU (%s of the set's %d CPU, shared equally), in %v periods", r.quota(g), paired.PctAbs(r.cfg.Duet.Share), len(g.place.Server), cgroup.PeriodFor(r.quota(g)))
			if g.cpu != r.cfg.Duet.CPU {
				quota += fmt.Sprintf(" (the probe found its drivers could not keep up under -duet-cpu %s)", r.cfg.Duet.CPU)
			}
		}
		m.Setup = append(m.Setup, fmt.Sprintf("%s: %d servers on CPU %s, %s; their drivers on CPU %s", g.name, len(g.arms), plan.CPUList(g.place.Server), quota, plan.CPUList(g.place.Driver)))
	}
	if rts := r.cfg.Factors.Values(plan.Runtime); len(rts) > 1 {
		m.Runtimes = r.cfg.Builds
		var vs []string
		for _, b := range r.cfg.Builds {
			vs = append(vs, fmt.Sprintf("%s (%s)", b.Runtime, b.Version()))
		}
		m.Setup = append(m.Setup, fmt.Sprintf("every design built by each Go release, %s (duet.json has each binary's `go version -m`), all in the same rounds: a design built by a later release is compared with itself built by %s; the A/A twin, the known answer and noop are %s's", strings.Join(vs, ", "), rts[0], rts[0]))
	}
	switch {
	case r.cfg.Duet.Sched == SchedBatch:
		m.Setup = append(m.Setup, setupBatch)
	case r.schedNote != "":
		m.Setup = append(m.Setup, r.schedNote)
	default:
		m.Setup = append(m.Setup, setupNormal)
	}
	if r.cfg.Duet.Slice > 0 {
		m.Setup = append(m.Setup, fmt.Sprintf("the servers' threads (and their databases') each given a scheduler slice of %v (the kernel's own is about a millisecond): the kernel switches among the arms' servers less often", r.cfg.Duet.Slice))
	}
	if r.sliceNote != "" {
		m.Setup = append(m.Setup, r.sliceNote)
	}
	if r.db != nil {
		m.Setup = append(m.Setup, fmt.Sprintf(setupOverDB+"each arm's server starts a private MariaDB, which joins the arm's CPU group, its data directory copied from one installed before the first round, its files on a tmpfs (%s): a commit costs the database CPU, not a flush to disk", DBFilesRoot))
	}
	read := "read from every server at the same two instants"
	if r.cfg.Duet.CPU == CPUTurns {
		read = "read from each server at the start of its own turn at either end"
	}
	m.Setup = append(m.Setup, fmt.Sprintf("every round: fresh servers started in an order drawn per round (seed %d), a %v warm-up, then %s, %s; a round is dropped when steal or foreign CPU on either set passed %s",
		r.cfg.Seed, r.cfg.Warmup, windowsText(r.cfg, r.groups), read, paired.PctAbs(r.cfg.Gate.MaxForeign)))
	return record.WriteJSON(filepath.Join(r.cfg.Out, DuetMetaFile), m)
}

// machineLine is the Setup's first line: the machine the rounds ran on.
func machineLine(cpuModel string, cpus int, kernel string) string {
	if cpuModel == "" {
		cpuModel = "a CPU whose model /proc/cpuinfo does not name"
	}
	if kernel == "" {
		kernel = "a release /proc does not give"
	}
	return fmt.Sprintf("the machine: %s, %d CPUs, Linux %s (the same plan can answer differently on another CPU model: compare reports measured on the same one)", cpuModel, cpus, kernel)
}

// quota is each arm's CPU in a group, in CPUs: its quota, or with equal
// weights its fair share of the server CPUs (what it gets when every arm
// wants the CPU, against which its use is read), or under turns the whole
// set, for the time it holds it; 0 without groups.
func (r *duetRunner) quota(g duetGroup) float64 {
	switch g.cpu {
	case CPUNone:
		return 0
	case CPUWeight:
		return float64(len(g.place.Server)) / float64(len(g.arms))
	case CPUTurns:
		return float64(len(g.place.Server)) // all of them, for the time it holds them
	}
	return r.cfg.Duet.Share * float64(len(g.place.Server)) / float64(len(g.arms))
}

// runRounds runs every group's rounds after done (by group name) up to
// want, the groups interleaved round by round, and counts them in done.
func (r *duetRunner) runRounds(ctx context.Context, done, want map[string]int) error {
	last := 0
	for _, n := range want {
		last = max(last, n)
	}
	for i := 1; i <= last; i++ {
		for _, g := range r.groups {
			if i <= done[g.name] || i > want[g.name] {
				continue
			}
			rd, err := r.round(ctx, g, i, r.cfg.Warmup, r.cfg.windowOf(g))
			if err != nil {
				return err
			}
			duet.Gate(&rd, r.cfg.Gate.MaxForeign)
			r.rounds = append(r.rounds, rd)
			line, _ := json.Marshal(rd)
			if _, err := r.file.Write(append(line, '\n')); err != nil {
				return err
			}
			fmt.Fprintf(r.out, "round %d · %s: %s\n", i, g.name, roundLine(rd))
			done[g.name] = i
		}
	}
	return nil
}

func roundLine(rd duet.Round) string {
	var parts []string
	for _, m := range rd.Arms {
		s := fmt.Sprintf("%s %.0f calls/s %.1f µs/call (%s of quota)", m.Arm, m.CallsPerSec(), 1e6*m.CPUPerCall(), paired.PctAbs(m.Util()))
		if m.Failed != "" {
			s = m.Arm + " FAILED: " + m.Failed
		}
		parts = append(parts, s)
	}
	if rd.Dropped != "" {
		parts = append(parts, "dropped: "+rd.Dropped)
	}
	return strings.Join(parts, "; ")
}

func (r *duetRunner) analyse() (duet.Result, error) {
	arms := map[string][]duet.Arm{}
	for _, g := range r.groups {
		arms[g.name] = g.arms
	}
	return duet.Analyse(arms, r.rounds, r.options())
}

// probe runs short rounds of every group before the plan and refuses it
// when a judged arm was load-bound in every one the gate kept: its driver
// could not keep up, and every round would measure the driver. A group is
// clear at its first kept round with no judged arm load-bound, so one
// moment the machine stalled the drivers does not refuse the plan, and a
// round the gate drops is run again; at most probeTries rounds a group.
func (r *duetRunner) probe(ctx context.Context) error {
	var slow []string
	o := r.options()
	for i := range r.groups {
		p, err := r.probeGroup(ctx, r.groups[i], o)
		if err != nil {
			return err
		}
		if probeFallback(r.groups[i].cpu, r.cfg.Duet.Fallback, p) {
			g := &r.groups[i]
			g.cpu = CPUQuota
			fmt.Fprintf(r.out, "probe, %s: its drivers could not keep up under equal weights (%s); it runs under equal quotas of %.3g CPU each (-server-share %s) if they keep up there\n",
				g.name, strings.Join(p.slow, "; "), r.quota(*g), paired.PctAbs(r.cfg.Duet.Share))
			if p, err = r.probeGroup(ctx, *g, o); err != nil {
				return err
			}
		}
		g := r.groups[i]
		switch {
		case p.clear:
		case p.kept == 0:
			fmt.Fprintf(r.out, "probe, %s: every try spoiled (%s); the rounds will say whether the driver kept up\n", g.name, p.spoiled)
		default:
			slow = append(slow, fmt.Sprintf("%s: a judged arm was load-bound in every one of the %d probe rounds the gate kept; in the last:", g.name, p.kept))
			slow = append(slow, p.slow...)
		}
	}
	if len(slow) > 0 {
		return fmt.Errorf("%w (its CPUs were saturated while a server used less than %s of its quota):\n  %s\nuse a cheaper driver (-driver h2load for the counter), fewer arms, or a smaller -server-share",
			ErrDriverCannotKeepUp, paired.PctAbs(o.MinUtil), strings.Join(slow, "\n  "))
	}
	return nil
}

// probeGroup runs a group's probe rounds until one is clear, at most
// probeTries.
func (r *duetRunner) probeGroup(ctx context.Context, g duetGroup, o duet.Options) (probeOutcome, error) {
	var rounds []duet.Round
	var p probeOutcome
	for try := 0; try < probeTries && !p.clear; try++ {
		rd, err := r.round(ctx, g, 0, r.cfg.Warmup, 500*time.Millisecond)
		if err != nil {
			return p, err
		}
		duet.Gate(&rd, r.cfg.Gate.MaxForeign)
		rounds = append(rounds, rd)
		p = readProbe(g, rounds, o)
	}
	return p, nil
}

// probeFallback says whether a group probed under cpu goes on under
// equal quotas: its drivers could not keep up with servers sharing the
// CPUs by equal weights, where every server takes all it can, and the
// plan did not ask for weights (fallback). Under quotas the servers
// together take -server-share of the CPUs, and the probe is run again
// there; a plan that named its -duet-cpu is refused instead.
func probeFallback(cpu string, fallback bool, p probeOutcome) bool {
	return fallback && cpu == CPUWeight && !p.clear && p.kept > 0
}

// probeTries bounds the probe's rounds per group.
const probeTries = 3

// probeOutcome is what a group's probe rounds showed.
type probeOutcome struct {
	clear   bool     // a kept round had no judged arm load-bound
	kept    int      // rounds the gate kept
	slow    []string // the last kept round's load-bound arms, with their figures
	spoiled string   // the last dropped round's reason
}

// readProbe reads a group's probe rounds in the order they ran, up to the
// first kept round with no judged arm load-bound.
func readProbe(g duetGroup, rounds []duet.Round, o duet.Options) probeOutcome {
	var p probeOutcome
	for _, rd := range rounds {
		if rd.Dropped != "" {
			p.spoiled = rd.Dropped
			continue
		}
		p.kept++
		if p.slow = refusals(g, rd, o); len(p.slow) == 0 {
			p.clear = true
			return p
		}
	}
	return p
}

// refusals lists the judged arms a probe round found load-bound, with the
// figures that show it.
func refusals(g duetGroup, rd duet.Round, o duet.Options) []string {
	var out []string
	for _, a := range g.arms {
		m, _ := rd.Arm(a.Name)
		if a.Role == duet.RoleCeiling || !rd.LoadBound(m, o.MinUtil) {
			continue
		}
		out = append(out, fmt.Sprintf("%s, %s: the server used %s of its %.3g-CPU quota (%.0f calls/s); the drivers' CPUs were %s busy",
			g.name, a.Name, paired.PctAbs(m.Util()), m.Quota, m.CallsPerSec(), paired.PctAbs(rd.DriverBusy)))
	}
	return out
}

// duetArm is one arm's processes in a round.
type duetArm struct {
	arm    duet.Arm
	srv    *serverProc
	group  *cgroup.Group
	conn   *grpc.ClientConn
	admin  locklabv1.AdminServiceClient
	driver *exec.Cmd
	stdin  io.WriteCloser // where the runner writes the driver's marks, when it takes them (marks)
	job    Job            // the driver's
	dlog   *os.File
	waited chan struct{}
	m      duet.Measure
	before struct {
		stats  *locklabv1.GetStatsResponse
		driver float64
		cg     cgroup.Stat
		usage  time.Duration
		pieces *procPieces
		held   time.Duration
	}
}

// round runs one round of a group: fresh servers, each in its own CPU
// group, their drivers, a warm-up, and the window read from every server
// at the same two instants (under turns, each at the start of its own
// turn).
func (r *duetRunner) round(ctx context.Context, g duetGroup, index int, warm, window time.Duration) (rd duet.Round, err error) {
	rd = duet.Round{Group: g.name, Index: index, Started: time.Now().UTC()}
	rng := rand.New(rand.NewPCG(uint64(r.cfg.Seed), uint64(index)<<16|uint64(len(g.name))))
	arms := make([]*duetArm, len(g.arms))
	for i, a := range g.arms {
		arms[i] = &duetArm{arm: a}
	}
	rng.Shuffle(len(arms), func(i, j int) { arms[i], arms[j] = arms[j], arms[i] })
	for _, a := range arms {
		rd.Order = append(rd.Order, a.arm.Name)
	}
	scratch, err := os.MkdirTemp("", "locklab-duet-")
	if err != nil {
		return rd, err
	}
	defer os.RemoveAll(scratch)
	defer func() {
		for _, a := range arms {
			a.close()
		}
	}()
	quota := r.quota(g)
	// The servers start at once, in the round's order, and each joins
	// its CPU group once it listens, with the processes it started (a
	// private database): its start-up is not throttled, its window is.
	errs := make([]error, len(arms))
	var wg sync.WaitGroup
	for i, a := range arms {
		dir := filepath.Join(scratch, fmt.Sprint(i))
		if err := os.Mkdir(dir, 0o700); err != nil {
			return rd, err
		}
		switch {
		case r.ctl == nil:
		case g.cpu == CPUWeight, g.cpu == CPUTurns: // under turns, for its account
			if a.group, err = r.ctl.NewWeighted(); err != nil {
				return rd, err
			}
		default:
			if a.group, err = r.ctl.New(quota); err != nil {
				return rd, err
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.startArm(ctx, g, a, dir)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return rd, err
	}
	var tn *turns
	if r.cfg.Duet.CPU == CPUTurns {
		procs := make([][]int, len(arms))
		for i, a := range arms {
			procs[i] = append([]int{a.srv.pid()}, descendants(a.srv.pid())...)
		}
		tn = startTurns(procs, r.cfg.Duet.Turn, g.place.Driver)
		defer tn.stop() // before the arms close: a stopped server cannot stop
	}
	tail := duetTail
	for i, a := range arms {
		spec := g.specs[a.arm.Name]
		d, _ := LookupDriver(spec.Driver)
		dir := filepath.Join(scratch, fmt.Sprint(i))
		job := Job{Spec: spec, Addr: a.srv.address(), Duration: warm + window + tail, Warmup: true, Scratch: dir, Place: g.place,
			Summary: filepath.Join(dir, "summary.json"), Log: filepath.Join(dir, "driver.log"), Marked: true}
		if marks(job) {
			// Ended by endMarked once the window is read, its own end is
			// a backstop: far enough past the window that a runner slow
			// to read it (a slow machine, a race-enabled test) still
			// marks its end inside the run.
			job.Duration += markedSlack
		}
		a.job = job
		argv, env, err := d.Command(r.cfg, job)
		if err != nil {
			return rd, err
		}
		if err := a.start(pinned(g.place.Driver, argv), append(env, gomaxprocsEnv(r.cfg.gomaxprocs(g.place.Driver))...)); err != nil {
			return rd, err
		}
	}
	if err := sleepCtx(ctx, warm); err != nil {
		return rd, err
	}
	for _, a := range arms { // the threads started since the server did
		if err := r.slice(a); err != nil {
			return rd, fmt.Errorf("%s: %w", a.arm.Name, err)
		}
	}
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return rd, err
	}
	c0, err := cpuset.Read(fs)
	if err != nil {
		return rd, err
	}
	self0, _ := procCPUSeconds(os.Getpid())
	lab0 := labCPU(arms)
	from := markWindow(arms)
	r.sample(ctx, arms, tn, true)
	if err := sleepCtx(ctx, window); err != nil {
		return rd, err
	}
	c1, err := cpuset.Read(fs)
	if err != nil {
		return rd, err
	}
	self1, _ := procCPUSeconds(os.Getpid())
	lab1 := labCPU(arms)
	to := markWindow(arms)
	r.sample(ctx, arms, tn, false)
	tn.stop()
	endMarked(arms)
	var serverCPU, driverCPU float64
	for _, a := range arms {
		a.m.Quota = quota
		serverCPU += a.m.CPU
		driverCPU += a.m.DriverCPU
	}
	if lab0.ok && lab1.ok {
		// The lab's CPU read at the CPU sets' own instants: an arm's
		// figures are read once its server has answered GetStats, which
		// a server with many callers and a small share of the CPU answers
		// hundreds of milliseconds late, and a different lateness at the
		// two ends would count the lab's CPU as foreign, or the foreign
		// as the lab's.
		serverCPU, driverCPU = lab1.server-lab0.server, lab1.driver-lab0.driver
	}
	srvSet, drvSet := c1.Set(g.place.Server).Minus(c0.Set(g.place.Server)), c1.Set(g.place.Driver).Minus(c0.Set(g.place.Driver))
	runner := max(0, self1-self0)
	rd.ServerSteal, rd.ServerForeign = srvSet.StealShare(), duetForeign(srvSet, serverCPU, runner)
	rd.DriverSteal, rd.DriverForeign = drvSet.StealShare(), duetForeign(drvSet, driverCPU, runner)
	if t := drvSet.Total(); t > 0 {
		rd.DriverBusy = driverCPU / t // the drivers' own: foreign load is the gate's
	}
	for _, a := range arms {
		select {
		case <-a.waited:
		case <-time.After(tail + 10*time.Second):
			_ = a.driver.Process.Kill()
			<-a.waited
			a.m.Failed = cmp.Or(a.m.Failed, "the driver did not stop")
		}
		if code := a.driver.ProcessState.ExitCode(); code != 0 && a.m.Failed == "" {
			a.m.Failed = fmt.Sprintf("driver exited %d: %s", code, tailOf(a.dlog.Name()))
		}
		if a.m.Failed == "" && tn == nil { // under turns the tail measures the turns
			p99, err := windowP99(a.job, from, to)
			if err != nil {
				a.m.Failed = "latency: " + err.Error()
			}
			a.m.P99 = p99
		}
	}
	// The arms in the order the group declares them.
	for _, ga := range g.arms {
		for _, a := range arms {
			if a.arm.Name == ga.Name {
				rd.Arms = append(rd.Arms, a.m)
			}
		}
	}
	return rd, nil
}

// start starts the arm's driver (argv, its environment the runner's and
// env) for its job, its output to the job's log; a driver that marks its
// window (marks) reads the runner's marks on a pipe, its stdin.
func (a *duetArm) start(argv, env []string) (err error) {
	a.driver = exec.Command(argv[0], argv[1:]...)
	a.driver.Env = append(os.Environ(), env...)
	if a.dlog, err = os.Create(a.job.Log); err != nil {
		return err
	}
	a.driver.Stdout, a.driver.Stderr = a.dlog, a.dlog
	if marks(a.job) {
		if a.stdin, err = a.driver.StdinPipe(); err != nil {
			return err
		}
	}
	if err := a.driver.Start(); err != nil {
		return fmt.Errorf("%s: start driver: %w", a.arm.Name, err)
	}
	a.waited = make(chan struct{})
	go func() { // ends when the driver does
		_ = a.driver.Wait()
		close(a.waited)
	}()
	return nil
}

// markWindow marks one end of the window for every driver that marks its
// own (Job.Marked: the Go driver, a line on its stdin), and returns the
// instant. A pipe keeps a line its driver has not read yet: a driver slow
// to start takes the mark late, never loses it, as it lost a signal sent
// before it listened.
func markWindow(arms []*duetArm) time.Time {
	at := time.Now()
	for _, a := range arms {
		if a.stdin != nil {
			_, _ = io.WriteString(a.stdin, "\n") // a driver gone fails its arm when it is waited for
		}
	}
	return at
}

// endMarked ends, once the window has been read from every server, each
// driver that marked its window: its stdin closed after its second mark,
// the Go driver stops its callers, writes the marked window's summary and
// exits 0, where it would otherwise run out its tail (duetTail) before its
// exit. Each driver still runs until the servers' figures are read, so
// none winds down inside the window; h2load, which has no marks, runs out
// its tail.
func endMarked(arms []*duetArm) {
	for _, a := range arms {
		if a.stdin != nil {
			_ = a.stdin.Close()
		}
	}
}

// marks says whether a job's driver marks its window on the runner's
// lines.
func marks(job Job) bool {
	return job.Marked && job.Spec.Driver == (goDriver{}).Name()
}

// windowP99 is an arm's callers' 99th-percentile latency over the window,
// in milliseconds: the Go driver's summary of the window the runner marked
// on it, or h2load's per-request log cut to the calls that ended between
// the two instants.
func windowP99(job Job, from, to time.Time) (float64, error) {
	switch job.Spec.Driver {
	case goDriver{}.Name():
		s, err := summary.Read(job.Summary)
		if err != nil {
			return 0, err
		}
		return s.LatencyMs.P99, nil
	case h2loadDriver{}.Name():
		f, err := os.Open(h2loadLogPath(job))
		if err != nil {
			return 0, err
		}
		defer f.Close()
		lo, hi := from.UnixMicro(), to.UnixMicro()
		h, _, err := readH2loadLog(f, func(end int64) bool { return end >= lo && end < hi })
		if err != nil {
			return 0, err
		}
		if h.TotalCount() == 0 {
			return 0, errors.New("h2load logged no call that ended in the window")
		}
		return float64(h.ValueAtQuantile(99)) / 1e3, nil
	}
	return 0, fmt.Errorf("driver %s: no latency side by side", job.Spec.Driver)
}

// labTotals is the lab's CPU at one instant: its arms' CPU groups (the
// servers and their databases) and its drivers, in seconds; ok when every
// arm has a group to read.
type labTotals struct {
	server, driver float64
	ok             bool
}

// labCPU reads every arm's group and driver at once, without a call to
// any server.
func labCPU(arms []*duetArm) labTotals {
	t := labTotals{ok: true}
	for _, a := range arms {
		if a.driver != nil && a.driver.Process != nil {
			d, _ := procCPUSeconds(a.driver.Process.Pid)
			t.driver += d
		}
		if a.group == nil {
			t.ok = false
			continue
		}
		u, err := a.group.Usage()
		if err != nil {
			t.ok = false
			continue
		}
		t.server += u.Seconds()
	}
	return t
}

// duetForeign is the share of a CPU set's time in a round that something
// other than the lab took: its busy time and steal, less the lab's
// processes on it (lab), less the runner's own CPU (which may have run on
// either set), less interrupts. On the lab's own sets the interrupts are
// its loopback traffic, the packets its servers and drivers exchange, which
// the kernel accounts to no process: with two servers side by side on one
// CPU driven by h2load they alone passed the gate's 10%. Steal and other
// processes' time remain foreign.
func duetForeign(u cpuset.Usage, lab, runner float64) float64 {
	if u.Total() <= 0 {
		return 0
	}
	busy := u.User + u.Nice + u.System + u.Steal
	return max(0, busy-lab-runner) / u.Total()
}

// slice gives an arm's server and its children the plan's scheduler
// slice, if it has one (-duet-slice).
func (r *duetRunner) slice(a *duetArm) error {
	if r.cfg.Duet.Slice == 0 || a.srv == nil {
		return nil
	}
	return setSlice(append([]int{a.srv.pid()}, descendants(a.srv.pid())...), r.cfg.Duet.Slice, r.cfg.Duet.Sched)
}

// startArm starts one arm's server, puts it and its children in the arm's
// CPU group, and resets its state.
func (r *duetRunner) startArm(ctx context.Context, g duetGroup, a *duetArm, dir string) error {
	spec := g.specs[a.arm.Name]
	args := serverArgs(spec, dir, "")
	if a.arm.Role == duet.RoleKnown {
		args = knownArgs(args, r.cfg.Duet.Known)
	}
	bin, err := r.cfg.serverFor(spec.Factors)
	if err != nil {
		return err
	}
	var env []string
	if r.db != nil && plan.OverDatabase(spec.Factors.Get(plan.Backend)) {
		args, env = append(args, r.db.args()...), r.db.env()
	}
	argv := schedArgv(r.cfg.Duet.Sched, append([]string{bin}, args...))
	if a.srv, err = startServer(argv[0], argv[1:], g.place.Server, r.cfg.gomaxprocs(g.place.Server), filepath.Join(dir, "server.log"), env...); err != nil {
		return fmt.Errorf("%s: %w", a.arm.Name, err)
	}
	if a.group != nil {
		for _, pid := range append([]int{a.srv.pid()}, descendants(a.srv.pid())...) {
			if err := a.group.Add(pid); err != nil {
				return err
			}
		}
	}
	if err := r.slice(a); err != nil {
		return fmt.Errorf("%s: %w", a.arm.Name, err)
	}
	if a.conn, err = grpc.NewClient(a.srv.address(), grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
		return err
	}
	a.admin = locklabv1.NewAdminServiceClient(a.conn)
	if _, err := a.admin.Reset(ctx, resetRequest(spec)); err != nil {
		return fmt.Errorf("%s: reset: %w", a.arm.Name, err)
	}
	return nil
}

// sample reads every arm: its server's stats, its driver's CPU and its
// group's throttling; the first call keeps them, the second makes the
// window's measure. It reads them all at once, or under turns (tn not
// nil) each at the start of its own turn, with the time it has held the
// CPUs.
func (r *duetRunner) sample(ctx context.Context, arms []*duetArm, tn *turns, first bool) {
	if tn != nil {
		tn.readEach(func(i int, held time.Duration) { arms[i].read(ctx, first, held) })
		return
	}
	var wg sync.WaitGroup
	for _, a := range arms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.read(ctx, first, -1)
		}()
	}
	wg.Wait()
}

// read reads one arm (sample); held is the time it has held the CPUs
// under turns, negative otherwise.
func (a *duetArm) read(ctx context.Context, first bool, held time.Duration) {
	a.m.Arm = a.arm.Name
	// The window alone: a bank's summary would wait behind the
	// arm's callers (over a database, behind its pool).
	st, err := a.admin.GetStats(ctx, &locklabv1.GetStatsRequest{WindowOnly: true})
	if err != nil {
		a.m.Failed = cmp.Or(a.m.Failed, "stats: "+err.Error())
		return
	}
	dcpu, _ := procCPUSeconds(a.driver.Process.Pid)
	var cg cgroup.Stat
	usage := time.Duration(-1)
	if a.group != nil {
		cg, _ = a.group.Stat()
		if u, err := a.group.Usage(); err == nil {
			usage = u
		}
	}
	var pieces *procPieces
	if a.srv != nil && a.srv.cmd.Process != nil {
		if pc, err := readPieces(a.srv.cmd.Process.Pid); err == nil {
			pieces = &pc
		}
	}
	if first {
		a.before.stats, a.before.driver, a.before.cg, a.before.usage, a.before.pieces, a.before.held = st, dcpu, cg, usage, pieces, held
		return
	}
	if a.before.stats == nil {
		return
	}
	a.m.Requests = callsOf(st) - callsOf(a.before.stats)
	a.m.Writes = writesOf(st) - writesOf(a.before.stats)
	a.m.CPU = st.GetCpuSeconds() - a.before.stats.GetCpuSeconds()
	if usage >= 0 && a.before.usage >= 0 {
		// The group's own account: the server and every process
		// it started (a private database), at nanoseconds.
		a.m.CPU = (usage - a.before.usage).Seconds()
	}
	a.m.Window = st.GetWindowSeconds() - a.before.stats.GetWindowSeconds()
	a.m.DriverCPU = dcpu - a.before.driver
	a.m.Throttled = cg.Sub(a.before.cg).Throttled
	if pieces != nil && a.before.pieces != nil {
		a.m.Wakeups = pieces.wakeups - min(pieces.wakeups, a.before.pieces.wakeups)
		a.m.Syscalls = pieces.syscalls - min(pieces.syscalls, a.before.pieces.syscalls)
	}
	if held >= 0 && a.before.held >= 0 {
		a.m.Held = (held - a.before.held).Seconds()
	}
}

func (a *duetArm) close() {
	if a.driver != nil && a.driver.Process != nil && a.waited != nil {
		select {
		case <-a.waited:
		default:
			_ = a.driver.Process.Signal(syscall.SIGKILL)
			<-a.waited
		}
	}
	if a.dlog != nil {
		a.dlog.Close()
	}
	if a.conn != nil {
		a.conn.Close()
	}
	if a.srv != nil {
		if code, _ := a.srv.stop(); code != 0 && a.m.Failed == "" {
			a.m.Failed = fmt.Sprintf("server exited %d", code)
		}
		a.srv = nil
	}
	if a.group != nil {
		_ = a.group.Remove()
		a.group = nil
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func tailOf(path string) string {
	b, _ := os.ReadFile(path)
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = "…" + s[len(s)-300:]
	}
	return s
}

// beforeBatch is the report's opening note for rounds recorded before the
// servers ran under SCHED_BATCH by default (DuetScheds), under the
// kernel's default scheduling: their setup has none of the lines on it
// that every run records since. Plans over a database keep the kernel's
// default (resolveSched) and get none.
func beforeBatch(m duetMeta) string {
	recorded := func(s string) bool {
		return s == setupNormal || s == setupNormalDB || strings.HasPrefix(s, setupOverDB)
	}
	if m.Sched == SchedBatch || slices.ContainsFunc(m.Setup, recorded) {
		return ""
	}
	return "**Made before side-by-side servers ran under SCHED_BATCH by default.** Here they ran under the kernel's default scheduling, where a server woken by a call may preempt another arm's; batch, which measured narrower intervals in alternation with it, has been the default since for every plan not over a database (docs/methodology.md, the choices table). These figures stand for the kernel's default until the study is run again."
}

// WriteDuetReport analyses a duet results directory's rounds.jsonl and
// writes its report.md; -rerender calls it on a finished directory.
func WriteDuetReport(dir string, out io.Writer) error {
	var m duetMeta
	b, err := os.ReadFile(filepath.Join(dir, DuetMetaFile))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, DuetMetaFile), err)
	}
	raw, err := ReadDuetRounds(dir)
	if err != nil {
		return err
	}
	var rounds []duet.Round
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if line == "" {
			continue
		}
		var rd duet.Round
		if err := json.Unmarshal([]byte(line), &rd); err != nil {
			return fmt.Errorf("rounds.jsonl: %w", err)
		}
		rounds = append(rounds, rd)
	}
	res, err := duet.Analyse(m.Groups, rounds, m.Options)
	if err != nil {
		return err
	}
	fo := chart.Forest{Title: duet.ForestTitle(res), XLabel: "effect against the baseline (%)", Margin: res.Options.Margin}
	fo.Rows = duet.ForestRows(res)
	picture := ""
	svg, err := fo.SVG()
	if err != nil {
		return err
	}
	if svg != nil {
		picture = report.ForestFile
		if err := os.WriteFile(filepath.Join(dir, picture), svg, 0o644); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(dir, "report.md"))
	if err != nil {
		return err
	}
	defer f.Close()
	title := "Side by side"
	if m.Command != "" {
		title = "Side by side: " + m.Command
	}
	if err := duet.WriteMarkdown(f, duet.Header{Title: title, Command: m.Command, Commit: m.Commit, Setup: m.Setup, Picture: picture, Before: beforeBatch(m)}, res); err != nil {
		return err
	}
	for _, g := range res.Groups {
		for _, p := range res.Primaries {
			if p.Group == g.Name {
				fmt.Fprintf(out, "%s: %s%s\n", g.Name, p.Sentence(), duet.DecideClause(p.Primary))
			}
		}
		if k := g.Known; k != nil && k.N >= 3 {
			f := g.Floor()
			floor := "A/A floor ±" + paired.PctAbs(f)
			if math.IsInf(f, 1) {
				floor = "no A/A floor"
			}
			fmt.Fprintf(out, "%s: known answer %+.2f µs [%+.2f, %+.2f] CPU/call (true %+.2f); %s\n", g.Name, 1e6*k.CPU.Mean, 1e6*k.CPU.Lo, 1e6*k.CPU.Hi, 1e6*k.TrueCPU, floor)
		}
	}
	if u := res.Undecided(); u != "" {
		fmt.Fprintln(out, strings.NewReplacer("**", "").Replace(u))
	}
	fmt.Fprintf(out, "report: %s\n", filepath.Join(dir, "report.md"))
	return nil
}

// treeCommit names the commit the runner runs from, "+dirty" when the
// work tree's code has changed since (workTree).
func treeCommit() string {
	commit, dirty := workTree()
	if dirty && commit != "" {
		return commit + "+dirty"
	}
	return commit
}

// IsDuetDir says whether a results directory holds side-by-side rounds.
func IsDuetDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, DuetMetaFile))
	return err == nil
}
