package capacity

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/summary"
)

// The capacity study offers every design the same arrival rates (the open
// model, latency from each call's intended start) and finds, per design,
// the highest rate that still meets a latency objective. This file holds its
// pure parts: the objective, the ladder, the knee finder and the admission
// policies of the overload phase.

// ExampleSLO is an objective as -slo reads it, for messages and tests. The
// study's default objective is not a constant: it is FloorObjective of the
// harness's own floor, measured first (docs/methodology.md says why).
const ExampleSLO = "p99<=5ms,achieved>=0.99,errors=0"

// DefaultFloorMultiple is how many times the noop server's p99 at a low
// offered rate (the floor: the driver, the network stack and the process
// wake-ups, no store) the default objective allows.
const DefaultFloorMultiple = 3

// floorResolution is what FloorObjective rounds its bound up to.
const floorResolution = 100 * time.Microsecond

// FloorObjective is the default objective, from the floor's p99 in ms: the
// p99 at most multiple × floorMs, rounded up to 0.1 ms, with ExampleSLO's
// other terms (at least 99% of the offered calls completed, no unexpected
// error).
func FloorObjective(floorMs, multiple float64) SLO {
	o, err := ParseSLO(ExampleSLO)
	if err != nil {
		panic("plan: ExampleSLO does not parse: " + err.Error())
	}
	// In tenths of a ms, less a hair so that 2.1 × 3 stays 6.3.
	tenths := multiple * floorMs * float64(time.Millisecond) / float64(floorResolution)
	d := time.Duration(math.Ceil(tenths-1e-9)) * floorResolution
	o.Latency = max(d, floorResolution)
	return o
}

// MaxSLOLatency is the largest latency bound an objective may have.
const MaxSLOLatency = time.Minute

// SLO is a service-level objective a run meets or not.
type SLO struct {
	// Pct names the latency percentile bounded ("p99"), Latency its bound.
	Pct     string
	Latency time.Duration
	// Achieved is the least share of the offered rate that must complete
	// inside the window.
	Achieved float64
	// Errors is the most unexpected errors (wrong status, wrong answer,
	// failed call) a run may have.
	Errors int64
}

// sloPercentiles is the one list of percentiles an objective may bound,
// each read from the driver's summary.
var sloPercentiles = []struct {
	name string
	read func(summary.LatencyMs) float64
}{
	{"p50", func(l summary.LatencyMs) float64 { return l.P50 }},
	{"p90", func(l summary.LatencyMs) float64 { return l.P90 }},
	{"p95", func(l summary.LatencyMs) float64 { return l.P95 }},
	{"p99", func(l summary.LatencyMs) float64 { return l.P99 }},
	{"p99.9", func(l summary.LatencyMs) float64 { return l.P999 }},
}

func sloPercentileNames() string {
	var names []string
	for _, p := range sloPercentiles {
		names = append(names, p.name)
	}
	return strings.Join(names, ", ")
}

// ParseSLO reads an objective: comma-separated terms, each given once,
//
//	p99<=1ms         a latency percentile (p50, p90, p95, p99, p99.9) at most a duration
//	achieved>=0.99   the completed calls at least this share of the offered ones
//	errors=0         at most this many unexpected errors (errors<=N says the same)
//
// The latency term is required; the others default to achieved>=0.99 and
// errors=0.
func ParseSLO(s string) (SLO, error) {
	bad := func(format string, args ...any) (SLO, error) {
		return SLO{}, fmt.Errorf("-slo %q: "+format+" (e.g. -slo %s)", append([]any{s}, append(args, ExampleSLO)...)...)
	}
	o := SLO{Achieved: 0.99}
	seen := map[string]bool{}
	for term := range strings.SplitSeq(s, ",") {
		term = strings.TrimSpace(term)
		key, op, val, ok := cutOp(term)
		if !ok {
			return bad("term %q: want NAME<=VALUE, NAME>=VALUE or NAME=VALUE", term)
		}
		kind := key
		if strings.HasPrefix(key, "p") {
			kind = "latency"
		}
		if seen[kind] {
			return bad("%s given twice", kind)
		}
		seen[kind] = true
		switch kind {
		case "latency":
			i := slices.IndexFunc(sloPercentiles, func(p struct {
				name string
				read func(summary.LatencyMs) float64
			}) bool {
				return p.name == key
			})
			if i < 0 {
				return bad("no percentile %q: want one of %s", key, sloPercentileNames())
			}
			if op != "<=" {
				return bad("%s bounds latency from above: write %s<=DURATION", key, key)
			}
			d, err := time.ParseDuration(val)
			if err != nil || d <= 0 || d > MaxSLOLatency {
				return bad("%s<=%s: want a duration in (0, 1m], e.g. 1ms", key, val)
			}
			o.Pct, o.Latency = key, d
		case "achieved":
			f, err := strconv.ParseFloat(val, 64)
			if op != ">=" || err != nil || !(f > 0 && f <= 1) {
				return bad("achieved: want achieved>=F with F in (0, 1], e.g. achieved>=0.99")
			}
			o.Achieved = f
		case "errors":
			n, err := strconv.ParseInt(val, 10, 64)
			if op == ">=" || err != nil || n < 0 {
				return bad("errors: want errors=N or errors<=N with N a whole number ≥ 0")
			}
			o.Errors = n
		default:
			return bad("unknown term %q: want a percentile (%s), achieved or errors", key, sloPercentileNames())
		}
	}
	if o.Pct == "" {
		return bad("no latency term: want one such as p99<=1ms")
	}
	return o, nil
}

// cutOp splits "p99<=1ms" at its operator.
func cutOp(term string) (key, op, val string, ok bool) {
	for _, op := range []string{"<=", ">=", "="} {
		if k, v, found := strings.Cut(term, op); found {
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			return k, op, v, k != "" && v != ""
		}
	}
	return "", "", "", false
}

// String is the objective as ParseSLO reads it back.
func (o SLO) String() string {
	return fmt.Sprintf("%s<=%s,achieved>=%s,errors=%d", o.Pct, o.Latency, plan.FormatFloat(o.Achieved), o.Errors)
}

// Title is the objective's latency bound as headings print it: "p99 ≤ 1 ms".
func (o SLO) Title() string {
	ms := float64(o.Latency) / float64(time.Millisecond)
	return fmt.Sprintf("%s ≤ %s ms", o.Pct, plan.FormatFloat(ms))
}

// LatencyMs is the bounded percentile of a run, in ms.
func (o SLO) LatencyMs(l summary.LatencyMs) float64 {
	for _, p := range sloPercentiles {
		if p.name == o.Pct {
			return p.read(l)
		}
	}
	panic("plan: SLO percentile " + o.Pct + " not parsed by ParseSLO")
}

// BoundMs is the latency bound in ms.
func (o SLO) BoundMs() float64 { return float64(o.Latency) / float64(time.Millisecond) }

// Verdict says whether a run offered rate calls/s met the objective, and if
// not, the first term it broke.
func (o SLO) Verdict(rate float64, s *summary.Summary) (ok bool, why string) {
	if s == nil {
		return false, "no result"
	}
	if lat := o.LatencyMs(s.LatencyMs); lat > o.BoundMs() {
		return false, fmt.Sprintf("%s %s ms > %s ms", o.Pct, plan.FormatFloat(lat), plan.FormatFloat(o.BoundMs()))
	}
	if rate > 0 && s.CallsPerS < o.Achieved*rate {
		return false, fmt.Sprintf("achieved %.1f%% of the offered rate < %s%%", 100*s.CallsPerS/rate, plan.FormatFloat(100*o.Achieved))
	}
	if s.UnexpectedErrors > o.Errors {
		return false, fmt.Sprintf("%d unexpected errors > %d", s.UnexpectedErrors, o.Errors)
	}
	return true, ""
}

// DefaultSteps is the capacity study's ladder: percentages of the noop
// server's ceiling (its closed-model throughput), from below the knees to
// the ceiling; the search's bisection narrows each design's bracket from
// there.
const DefaultSteps = "25,50,75,100"

// ParseSteps reads a ladder of percentages (of the ceiling): ascending,
// each in 1..500.
func ParseSteps(s, flagName string) ([]float64, error) {
	ints, err := plan.ParseInts(s, flagName, 1, 500)
	if err != nil {
		return nil, err
	}
	if !slices.IsSorted(ints) {
		return nil, fmt.Errorf("%s %q: want the percentages in ascending order", flagName, s)
	}
	out := make([]float64, len(ints))
	for i, n := range ints {
		out[i] = float64(n) / 100
	}
	return out, nil
}

// ParseRates reads an explicit ladder of rates (calls/s): ascending, whole,
// in 1..1,000,000.
func ParseRates(s, flagName string) ([]int, error) {
	rates, err := plan.ParseInts(s, flagName, 1, 1_000_000)
	if err != nil {
		return nil, err
	}
	if !slices.IsSorted(rates) {
		return nil, fmt.Errorf("%s %q: want the rates in ascending order", flagName, s)
	}
	return rates, nil
}

// LadderRates are the rates of a ladder of fractions of ceiling, whole
// calls/s, at least 1, without repeats.
func LadderRates(ceiling float64, fractions []float64) []int {
	var out []int
	for _, f := range fractions {
		r := max(1, int(ceiling*f+0.5))
		if len(out) == 0 || out[len(out)-1] < r {
			out = append(out, r)
		}
	}
	return out
}

// Probe is one run of a design at an offered rate, judged by the objective.
type Probe struct {
	Rate int
	Pass bool
}

// KneeState is what the knee finder concluded.
type KneeState int

const (
	// KneeFound: every rate up to Rate passed, every rate from Fail on failed.
	KneeFound KneeState = iota + 1
	// KneeBelow: the lowest rate tried failed already.
	KneeBelow
	// KneeAbove: every rate tried passed; the capacity is at least Rate.
	KneeAbove
	// KneeNonMonotone: a rate passed above one that failed; no single
	// rate separates passing from failing, and none is claimed.
	KneeNonMonotone
)

func (s KneeState) String() string {
	switch s {
	case KneeFound:
		return "found"
	case KneeBelow:
		return "below the lowest rate tried"
	case KneeAbove:
		return "above the highest rate tried"
	case KneeNonMonotone:
		return "not found: the curve is not monotone (a rate passed above one that failed)"
	}
	return "KneeState(" + strconv.Itoa(int(s)) + ")"
}

// Knee is the knee finder's answer: the highest passing rate (Rate) below
// the lowest failing one (Fail).
type Knee struct {
	State      KneeState
	Rate, Fail int
}

// FindKnee finds where the probes turn from passing to failing. It claims a
// capacity only when the probes are monotone — every pass below every
// fail — because on a curve that passes again above a failure any one rate
// would be a guess. Probes of the same rate that disagree count as
// non-monotone too. An empty list is KneeNonMonotone with nothing known.
func FindKnee(probes []Probe) Knee {
	if len(probes) == 0 {
		return Knee{State: KneeNonMonotone}
	}
	ps := slices.Clone(probes)
	slices.SortStableFunc(ps, func(a, b Probe) int { return a.Rate - b.Rate })
	firstFail := slices.IndexFunc(ps, func(p Probe) bool { return !p.Pass })
	switch {
	case firstFail < 0:
		return Knee{State: KneeAbove, Rate: ps[len(ps)-1].Rate}
	case slices.ContainsFunc(ps[firstFail:], func(p Probe) bool { return p.Pass }),
		firstFail > 0 && ps[firstFail-1].Rate == ps[firstFail].Rate:
		return Knee{State: KneeNonMonotone, Fail: ps[firstFail].Rate}
	case firstFail == 0:
		return Knee{State: KneeBelow, Fail: ps[0].Rate}
	}
	return Knee{State: KneeFound, Rate: ps[firstFail-1].Rate, Fail: ps[firstFail].Rate}
}

// RefineResolution is how close the search brings the passing and the
// failing rate before it stops: within 1% of the passing one.
const RefineResolution = 0.01

// Next is the rate the search tries next: the midpoint of the bracket
// around a found knee, or false when there is no bracket or it is already
// within RefineResolution.
func (k Knee) Next() (int, bool) {
	if k.State != KneeFound {
		return 0, false
	}
	mid := (k.Rate + k.Fail) / 2
	if float64(k.Fail-k.Rate) <= RefineResolution*float64(k.Rate) || mid <= k.Rate {
		return 0, false
	}
	return mid, true
}

// Admission policies of the overload phase: the same for every design, so
// that the comparison stays fair.
type Policy struct {
	Name string
	Doc  string
	// Server is the server's flags under the policy, given the bound n
	// (calls in the store, or queued commands).
	Server func(n int) []string
	// Serves says whether a design can run under the policy; why not, if
	// not.
	Serves func(mode string) (bool, string)
}

// Policies is the one list of admission policies the overload phase
// compares.
var Policies = []Policy{
	{
		Name: "none", Doc: "no admission control: every call waits its turn",
		Server: func(int) []string { return nil },
		Serves: func(string) (bool, string) { return true, "" },
	},
	{
		Name: "max-inflight", Doc: "-max-inflight N: at most N calls inside the store; one more is answered RESOURCE_EXHAUSTED at once",
		Server: func(n int) []string { return []string{"-max-inflight", strconv.Itoa(n)} },
		Serves: func(string) (bool, string) { return true, "" },
	},
	{
		Name: "max-calls", Doc: "-max-calls N: at most N calls in the server, from their headers to their answer; one more is refused RESOURCE_EXHAUSTED by the transport, before its request is decoded or a handler runs",
		Server: func(n int) []string { return []string{"-max-calls", strconv.Itoa(n)} },
		Serves: func(string) (bool, string) { return true, "" },
	},
	{
		Name: "owner-queue", Doc: "-reject-when-full -queue-size N: the owner's queue holds N commands; one more is answered RESOURCE_EXHAUSTED at once",
		Server: func(n int) []string { return []string{"-reject-when-full", "-queue-size", strconv.Itoa(n)} },
		Serves: func(mode string) (bool, string) {
			d, ok := store.LookupDesign(mode)
			if ok && d.Owner {
				return true, ""
			}
			return false, mode + " has no owner queue"
		},
	},
}

// PolicyNames lists the policies.
func PolicyNames() []string {
	var out []string
	for _, p := range Policies {
		out = append(out, p.Name)
	}
	return out
}

// LookupPolicy finds a policy by name.
func LookupPolicy(name string) (Policy, bool) {
	for _, p := range Policies {
		if p.Name == name {
			return p, true
		}
	}
	return Policy{}, false
}

// AdmissionBound is the bound every admission policy uses, by Little's
// law: calls in the system = arrival rate × time in it. A store that serves
// capacity calls/s and holds at most capacity × objective of them makes each
// wait, on average, no longer than the objective; so that is N (at least 1).
func AdmissionBound(capacity float64, objective time.Duration) int {
	return max(1, int(capacity*objective.Seconds()+0.5))
}
