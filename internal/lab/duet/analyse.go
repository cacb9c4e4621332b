package duet

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/locklab/locklab/internal/lab/paired"
)

// Metrics are the figures a comparison can be judged on, in the order
// reports list them: each with how to read it from an arm's measure, and
// what a report calls it. The ones marked Default are judged unless the
// plan names others (Options.Metrics). The p99 is the closed loop's tail at
// the group's callers, side by side: each server's calls wait behind the
// other arms' turns on the shared CPU, so it is a tail under equal shares,
// not one server's alone (docs/methodology.md).
var Metrics = []Metric{
	{Name: "calls/s", Of: Measure.CallsPerSec, Says: "calls/s", Default: true},
	{Name: "CPU/call", Of: Measure.CPUPerCall, Says: "server CPU per call", Default: true},
	{Name: "p99", Of: Measure.P99Ms, Says: "the callers' p99 latency"},
}

// MetricNames are the names of Metrics.
func MetricNames() []string {
	out := make([]string, len(Metrics))
	for i, m := range Metrics {
		out[i] = m.Name
	}
	return out
}

// DefaultMetricNames are the names of the metrics judged when a plan
// names none.
func DefaultMetricNames() []string {
	var out []string
	for _, m := range (Options{}).Judged() {
		out = append(out, m.Name)
	}
	return out
}

// metricNamed finds one of Metrics.
func metricNamed(name string) Metric {
	i := slices.IndexFunc(Metrics, func(m Metric) bool { return m.Name == name })
	return Metrics[i]
}

// Judged are the metrics the comparisons are judged on: Options.Metrics in
// the order of Metrics, or the default ones.
func (o Options) Judged() []Metric {
	var out []Metric
	for _, m := range Metrics {
		if (len(o.Metrics) == 0 && m.Default) || slices.Contains(o.Metrics, m.Name) {
			out = append(out, m)
		}
	}
	return out
}

// Anatomy are the figures that say how a call's CPU was spent, in the
// order reports list them: estimated for every arm against the baseline,
// never judged. A design or a known spin that costs more CPU per call
// than its own work does so by splitting the server's work differently:
// more wake-ups of its threads, more system calls, per call. Wake-ups per
// second say whether their rate followed the calls or the shared CPU: a
// server that shares a CPU is put back on it at about the same rate
// whatever it serves, so a cost per wake-up is a cost per second, and an
// arm that serves fewer calls pays more of it on each.
var Anatomy = []Metric{
	{Name: "wake-ups/call", Of: Measure.WakeupsPerCall},
	{Name: "wake-ups/s", Of: Measure.WakeupsPerSec},
	{Name: "syscalls/call", Of: Measure.SyscallsPerCall},
}

// Metric is one figure of an arm in a round.
type Metric struct {
	Name string
	Of   func(Measure) float64
	// Says is what a report's sentences call it; Default, whether it is
	// judged when the plan names none.
	Says    string
	Default bool
}

// Options are the analysis's rules, fixed before the data.
type Options struct {
	Alpha  float64 // family-wise level (0.05)
	Margin float64 // equivalence margin, a fraction (0.03)
	// MinUtil is the share of its quota a server must use, when the
	// drivers' CPUs are saturated, for its round to count: below it the
	// driver set the pace, and the arm's figure measures the driver
	// (Round.LoadBound).
	MinUtil float64
	// Known is the known-answer arm's extra spin per call.
	Known time.Duration
	// Metrics names the metrics judged (empty: the default ones).
	Metrics []string `json:",omitempty"`
}

// DefaultOptions are the runner's.
var DefaultOptions = Options{Alpha: 0.05, Margin: 0.03, MinUtil: 0.8}

// Calibration is the known-answer arm against the baseline: what it added
// per call in server CPU and how much fewer calls/s it served, each beside
// the value that is known to be true.
type Calibration struct {
	// TrueCPU is the spin added to every call, in seconds; CPU the
	// measured added server CPU per call (seconds), paired by round.
	TrueCPU float64
	CPU     paired.Difference
	// Calls is the measured calls/s ratio; TrueCalls the ratio an equal
	// CPU quota implies, c/(c+TrueCPU) for the baseline's CPU per call c
	// (median over the rounds): under equal quotas a server that spends
	// more per call serves fewer calls in that proportion.
	Calls     paired.Robust
	TrueCalls float64
	// N is the rounds both arms kept.
	N int
	// Level is the CPU interval's: one of the plan's known-answer
	// intervals read together (KnownLevel).
	Level float64
}

// KnownLevel is the level of each of a plan's k known-answer CPU
// intervals, 1 − (1 − paired.Confidence)/k: read together, so that all of
// them hold the true spin with paired.Confidence when the instrument is
// exact (Bonferroni), as the A/A floors are (aaWidth). Five intervals at
// 95% each would all hold it in only about 77% of plans, and a
// calibration that fails one plan in four on an exact instrument tells
// nothing. One known arm: paired.Confidence.
func KnownLevel(k int) float64 { return together(k) }

// CPUOK says whether the true added CPU lies inside the measured interval.
func (c Calibration) CPUOK() bool { return c.N >= 3 && c.CPU.Contains(c.TrueCPU) }

// CallsOK says whether the implied calls/s ratio lies inside the measured
// interval.
func (c Calibration) CallsOK() bool {
	return c.N >= 3 && c.Calls.Lo <= c.TrueCalls && c.TrueCalls <= c.Calls.Hi
}

// Estimate is a comparison outside the family (the A/A control, the
// ceiling): an effect and its interval, no verdict.
type Estimate struct {
	Design, Metric string
	paired.Robust
	// Unpaired is the same rounds' interval half-width (ratio scale) when
	// the arms are not paired by round: what pairing buys.
	Unpaired float64
}

// Group is one group's analysis.
type Group struct {
	Name string
	Arms []Arm
	// Rounds ran; Clean kept by the gate; Drops the gate's reasons.
	Rounds, Clean int
	Drops         []string
	// Lost counts, per arm, the clean rounds the arm could not be used
	// in: it failed, or it was load-bound (Round.LoadBound).
	Lost map[string]int
	// Util is each arm's median share of its quota over the clean rounds.
	Util map[string]float64
	// LoadBound lists the arms load-bound in most clean rounds: their
	// driver, not their server, set the pace.
	LoadBound []string
	// AA is the twin against the baseline on each metric.
	AA []Estimate
	// Ceiling is noop against the baseline, where it ran.
	Ceiling []Estimate
	// Anatomy is every other arm against the baseline on each of the
	// Anatomy figures, where the rounds have them; Medians each arm's
	// median of them over the rounds ("mutex wake-ups/call").
	Anatomy []Estimate
	Medians map[string]float64
	// Wakeup is what a wake-up cost, from the A/A pair; nil where the
	// group has no twin or its rounds carry no wake-ups.
	Wakeup *WakeupCost
	// Known is the calibration; nil where the group has no known arm.
	Known *Calibration
	// Unpaired is, per design and metric ("inputQ calls/s"), the interval
	// half-width the same rounds give unpaired; Paired the paired one.
	Unpaired, Paired map[string]float64
	// Pace is what one of its rounds took: the median time from a round's
	// start to the next round's, whatever group that is; 0 where the
	// rounds have no start times.
	Pace time.Duration
}

// Floor is the A/A control's widest reach from no effect over both
// metrics: the smallest effect this group's rounds can tell from noise;
// +Inf where it is not known: a group without the A/A twin (-aa=false), or
// with too few rounds of it.
func (g Group) Floor() float64 {
	if len(g.AA) == 0 {
		return math.Inf(1)
	}
	f := 0.0
	for _, e := range g.AA {
		if e.N >= 3 {
			f = max(f, math.Abs(e.Lo-1), math.Abs(e.Hi-1))
		} else {
			return math.Inf(1)
		}
	}
	return f
}

// Primary is a primary comparison with its group.
type Primary struct {
	Group string
	paired.Primary
}

// Result is a study's analysis.
type Result struct {
	Options   Options
	Groups    []Group
	Primaries []Primary
	// Pace is the time from one round's start to the next's, over the
	// whole run (its groups' rounds interleave): 0 with fewer than two
	// rounds or no start times.
	Pace time.Duration
}

// RoundsToDecide is what the comparisons not shown would need, were their
// estimates and spreads to hold (paired.Robust.Decidable): how many are
// not shown, and the rounds each group would add for the last of its own
// to be decided (its projection less the rounds it had). A group's rounds
// serve all of its comparisons at once.
func (r Result) RoundsToDecide() (undecided int, more map[string]int) {
	more = map[string]int{}
	for _, p := range r.Primaries {
		if p.Outcome != paired.OutcomeNotShown {
			continue
		}
		undecided++
		if p.ToDecide > 0 {
			more[p.Group] = max(more[p.Group], p.ToDecide-p.N)
		}
	}
	return undecided, more
}

// WidestPrimary is the largest half-width (relative to the estimate,
// paired.Robust.HalfWidth) of a primary interval or of an A/A control's
// over every group (Widest); false when no primary has one.
func (r Result) WidestPrimary() (float64, bool) {
	hw, ok := 0.0, false
	for _, p := range r.Primaries {
		if w, gok := r.Widest(p.Group); gok {
			hw, ok = max(hw, w), true
		}
	}
	return hw, ok
}

// Widest is the largest half-width (relative to the estimate,
// paired.Robust.HalfWidth) of one group's primary intervals, and its A/A
// control's read at AAWidth times its half-width, for -precision's rule;
// false when the group has no primary. The A/A control is the group's
// floor, the smallest effect it can tell from noise, read as its
// interval's farthest bound from no difference: its estimate is noise of
// about the interval's own size, so rounds are added until the half-width
// is within the precision asked over AAWidth. The rule looks at widths
// only, never at where an interval lies.
func (r Result) Widest(group string) (float64, bool) {
	ws, ok := r.widths(group)
	if !ok {
		return 0, false
	}
	return slices.Max(ws), true
}

// widths are the half-widths -precision's rule reads of one group's
// intervals (Widest): every primary's, and its A/A control's at AAWidth
// times its own; +Inf for an interval of too few rounds. false when the
// group has no primary.
func (r Result) widths(group string) ([]float64, bool) {
	var ws []float64
	for _, p := range r.Primaries {
		if p.Group != group {
			continue
		}
		if p.N < paired.MinBlocksRobust {
			ws = append(ws, math.Inf(1))
			continue
		}
		ws = append(ws, p.HalfWidth())
	}
	if len(ws) == 0 {
		return nil, false
	}
	aa := r.AAWidth()
	for _, g := range r.Groups {
		if g.Name != group {
			continue
		}
		for _, e := range g.AA {
			if e.N < paired.MinBlocksRobust {
				ws = append(ws, math.Inf(1))
				continue
			}
			ws = append(ws, aa*e.HalfWidth())
		}
	}
	return ws, true
}

// AAWidth is how many of its half-widths -precision's rule reads an A/A
// interval as, for the plan's k A/A intervals (every group's, on every
// metric): AAWidth(k). See aaWidth.
func (r Result) AAWidth() float64 {
	k := 0
	for _, g := range r.Groups {
		k += len(g.AA)
	}
	return aaWidth(k)
}

// aaWidth is 1 + z(1 − 0.05/2k)/z(0.975) for k A/A intervals. An A/A
// interval's farthest bound is its estimate's distance from no
// difference plus its half-width hw, and the estimate is noise with a
// standard error of about hw/z(0.975). With hw at most the precision over
// aaWidth(k), the bound passes the precision only when the estimate
// strays past z(1 − 0.05/2k) standard errors, which happens to any of the
// k with a chance of about 5% (Bonferroni): every group's floor is then
// within the precision, not each with a 5% chance of missing it, which
// with ten A/A intervals would be a miss in about two plans of five. One
// A/A interval: 2, its whole width; ten: 2.43. The level read is
// together's, as the known answers' (KnownLevel).
func aaWidth(k int) float64 {
	z := distuv.UnitNormal.Quantile
	return 1 + z(1-(1-together(k))/2)/z(1-(1-paired.Confidence)/2)
}

// together is the level of each of k intervals read together,
// 1 − (1 − paired.Confidence)/k, so that all of them hold their true
// values with paired.Confidence (Bonferroni); one: paired.Confidence.
func together(k int) float64 {
	return 1 - (1-paired.Confidence)/float64(max(k, 1))
}

// Rounds is -precision's rule side by side, group by group: after done
// rounds of each group (by name) whose analysis is res, the rounds each
// is to have in all. A group is done when every primary interval and its
// A/A interval are within target (or there is no target, or its rounds
// reach maxRounds); otherwise it has as many as its widest asks
// (paired.PlanBlocks), at most maxRounds. A group's rounds are its own
// blocks, so one whose intervals are wide does not make every other
// group run as many. The runner runs them and asks again, until the
// answer is the rounds it has: the rule reads the intervals' widths
// only, never where they lie (TestCoverageUnderTheStoppingRule).
func Rounds(res Result, done map[string]int, target float64, maxRounds int) map[string]int {
	out := make(map[string]int, len(done))
	for g, n := range done {
		out[g] = n
		if hw, ok := res.Widest(g); ok && target > 0 {
			out[g] = max(n, paired.PlanBlocks(n, hw, target, maxRounds))
		}
	}
	return out
}

// PerLook is the part of the rounds a budget has left that one look of
// -precision's rule may place: half of them (one when one is left), so
// that the next look, sized from more rounds, places the rest where the
// widths then ask. A look after ten rounds reads widths that are
// themselves noisy, and placing the whole budget on them would leave a
// group that looked narrow early nothing when it widens.
func PerLook(left int) int {
	return (max(left, 0) + 1) / 2
}

// Asks is the rounds each group would ask in all with no bound on them
// (Rounds without -max-blocks): done·(w/target)² for a widest half-width
// w, so that a group's width after n rounds is about target·√(ask/n),
// however far that is past the most rounds it may run.
func Asks(res Result, done map[string]int, target float64) map[string]int {
	return Rounds(res, done, target, math.MaxInt32)
}

// Reachable is, for each group, the rounds in all that the widest of its
// intervals within reach asks: an interval is within reach when the rounds
// it asks (as Asks counts them) are at most every round the run can have,
// the rounds all its groups have run and every round the budget has left
// (left), as if all of them were its group's. An interval beyond it, such
// as a tail percentile whose effect lies at the equivalence margin, cannot
// reach the target in this run whatever it is given; read alone, it would
// take the whole budget from the intervals that can (WithinBudget). The
// reach is the run's, not what is left to the group: measured against its
// own rounds and the budget left, a group that asks for much of the budget
// would fall out of reach as soon as one look had shared the budget among
// the groups, and the looks after it would give it nothing, however near
// its width had come (TestReachableIsTheRunsWholeBudget). A group none of
// whose intervals is within reach, or that is within the target, asks for
// the rounds it has; so does every group once the budget has ended.
// Widths only, as Rounds.
func Reachable(res Result, done map[string]int, target float64, left int) map[string]int {
	out := maps.Clone(done)
	if !(target > 0) || left <= 0 {
		return out
	}
	reach := left
	for _, n := range done {
		reach += n
	}
	for g, n := range done {
		ws, ok := res.widths(g)
		if !ok {
			continue
		}
		for _, w := range ws {
			if ask := paired.PlanBlocks(n, w, target, math.MaxInt32); ask <= reach {
				out[g] = max(out[g], ask)
			}
		}
	}
	return out
}

// WithinBudget trims the rounds each group is to have (want, from done:
// Rounds, bounded by -max-blocks) to at most left rounds more in all.
// Rounds go first to the intervals within reach: each group up to what
// reachable asks (Reachable; nil: none), and only then up to want. In
// each turn a round goes to the group, among those short of what the turn
// gives them, whose rounds so far are the smallest share of what it asks
// (reachable in the first turn, unbounded in the second: Asks): its width
// is then about target·√(ask/rounds), and the budget is spent to make the
// widest of them as narrow as it can, the noisiest group first. The bound
// must not set the order: two groups that both ask past -max-blocks want
// the same rounds, and read from want alone they would share the budget
// evenly however much wider one of them is. The rule still reads widths
// only. Ties go to the group first by name.
func WithinBudget(done, want, ask, reachable map[string]int, left int) map[string]int {
	out := maps.Clone(done)
	groups := slices.Sorted(maps.Keys(want))
	for _, turn := range []struct{ upTo, asks func(g string) int }{
		{func(g string) int { return min(reachable[g], want[g]) }, func(g string) int { return reachable[g] }},
		{func(g string) int { return want[g] }, func(g string) int { return max(ask[g], want[g]) }},
	} {
		for ; left > 0; left-- {
			next, far := "", 0.0
			for _, g := range groups {
				if out[g] >= turn.upTo(g) {
					continue
				}
				// ask/out, the square of how far the group's width would be
				// from the target; a group with no rounds yet is infinitely far.
				if r := float64(turn.asks(g)) / float64(out[g]); next == "" || r > far {
					next, far = g, r
				}
			}
			if next == "" {
				break
			}
			out[next]++
		}
	}
	return out
}

// Analyse judges rounds. arms gives each group's arms (every group must
// have exactly one baseline); rounds may come in any order.
func Analyse(arms map[string][]Arm, rounds []Round, o Options) (Result, error) {
	res := Result{Options: o, Pace: pace(rounds)}
	var cs []paired.Comparison
	var csGroup []string
	names := make([]string, 0, len(arms))
	for g := range arms {
		names = append(names, g)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(firstIndex(rounds, a), firstIndex(rounds, b)) })
	judged := o.Judged()
	// known is how many groups have a known-answer arm: their CPU
	// intervals are read together (KnownLevel).
	known := 0
	for _, as := range arms {
		if _, ok := roleArm(as, RoleKnown); ok {
			known++
		}
	}
	for _, name := range names {
		g := Group{Name: name, Arms: arms[name], Lost: map[string]int{}, Util: map[string]float64{}, Unpaired: map[string]float64{}, Paired: map[string]float64{}}
		base, ok := roleArm(g.Arms, RoleBaseline)
		if !ok {
			return res, fmt.Errorf("duet: group %s has no baseline arm", name)
		}
		var clean []Round
		for _, r := range rounds {
			if r.Group != name {
				continue
			}
			g.Rounds++
			if r.Dropped != "" {
				g.Drops = append(g.Drops, r.Dropped)
				continue
			}
			clean = append(clean, r)
		}
		g.Clean = len(clean)
		g.Pace = groupPace(rounds, name)
		usable := func(r Round, arm string) (Measure, bool) {
			m, ok := r.Arm(arm)
			return m, ok && m.Failed == "" && m.Requests > 0 && !r.LoadBound(m, o.MinUtil)
		}
		for _, a := range g.Arms {
			var utils []float64
			bound := 0
			for _, r := range clean {
				m, ok := r.Arm(a.Name)
				if ok && m.Failed == "" {
					utils = append(utils, m.Util())
				}
				if ok && r.LoadBound(m, o.MinUtil) {
					bound++
				}
				if _, ok := usable(r, a.Name); !ok {
					g.Lost[a.Name]++
				}
			}
			if len(utils) > 0 {
				slices.Sort(utils)
				g.Util[a.Name] = stat.Quantile(0.5, stat.Empirical, utils, nil)
			}
			if 2*bound > len(clean) {
				g.LoadBound = append(g.LoadBound, a.Name)
			}
		}
		// A pair needs both figures: a latency where the driver gave none
		// (rounds recorded before it) is not one.
		pairsWith := func(arm, ref string, m Metric) (x, b []float64) {
			for _, r := range clean {
				mx, okx := usable(r, arm)
				mb, okb := usable(r, ref)
				if okx && okb && m.Of(mx) > 0 && m.Of(mb) > 0 {
					x, b = append(x, m.Of(mx)), append(b, m.Of(mb))
				}
			}
			return x, b
		}
		pairs := func(arm string, m Metric) (x, b []float64) { return pairsWith(arm, base.Name, m) }
		for _, a := range g.Arms {
			switch a.Role {
			case RoleDesign:
				ref := cmp.Or(a.Against, base.Name)
				if !slices.ContainsFunc(g.Arms, func(x Arm) bool { return x.Name == ref }) {
					return res, fmt.Errorf("duet: group %s: %s is compared with %s, which is not one of its arms", name, a.Name, ref)
				}
				for _, m := range judged {
					x, b := pairsWith(a.Name, ref, m)
					cs = append(cs, paired.Comparison{Design: a.Name, Baseline: ref, Metric: m.Name, DesignValues: x, BaselineValues: b})
					csGroup = append(csGroup, name)
					g.Unpaired[a.Name+" "+m.Name] = unpairedHalfWidth(x, b)
				}
			case RoleTwin, RoleCeiling:
				for _, m := range judged {
					x, b := pairs(a.Name, m)
					e := Estimate{Design: a.Name, Metric: m.Name, Unpaired: unpairedHalfWidth(x, b)}
					if len(x) >= 3 {
						logs := logRatios(x, b)
						e.Robust, _ = paired.Yuen(logs, o.Alpha)
					} else {
						e.N = len(x)
					}
					if a.Role == RoleTwin {
						g.AA = append(g.AA, e)
					} else {
						g.Ceiling = append(g.Ceiling, e)
					}
				}
			case RoleKnown:
				// The spin runs in every data call, outside the
				// stores: it adds its own CPU to each.
				c := Calibration{TrueCPU: o.Known.Seconds(), Level: KnownLevel(known)}
				x, b := pairs(a.Name, metricNamed("CPU/call"))
				c.N = len(x)
				if len(x) >= 3 {
					d, _ := paired.Differences(x, b)
					c.CPU, _ = paired.EstimateDifferenceAt(d, c.Level)
					cb := slices.Clone(b)
					slices.Sort(cb)
					med := stat.Quantile(0.5, stat.Empirical, cb, nil)
					c.TrueCalls = med / (med + c.TrueCPU)
					xc, bc := pairs(a.Name, metricNamed("calls/s"))
					c.Calls, _ = paired.Yuen(logRatios(xc, bc), o.Alpha)
				}
				g.Known = &c
			}
		}
		g.Medians = map[string]float64{}
		for _, m := range Anatomy {
			for _, a := range g.Arms {
				var vs []float64
				for _, r := range clean {
					if mx, ok := usable(r, a.Name); ok && m.Of(mx) > 0 {
						vs = append(vs, m.Of(mx))
					}
				}
				if len(vs) > 0 {
					slices.Sort(vs)
					g.Medians[a.Name+" "+m.Name] = stat.Quantile(0.5, stat.Empirical, vs, nil)
				}
				if a.Role == RoleBaseline {
					continue
				}
				// Rounds recorded before the counts were read carry zeros.
				var x, b []float64
				px, pb := pairs(a.Name, m)
				for i := range px {
					if px[i] > 0 && pb[i] > 0 {
						x, b = append(x, px[i]), append(b, pb[i])
					}
				}
				if len(x) < 3 {
					continue
				}
				e := Estimate{Design: a.Name, Metric: m.Name, Unpaired: unpairedHalfWidth(x, b)}
				e.Robust, _ = paired.Yuen(logRatios(x, b), o.Alpha)
				g.Anatomy = append(g.Anatomy, e)
			}
		}
		if twin, ok := roleArm(g.Arms, RoleTwin); ok {
			var dw, dc []float64
			for _, r := range clean {
				mt, okt := usable(r, twin.Name)
				mb, okb := usable(r, base.Name)
				// Rounds recorded before the counts were read carry zeros.
				if okt && okb && mt.Wakeups > 0 && mb.Wakeups > 0 {
					dw = append(dw, mt.WakeupsPerCall()-mb.WakeupsPerCall())
					dc = append(dc, mt.CPUPerCall()-mb.CPUPerCall())
				}
			}
			if w, ok := fitWakeupCost(dw, dc, o.Alpha); ok {
				g.Wakeup = &w
			}
		}
		res.Groups = append(res.Groups, g)
	}
	if len(cs) == 0 {
		return res, nil
	}
	ps, err := paired.Confirm(cs, o.Alpha, o.Margin)
	if err != nil {
		return res, err
	}
	for i, p := range ps {
		res.Primaries = append(res.Primaries, Primary{Group: csGroup[i], Primary: p})
		for gi := range res.Groups {
			if res.Groups[gi].Name == csGroup[i] && p.N >= 3 {
				res.Groups[gi].Paired[p.Design+" "+p.Metric] = (p.Hi - p.Lo) / 2
			}
		}
	}
	return res, nil
}

// groupPace is the median time from the start of each of group's rounds
// to the start of the next round of the run, whatever its group (rounds
// run one at a time); 0 where no round of group has a next.
func groupPace(rounds []Round, group string) time.Duration {
	var took []float64
	for _, r := range rounds {
		if r.Group != group || r.Started.IsZero() {
			continue
		}
		var next time.Time
		for _, o := range rounds {
			if o.Started.After(r.Started) && (next.IsZero() || o.Started.Before(next)) {
				next = o.Started
			}
		}
		if !next.IsZero() {
			took = append(took, next.Sub(r.Started).Seconds())
		}
	}
	if len(took) == 0 {
		return 0
	}
	slices.Sort(took)
	return time.Duration(stat.Quantile(0.5, stat.Empirical, took, nil) * float64(time.Second))
}

// pace is the run's time from one round's start to the next: the span of
// the start times over the rounds between them.
func pace(rounds []Round) time.Duration {
	var first, last time.Time
	n := 0
	for _, r := range rounds {
		if r.Started.IsZero() {
			continue
		}
		if n == 0 || r.Started.Before(first) {
			first = r.Started
		}
		if n == 0 || r.Started.After(last) {
			last = r.Started
		}
		n++
	}
	if n < 2 {
		return 0
	}
	return last.Sub(first) / time.Duration(n-1)
}

func firstIndex(rounds []Round, group string) int {
	i := slices.IndexFunc(rounds, func(r Round) bool { return r.Group == group })
	if i < 0 {
		return math.MaxInt
	}
	return i
}

func roleArm(arms []Arm, role string) (Arm, bool) {
	i := slices.IndexFunc(arms, func(a Arm) bool { return a.Role == role })
	if i < 0 {
		return Arm{}, false
	}
	return arms[i], true
}

func logRatios(x, b []float64) []float64 {
	out := make([]float64, len(x))
	for i := range x {
		out[i] = math.Log(x[i] / b[i])
	}
	return out
}

// unpairedHalfWidth is the 95% half-width, on the ratio scale, of the
// ratio of geometric means when the two arms' rounds are treated as
// independent samples (Welch): the interval an analysis that ignored the
// rounds would give. NaN with fewer than 3 rounds.
func unpairedHalfWidth(x, b []float64) float64 {
	n := len(x)
	if n < 3 || len(b) != n {
		return math.NaN()
	}
	lx, lb := make([]float64, n), make([]float64, n)
	for i := range x {
		lx[i], lb[i] = math.Log(x[i]), math.Log(b[i])
	}
	vx, vb := stat.Variance(lx, nil)/float64(n), stat.Variance(lb, nil)/float64(n)
	se := math.Sqrt(vx + vb)
	if se == 0 {
		return 0
	}
	df := (vx + vb) * (vx + vb) / (vx*vx/float64(n-1) + vb*vb/float64(n-1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(0.975)
	d := stat.Mean(lx, nil) - stat.Mean(lb, nil)
	return (math.Exp(d+t*se) - math.Exp(d-t*se)) / 2
}
