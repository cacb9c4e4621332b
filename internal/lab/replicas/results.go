package replicas

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/locklab/locklab/internal/lab/paired"
)

// Results are everything a study run measured; the report is rendered
// from them alone, and they are saved beside it (results.json).
type Results struct {
	Command         string
	CPUs            int // the machine's
	ReplicaCPUs     float64
	AnomalyReplicas int
	AnomalyRun      string
	Callers         int
	CostDesign      string
	Round           string
	Blocks          int

	Anomalies []AnomalyRow
	Cost      []Round
	// DBCost are the cost rounds over one database (DBCostArms), each arm
	// compared with DBBaseline's.
	DBCost     []Round
	DBBaseline string
	NGrinder   []Round
	RPCX       []Level
	// DesignCost are the rounds of every design behind the balancer
	// (DesignArms), each design's arm compared with its own baseline
	// (DesignBaseline); Designs are those designs, in the registry's order.
	// Results saved before it have none, and their page has no section.
	DesignCost     []Round  `json:",omitempty"`
	Designs        []string `json:",omitempty"`
	DesignFront    string   `json:",omitempty"`
	DesignReplicas int      `json:",omitempty"`
	DesignRound    string   `json:",omitempty"`
	DesignBlocks   int      `json:",omitempty"`
}

// DesignRounds are the rounds of DesignCost of one design.
func (r *Results) DesignRounds(design string) []Round {
	var out []Round
	for _, x := range r.DesignCost {
		if x.Design == design {
			out = append(out, x)
		}
	}
	return out
}

// AnomalyRow is one design under one front of the anomaly table.
type AnomalyRow struct {
	Design   string
	Front    string
	Keyed    bool // the front routes by key (anomalies expected: none)
	DB       bool // the replicas share one database (the bank's state)
	Claims   bool // the design claims safety across replicas (ClaimsSafety)
	Findings []Finding
	Calls    int64
	Errors   int64 // calls that failed other than by a refused transfer
}

// Anomalous says whether any of the row's workloads found an anomaly.
func (r AnomalyRow) Anomalous() bool { return slices.ContainsFunc(r.Findings, Finding.Anomalous) }

// The verdicts of a row of the anomaly table (AnomalyRow.Verdict).
const (
	ClaimHeld   = "claim held"
	ClaimBroken = "claim broken"
	AsExpected  = "as expected"
	Unexpected  = "not as expected"
	Measured    = "measured, no claim"
)

// Verdict holds the row to the study's rule: a design that claims safety
// across replicas shows no anomaly and no failed call under every front
// (ClaimHeld, else ClaimBroken); a design in memory, which claims nothing,
// is a control that shows anomalies under round robin and none under key
// routing, with no failed call (AsExpected, else Unexpected); a design over
// the database that claims nothing is measured, not judged.
func (r AnomalyRow) Verdict() string {
	switch {
	case r.Claims && !r.Anomalous() && r.Errors == 0:
		return ClaimHeld
	case r.Claims:
		return ClaimBroken
	case r.DB:
		return Measured
	case r.Anomalous() != r.Keyed && r.Errors == 0:
		return AsExpected
	}
	return Unexpected
}

// Expected says whether the row holds to the study's rule (Verdict).
func (r AnomalyRow) Expected() bool {
	switch r.Verdict() {
	case ClaimBroken, Unexpected:
		return false
	}
	return true
}

// Fenced sums the row's attempts refused with ABORTED, each retried.
func (r AnomalyRow) Fenced() int64 {
	var n int64
	for _, f := range r.Findings {
		n += f.Fenced
	}
	return n
}

// Round is one arm's run in one block.
type Round struct {
	Arm      string
	Design   string `json:",omitempty"` // the arm's own design, where it has one
	Replicas int
	Block    int
	Calls    int64
	Errors   int64
	// Fenced and Unknown: over a database, the attempts refused with
	// ABORTED and those without a definite answer, each retried.
	Fenced, Unknown int64 `json:",omitempty"`
	CallsPerS,
	P99Ms,
	ServerCPUPerCallUs,
	BalancerCPUPerCallUs,
	DriverCPUPerCallUs,
	QuotaUse float64
}

// A Metric is one figure of a round the cost table compares.
type Metric struct {
	Name string
	Of   func(Round) float64
}

// Metrics are the cost table's figures, in its order.
var Metrics = []Metric{
	{"calls/s", func(r Round) float64 { return r.CallsPerS }},
	{"p99 (ms)", func(r Round) float64 { return r.P99Ms }},
	{"server CPU per call (µs)", func(r Round) float64 { return r.ServerCPUPerCallUs }},
	{"hop CPU per call (µs)", func(r Round) float64 { return r.BalancerCPUPerCallUs + r.DriverCPUPerCallUs }},
}

// Compared is one arm's metric against the baseline's, block by block.
type Compared struct {
	Arm, Metric string
	Median      float64 // the arm's own median over its rounds
	Effect      paired.Effect
	Err         string // why there is no effect (a zero in some block)
}

// Compare pairs each arm's rounds with the baseline's of the same block
// and estimates, per metric, the arm's ratio to the baseline with its
// interval (paired.Estimate). The baseline's own row has its medians and
// no effect.
func Compare(rounds []Round, baseline string) []Compared {
	// The baseline first, then by size and name: the rounds' own order is
	// drawn afresh per block.
	size := map[string]int{}
	var arms []string
	for _, r := range rounds {
		if !slices.Contains(arms, r.Arm) {
			arms = append(arms, r.Arm)
		}
		size[r.Arm] = r.Replicas
	}
	slices.SortFunc(arms, func(a, b string) int {
		return cmp.Or(cmp.Compare(b2i(a != baseline), b2i(b != baseline)), cmp.Compare(size[a], size[b]), cmp.Compare(a, b))
	})
	byBlock := func(arm string, m Metric) map[int]float64 {
		out := map[int]float64{}
		for _, r := range rounds {
			if r.Arm == arm {
				out[r.Block] = m.Of(r)
			}
		}
		return out
	}
	var out []Compared
	for _, arm := range arms {
		for _, m := range Metrics {
			mine, base := byBlock(arm, m), byBlock(baseline, m)
			c := Compared{Arm: arm, Metric: m.Name, Median: median(values(mine))}
			if arm != baseline {
				var t, b []float64
				for _, blk := range sortedKeys(mine) {
					if v, ok := base[blk]; ok {
						t, b = append(t, mine[blk]), append(b, v)
					}
				}
				ratios, err := paired.Ratios(t, b)
				if err == nil {
					c.Effect, err = paired.Estimate(ratios)
				}
				if err != nil {
					c.Err = err.Error()
				}
			}
			out = append(out, c)
		}
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func values(m map[int]float64) []float64 {
	var out []float64
	for _, k := range sortedKeys(m) {
		out = append(out, m[k])
	}
	return out
}

func sortedKeys(m map[int]float64) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Level is one row of the rpcx table: the page's columns, then what says
// which side ran out first.
type Level struct {
	Clients                               int
	MeanMs, MedianMs, MaxMs, MinMs, P99Ms float64
	TPS                                   float64
	Errors                                int64
	QuotaUse                              float64 // the servers' CPU over their quota
	DriverCPUs                            float64 // the driver's CPU time over the round, in CPUs
	Bottleneck                            string
}

// Saturated is the share of their quota at which the servers count as
// saturated, and of its CPUs at which the driver does.
const Saturated = 0.9

// The bottlenecks Bottleneck names.
const (
	ServersBound = "servers"
	DriverBound  = "driver"
	NeitherBound = "neither (latency)"
)

// Bottleneck says which side ran out first: the servers when they used
// Saturated of their quota; otherwise the driver when it used Saturated of
// the CPUs the servers' quotas leave on the machine; otherwise neither.
func Bottleneck(quotaUse, driverCPUs float64, cpus int, serverQuota float64) string {
	switch free := float64(cpus) - serverQuota; {
	case quotaUse >= Saturated:
		return ServersBound
	case driverCPUs >= Saturated*free:
		return DriverBound
	default:
		return NeitherBound
	}
}

// ms formats a latency.
func ms(v float64) string { return fmt.Sprintf("%.2f", v) }
