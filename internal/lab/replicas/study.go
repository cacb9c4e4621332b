package replicas

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/seeds"
	"github.com/locklab/locklab/workload/dbbank/dbinst"
)

// NGrinderCallers is the nGrinder post's virtual users, as the lab's
// seed-ngrinder study runs them.
const NGrinderCallers = 100

// Run runs the study with o: the anomaly table, the cost rounds and the
// two seed tables. Progress goes to log.
func Run(ctx context.Context, o Options, command string, log io.Writer) (*Results, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	dbArms, err := DBCostArms(o)
	if err != nil {
		return nil, err
	}
	res := &Results{
		Command: command, CPUs: machineCPUs(), ReplicaCPUs: o.ReplicaCPUs, AnomalyReplicas: o.AnomalyReplicas,
		AnomalyRun: o.AnomalyRun.String(), Callers: o.Callers, CostDesign: o.CostDesign, Round: o.Round.String(), Blocks: o.Blocks,
		DBBaseline: dbArms[0].Name(),
	}
	fmt.Fprintf(log, "replicas: about %v\n", Estimate(o).Round(time.Second))
	// One private MariaDB for the whole study, each cluster over a database
	// of its own on it; its directory is named like the clusters', so that
	// a sweep after a killed runner removes it (the server dies with the
	// runner).
	db, err := startDB(ctx)
	if err != nil {
		return nil, err
	}
	res, err = runAll(ctx, o, res, db, dbArms, log)
	if err = errors.Join(err, db.stop()); err != nil {
		return nil, err
	}
	// Every cluster is closed by now: anything of this runner's still
	// there is a leak, and the study says so rather than leave it.
	left, err := Leftovers(ctx, os.Getpid())
	if err != nil {
		return nil, err
	}
	if len(left) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrLeftovers, strings.Join(left, ", "))
	}
	return res, nil
}

// runAll runs the study's parts into res.
func runAll(ctx context.Context, o Options, res *Results, db *studyDB, dbArms []Arm, log io.Writer) (*Results, error) {
	for i, c := range AnomalyPlan() {
		where := ""
		if c.DB {
			where = " over the database"
		}
		fmt.Fprintf(log, "replicas: anomalies %d/%d: %s under %s%s\n", i+1, len(AnomalyPlan()), c.Design, c.Front.Name, where)
		row, err := anomalyCell(ctx, o, c, db)
		if err != nil {
			return nil, fmt.Errorf("replicas: %s under %s: %w", c.Design, c.Front.Name, err)
		}
		res.Anomalies = append(res.Anomalies, row)
	}
	var err error
	fmt.Fprintln(log, "replicas: cost rounds")
	if res.Cost, err = rounds(ctx, o, CostArms(o.CostReplicas), KV, o.Callers, o.Blocks, nil); err != nil {
		return nil, err
	}
	fmt.Fprintln(log, "replicas: every design behind the balancer")
	every := o
	every.Round = o.DesignRound
	if res.DesignCost, err = rounds(ctx, every, DesignArms(), KV, o.Callers, o.DesignBlocks, nil); err != nil {
		return nil, err
	}
	for _, a := range DesignArms() {
		if !slices.Contains(res.Designs, a.Design) {
			res.Designs = append(res.Designs, a.Design)
		}
	}
	res.DesignFront, res.DesignReplicas, res.DesignRound, res.DesignBlocks = DesignFront.Name, DesignReplicas, o.DesignRound.String(), o.DesignBlocks
	fmt.Fprintln(log, "replicas: cost rounds over the database")
	if res.DBCost, err = rounds(ctx, o, dbArms, Bank, o.Callers, o.Blocks, db); err != nil {
		return nil, err
	}
	fmt.Fprintln(log, "replicas: the nGrinder scale-out")
	if res.NGrinder, err = rounds(ctx, o, NGrinderArms, Bank, NGrinderCallers, o.SeedBlocks, nil); err != nil {
		return nil, err
	}
	fmt.Fprintln(log, "replicas: the rpcx page's two servers")
	if res.RPCX, err = rpcxLevels(ctx, o); err != nil {
		return nil, err
	}
	return res, nil
}

// studyDB is the study's private MariaDB, which makes a database per
// cluster.
type studyDB struct {
	dir string
	db  *dbinst.MariaDB
	n   int
}

func startDB(ctx context.Context) (*studyDB, error) {
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", workPrefix, os.Getpid()))
	if err != nil {
		return nil, err
	}
	db, err := dbinst.StartMariaDB(ctx, filepath.Join(dir, "mariadb"))
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	return &studyDB{dir: dir, db: db}, nil
}

// newDSN is a fresh database of its own for one cluster.
func (s *studyDB) newDSN(ctx context.Context) (string, error) {
	s.n++
	return s.db.NewDatabase(ctx, fmt.Sprintf("replicas%d", s.n))
}

// stop stops the server and removes its directory; safe on nil.
func (s *studyDB) stop() error {
	if s == nil || s.db == nil {
		return nil
	}
	err := s.db.Stop()
	s.db = nil
	return errors.Join(err, os.RemoveAll(s.dir))
}

// ErrLeftovers: a study's clusters left something behind after Close.
var ErrLeftovers = errors.New("replicas: the study's clusters left something behind")

// anomalyCell runs each workload of the cell on a fresh cluster; over the
// database, on a fresh database of db.
func anomalyCell(ctx context.Context, o Options, c Cell, db *studyDB) (row AnomalyRow, err error) {
	row = AnomalyRow{Design: c.Design, Front: c.Front.Name, Keyed: c.Front.Keyed(), DB: c.DB, Claims: c.DB && ClaimsSafety(c.Design)}
	cfg := Config{Server: o.Server, Mode: c.Design, Replicas: o.AnomalyReplicas, Front: c.Front, ReplicaCPUs: o.ReplicaCPUs}
	if c.DB {
		if cfg.DSN, err = db.newDSN(ctx); err != nil {
			return row, err
		}
	}
	cl, err := Start(ctx, cfg)
	if err != nil {
		return row, err
	}
	defer func() { err = errors.Join(err, cl.Close()) }()
	for _, w := range c.Workloads {
		l := Load{Workload: w, Callers: o.Callers, Duration: o.AnomalyRun, Seed: o.Seed}
		check := Anomalies
		if c.DB {
			check = func(ctx context.Context, cl *Cluster, l Load) (Finding, Tally, error) {
				return AnomaliesDB(ctx, cl, cfg.DSN, l)
			}
		}
		f, t, err := check(ctx, cl, l)
		if err != nil {
			return row, err
		}
		row.Findings = append(row.Findings, f)
		row.Calls += t.Calls
		row.Errors += t.Errors
	}
	return row, nil
}

// Anomalies resets the cluster's replicas, runs l (Counter or Bank)
// through its front and checks the replicas.
func Anomalies(ctx context.Context, cl *Cluster, l Load) (Finding, Tally, error) {
	if err := Reset(ctx, cl.Replicas()); err != nil {
		return Finding{}, Tally{}, err
	}
	t, err := Drive(ctx, cl.Front(), l)
	if err != nil {
		return Finding{}, t, err
	}
	switch l.Workload {
	case Counter:
		s, err := ReadCounter(ctx, cl.Replicas(), t.AckedDelta)
		return CheckCounter(s), t, err
	case Bank:
		s, err := ReadBank(ctx, cl.Replicas(), t.Ledger)
		return CheckBank(s), t, err
	}
	return Finding{}, t, fmt.Errorf("replicas: no anomaly check for %q", l.Workload)
}

// rounds starts a cluster per arm (an arm over the database on a fresh
// database of db), then runs blocks of rounds, every arm once per block in
// an order drawn for the block (paired.Order).
func rounds(ctx context.Context, o Options, arms []Arm, workload string, callers, blocks int, db *studyDB) (out []Round, err error) {
	clusters := map[string]*Cluster{}
	defer func() {
		for _, cl := range clusters {
			err = errors.Join(err, cl.Close())
		}
	}()
	var names []string
	design := map[string]string{}
	for _, a := range arms {
		design[a.Name()] = a.Design
		cfg := Config{Server: o.Server, Mode: cmp.Or(a.Design, o.CostDesign), Replicas: a.Replicas, Front: a.Front, ReplicaCPUs: o.ReplicaCPUs}
		if a.DB {
			if db == nil {
				return nil, fmt.Errorf("replicas: %s: no database", a.Name())
			}
			if cfg.DSN, err = db.newDSN(ctx); err != nil {
				return nil, err
			}
		}
		cl, err := Start(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("replicas: %s: %w", a.Name(), err)
		}
		clusters[a.Name()] = cl
		names = append(names, a.Name())
	}
	for b := range blocks {
		for _, name := range paired.Order(int(o.Seed), b, names) {
			cl := clusters[name]
			r, _, err := measure(ctx, cl, Load{Workload: workload, Callers: callers, Duration: o.Round, Seed: o.Seed + uint64(b), IDs: cl.Config().DSN != ""})
			if err != nil {
				return nil, fmt.Errorf("replicas: %s, block %d: %w", name, b+1, err)
			}
			r.Arm, r.Design, r.Replicas, r.Block = name, design[name], cl.Config().Replicas, b
			out = append(out, r)
		}
	}
	return out, nil
}

// measure runs one round on a reset cluster and takes its CPU.
func measure(ctx context.Context, cl *Cluster, l Load) (Round, Tally, error) {
	if err := Reset(ctx, cl.Replicas()); err != nil {
		return Round{}, Tally{}, err
	}
	s0, b0, err := cl.CPU()
	if err != nil {
		return Round{}, Tally{}, err
	}
	t, err := Drive(ctx, cl.Front(), l)
	if err != nil {
		return Round{}, t, err
	}
	s1, b1, err := cl.CPU()
	if err != nil {
		return Round{}, t, err
	}
	r := Round{Calls: t.Calls, Errors: t.Errors, Fenced: t.Fenced, Unknown: t.Unknown, CallsPerS: t.CallsPerS(), P99Ms: t.P99(), QuotaUse: cl.QuotaUse(s1-s0, t.Elapsed)}
	if n := float64(t.OK + t.Refused); n > 0 {
		us := func(d time.Duration) float64 { return float64(d.Microseconds()) / n }
		r.ServerCPUPerCallUs, r.BalancerCPUPerCallUs, r.DriverCPUPerCallUs = us(s1-s0), us(b1-b0), us(t.DriverCPU)
	}
	return r, t, nil
}

// rpcxLevels runs the rpcx page's levels of clients against two replicas.
func rpcxLevels(ctx context.Context, o Options) (out []Level, err error) {
	cl, err := Start(ctx, Config{Server: o.Server, Mode: o.CostDesign, Replicas: RPCXArm.Replicas, Front: RPCXArm.Front, ReplicaCPUs: o.ReplicaCPUs})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, cl.Close()) }()
	for _, clients := range seeds.RPCXLevels {
		r, t, err := measure(ctx, cl, Load{Workload: KV, Callers: clients, Duration: o.Round, Seed: o.Seed})
		if err != nil {
			return nil, fmt.Errorf("replicas: rpcx, %d clients: %w", clients, err)
		}
		h := t.Latency
		lv := Level{Clients: clients, MeanMs: h.Mean() / 1000, MedianMs: float64(h.ValueAtQuantile(50)) / 1000,
			MaxMs: float64(h.Max()) / 1000, MinMs: float64(h.Min()) / 1000, P99Ms: r.P99Ms, TPS: r.CallsPerS, Errors: t.Errors,
			QuotaUse: r.QuotaUse, DriverCPUs: t.DriverCPU.Seconds() / t.Elapsed.Seconds()}
		lv.Bottleneck = Bottleneck(lv.QuotaUse, lv.DriverCPUs, machineCPUs(), o.ReplicaCPUs*float64(RPCXArm.Replicas))
		out = append(out, lv)
	}
	return out, nil
}

// Files a study run writes into its folder.
const (
	ResultsFile = "results.json"
	ReportFile  = "README.md"
)

// Write saves res and its report into dir.
func Write(dir string, res *Results) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ResultsFile), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return WritePage(dir, res)
}

// ReadResults reads the results a run saved into dir.
func ReadResults(dir string) (*Results, error) {
	b, err := os.ReadFile(filepath.Join(dir, ResultsFile))
	if err != nil {
		return nil, err
	}
	var res Results
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("replicas: %s: %w", filepath.Join(dir, ResultsFile), err)
	}
	return &res, nil
}
