package replicas

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/locklab/locklab/internal/lab/balancer"
	"github.com/locklab/locklab/internal/lab/seeds"
)

// Options are the study's knobs. The zero value, given a Server and an
// Out, is the study `make replicas` runs (Defaults).
type Options struct {
	Server string // the locklab binary
	Out    string // the study's folder

	// ReplicaCPUs is every replica's quota, in CPUs.
	ReplicaCPUs float64
	// AnomalyReplicas is the cluster size of the anomaly table.
	AnomalyReplicas int
	// AnomalyRun is how long each workload runs per design and front.
	AnomalyRun time.Duration
	// Callers is the driver's concurrency for the anomaly table and the
	// cost rounds.
	Callers int
	// CostReplicas are the cluster sizes the cost is measured at.
	CostReplicas []int
	// CostDesign is the design of the cost rounds and the seed tables.
	CostDesign string
	// Round is one cost or seed round's length; Blocks how many blocks of
	// rounds the cost runs (every arm once per block, in a random order).
	Round  time.Duration
	Blocks int
	// SeedBlocks is the nGrinder table's blocks.
	SeedBlocks int
	Seed       uint64
	// DBFront is the front of the cost rounds over the database, at
	// DBReplicas replicas (DBCostArms).
	DBFront    string
	DBReplicas int
	// DesignRound and DesignBlocks are the rounds of every design behind
	// the balancer (DesignArms): shorter rounds than the cost's, so that
	// twice as many arms as there are designs fit the budget with enough
	// blocks for an interval.
	DesignRound  time.Duration
	DesignBlocks int
}

// Defaults are the study's: rounds that fit the study's budget on a 2-CPU
// machine (Estimate; the catalogue's budget test holds it).
var Defaults = Options{
	ReplicaCPUs:     0.5,
	AnomalyReplicas: 2,
	AnomalyRun:      time.Second,
	Callers:         32,
	CostReplicas:    []int{1, 2, 3},
	CostDesign:      "mutex",
	Round:           2 * time.Second,
	Blocks:          8,
	SeedBlocks:      3,
	Seed:            1,
	DBFront:         "haproxy/" + balancer.Key,
	DBReplicas:      2,
	DesignRound:     time.Second,
	DesignBlocks:    6,
}

// withDefaults fills every zero knob from Defaults.
func (o Options) withDefaults() Options {
	d := Defaults
	o.ReplicaCPUs = cmp.Or(o.ReplicaCPUs, d.ReplicaCPUs)
	o.AnomalyReplicas = cmp.Or(o.AnomalyReplicas, d.AnomalyReplicas)
	o.AnomalyRun = cmp.Or(o.AnomalyRun, d.AnomalyRun)
	o.Callers = cmp.Or(o.Callers, d.Callers)
	if o.CostReplicas == nil {
		o.CostReplicas = d.CostReplicas
	}
	o.CostDesign = cmp.Or(o.CostDesign, d.CostDesign)
	o.Round = cmp.Or(o.Round, d.Round)
	o.Blocks = cmp.Or(o.Blocks, d.Blocks)
	o.SeedBlocks = cmp.Or(o.SeedBlocks, d.SeedBlocks)
	o.Seed = cmp.Or(o.Seed, d.Seed)
	o.DBFront = cmp.Or(o.DBFront, d.DBFront)
	o.DBReplicas = cmp.Or(o.DBReplicas, d.DBReplicas)
	o.DesignRound = cmp.Or(o.DesignRound, d.DesignRound)
	o.DesignBlocks = cmp.Or(o.DesignBlocks, d.DesignBlocks)
	return o
}

// Validate says what is wrong with the options, all of it.
func (o Options) Validate() error {
	o = o.withDefaults()
	var errs []error
	if o.Server == "" || o.Out == "" {
		errs = append(errs, errors.New("replicas: want a server binary and a folder"))
	}
	if o.AnomalyReplicas < 2 {
		errs = append(errs, fmt.Errorf("replicas: the anomaly table needs 2 replicas at least, not %d", o.AnomalyReplicas))
	}
	if o.ReplicaCPUs < 0 || o.Callers < 1 || o.Blocks < 2 || o.SeedBlocks < 1 || o.AnomalyRun < 0 || o.Round < 0 {
		errs = append(errs, fmt.Errorf("replicas: quota %v, callers %d, blocks %d, seed blocks %d, runs %v and %v: want a quota ≥ 0, a caller, 2 blocks, a seed block and positive durations",
			o.ReplicaCPUs, o.Callers, o.Blocks, o.SeedBlocks, o.AnomalyRun, o.Round))
	}
	for _, n := range o.CostReplicas {
		if n < 1 {
			errs = append(errs, fmt.Errorf("replicas: %d replicas", n))
		}
	}
	if !slices.Contains(Designs(), o.CostDesign) || !Serves(o.CostDesign, KV) || !Serves(o.CostDesign, Bank) || !slices.Contains(DBDesigns(), o.CostDesign) {
		errs = append(errs, fmt.Errorf("replicas: design %q: want one of %v that serves the kv and bank workloads and can keep the bank in a database", o.CostDesign, Designs()))
	}
	if f, err := LookupFront(o.DBFront); err != nil {
		errs = append(errs, err)
	} else if f.Name == Direct.Name && o.DBReplicas > 1 {
		errs = append(errs, fmt.Errorf("replicas: the direct front reaches one replica, not %d", o.DBReplicas))
	}
	if o.DBReplicas < 1 {
		errs = append(errs, fmt.Errorf("replicas: %d replicas over the database", o.DBReplicas))
	}
	if o.DesignBlocks < 2 || o.DesignRound < 0 {
		errs = append(errs, fmt.Errorf("replicas: every design's rounds: %d blocks of %v: want 2 blocks at least and a positive duration", o.DesignBlocks, o.DesignRound))
	}
	return errors.Join(errs...)
}

// A Cell is one design under one front of the anomaly table.
type Cell struct {
	Design    string
	Front     Front
	Workloads []string // the workloads the design serves, of Counter and Bank
	// DB: the replicas keep the bank in one database they share; only the
	// bank lives there (the counter would stay in each replica's memory).
	DB bool
}

// AnomalyPlan is every in-memory design under every front, then every
// design over one database under every front, with the bank.
func AnomalyPlan() []Cell {
	var out []Cell
	for _, d := range Designs() {
		for _, f := range Fronts() {
			c := Cell{Design: d, Front: f}
			for _, w := range []string{Counter, Bank} {
				if Serves(d, w) {
					c.Workloads = append(c.Workloads, w)
				}
			}
			out = append(out, c)
		}
	}
	for _, d := range DBDesigns() {
		for _, f := range Fronts() {
			out = append(out, Cell{Design: d, Front: f, Workloads: []string{Bank}, DB: true})
		}
	}
	return out
}

// An Arm is one cluster of the cost rounds: a front at a size, and, over a
// database, a design of its own.
type Arm struct {
	Front    Front
	Replicas int
	// Design is the arm's design over one database (Options.CostDesign
	// when ""); DB keeps the bank there.
	Design string
	DB     bool
}

// Name is how the report names the arm.
func (a Arm) Name() string {
	if a.Design != "" {
		return fmt.Sprintf("%s, %s ×%d", a.Design, a.Front.Name, a.Replicas)
	}
	return fmt.Sprintf("%s ×%d", a.Front.Name, a.Replicas)
}

// DBCostArms are the cost rounds over one database, every arm at
// o.DBReplicas behind o.DBFront: each design that claims safety across
// replicas (ClaimsSafety, from the registry), the one that keeps request
// ids first, the baseline the others are compared with; then o.CostDesign,
// which serialises in one process only.
func DBCostArms(o Options) ([]Arm, error) {
	o = o.withDefaults()
	f, err := LookupFront(o.DBFront)
	if err != nil {
		return nil, err
	}
	var designs []string
	for _, d := range DBDesigns() {
		if ClaimsSafety(d) {
			designs = append(designs, d)
		}
	}
	slices.SortStableFunc(designs, func(a, b string) int { return b2i(KeepsRequestIDs(b)) - b2i(KeepsRequestIDs(a)) })
	if !slices.Contains(designs, o.CostDesign) {
		designs = append(designs, o.CostDesign)
	}
	var out []Arm
	for _, d := range designs {
		out = append(out, Arm{Front: f, Replicas: o.DBReplicas, Design: d, DB: true})
	}
	return out, nil
}

// Baseline is the arm every other is compared with: one replica, dialled.
var Baseline = Arm{Front: Direct, Replicas: 1}

// CostArms are the baseline, then every front of the key policy at every
// size: the key policy, because it is the one that keeps a service of
// replicas correct.
func CostArms(sizes []int) []Arm {
	out := []Arm{Baseline}
	for _, n := range sizes {
		for _, f := range Fronts() {
			if f.Policy == balancer.Key {
				out = append(out, Arm{Front: f, Replicas: n})
			}
		}
	}
	return out
}

// The arms of every design behind the balancer (DesignArms): HAProxy's key
// policy, the one that keeps a service of replicas correct, at the
// smallest service of replicas.
var (
	DesignFront    = Front{Name: "haproxy/" + balancer.Key, Balancer: "haproxy", Policy: balancer.Key}
	DesignReplicas = 2
)

// DesignBaseline is the arm the design's DesignArms are compared with: the
// design itself, one replica, dialled.
func DesignBaseline(design string) Arm { return Arm{Front: Direct, Replicas: 1, Design: design} }

// DesignArms are, for every in-memory design of the registry that serves
// the kv workload (Designs, the anomaly table's list), its baseline
// (DesignBaseline) and the design at DesignReplicas behind DesignFront:
// how each design's cost changes once it is no longer the only
// serialiser.
func DesignArms() []Arm {
	var out []Arm
	for _, d := range Designs() {
		if Serves(d, KV) {
			out = append(out, DesignBaseline(d), Arm{Front: DesignFront, Replicas: DesignReplicas, Design: d})
		}
	}
	return out
}

// The seed tables' arms: the nGrinder post's one server, then two behind
// nginx; the rpcx page's one client balancing over two servers.
var (
	NGrinderArms = []Arm{Baseline, {Front: Front{Name: "nginx/" + balancer.Key, Balancer: "nginx", Policy: balancer.Key}, Replicas: 2}}
	RPCXArm      = Arm{Front: Front{Name: "client/" + balancer.RoundRobin, Client: balancer.RoundRobin, Policy: balancer.RoundRobin}, Replicas: 2}
)

// Per-step overheads of the estimate, as measured on a 2-CPU machine: a
// cluster's start and stop, and the checks after an anomaly run (the
// bank's are Accounts × 2 calls per replica). Over a database a cluster
// also makes a database and migrates it, and the study starts one private
// MariaDB: TestClusterOverDatabase's log shows a cluster started in well
// under a second and the whole MariaDB's start in about three; the
// allowances below are above both, not yet checked by a run of the study.
const (
	clusterOverhead   = 1500 * time.Millisecond
	checkOverhead     = 300 * time.Millisecond
	dbClusterOverhead = 2 * time.Second
	dbStartOverhead   = 5 * time.Second
)

// Estimate is how long the study takes with o: the anomaly table, the
// cost rounds and the two seed tables, each cluster's start and stop
// included.
func Estimate(o Options) time.Duration {
	o = o.withDefaults()
	var d time.Duration
	for _, c := range AnomalyPlan() {
		start := clusterOverhead
		if c.DB {
			start = dbClusterOverhead
		}
		d += start + time.Duration(len(c.Workloads))*(o.AnomalyRun+checkOverhead)
	}
	d += dbStartOverhead
	if dbArms, err := DBCostArms(o); err == nil {
		d += time.Duration(len(dbArms))*dbClusterOverhead + time.Duration(o.Blocks*len(dbArms))*o.Round
	}
	arms := CostArms(o.CostReplicas)
	d += time.Duration(len(arms))*clusterOverhead + time.Duration(o.Blocks*len(arms))*o.Round
	designs := DesignArms()
	d += time.Duration(len(designs))*clusterOverhead + time.Duration(o.DesignBlocks*len(designs))*o.DesignRound
	d += time.Duration(len(NGrinderArms))*clusterOverhead + time.Duration(o.SeedBlocks*len(NGrinderArms))*o.Round
	d += clusterOverhead + time.Duration(len(seeds.RPCXLevels))*o.Round
	return d
}

// machineCPUs is the CPUs the driver, the balancer and the replicas share.
func machineCPUs() int { return runtime.NumCPU() }
