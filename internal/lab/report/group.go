package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
)

// Section is one workload driven by one driver under one combination of
// factors: the report's unit, whose levels and modes it compares.
type Section struct {
	Workload string     `json:"workload"`
	Driver   string     `json:"driver"`
	Factors  plan.Point `json:"factors"`
}

func (s Section) String() string {
	return fmt.Sprintf("%s · %s driver · %s", s.Workload, s.Driver, s.Factors)
}

// Group is every repetition of one section × level × mode, and its figures.
type Group struct {
	Section
	Level       int                  `json:"level"`
	Mode        string               `json:"mode"`
	StoreBacked bool                 `json:"store_backed"`
	Runs        []string             `json:"runs"`
	Classes     map[record.Class]int `json:"classes"`
	Failed      int                  `json:"failed_runs"`
	Figures     map[string]Stat      `json:"figures"`

	records []*record.Run
}

func (g *Group) fig(m *Metric) Stat { return g.Figures[m.Key] }

// key identifies a group: every factor is part of it.
func (g *Group) key() string {
	return fmt.Sprintf("%s|%s|%s|%d|%s", g.Workload, g.Driver, g.Factors.Key(), g.Level, g.Mode)
}

// Aggregate groups the runs and computes every figure of the catalogue from
// them. A figure the catalogue declares for every run that no run of a group
// has is an error: the record lacks what the report needs.
func Aggregate(runs []*record.Run) ([]*Group, error) {
	index := map[string]*Group{}
	var groups []*Group
	for _, r := range runs {
		g := &Group{Section: Section{Workload: r.Workload, Driver: r.Driver, Factors: r.Factors}, Level: r.Level, Mode: r.Arm()}
		if have := index[g.key()]; have != nil {
			g = have
		} else {
			g.StoreBacked, g.Classes = r.StoreBacked(), map[record.Class]int{}
			index[g.key()] = g
			groups = append(groups, g)
		}
		g.records = append(g.records, r)
		g.Runs = append(g.Runs, r.ID)
		g.Classes[r.Derived.Class]++
		if r.Failed() {
			g.Failed++
		}
	}
	for _, g := range groups {
		g.Figures = map[string]Stat{}
		ops, err := storeOpsOf(g.records)
		if err != nil {
			return nil, err
		}
		for _, m := range expand(ops) {
			s, err := statOf(g.records, m)
			if err != nil {
				return nil, err
			}
			if s.N > 0 {
				g.Figures[m.Key] = s
			} else if !m.conditional() {
				return nil, fmt.Errorf("report: no run of %s at %d, mode %s has %s", g.Section, g.Level, g.Mode, m.Label)
			}
		}
	}
	slices.SortStableFunc(groups, func(a, b *Group) int {
		return cmp.Or(cmp.Compare(a.Workload, b.Workload), cmp.Compare(a.Driver, b.Driver),
			cmp.Compare(a.Factors.Key(), b.Factors.Key()), cmp.Compare(a.Level, b.Level))
	})
	return groups, nil
}

// statOf is a metric over runs; NaN and infinities (a rate over no time)
// are no figure.
func statOf(runs []*record.Run, m *Metric) (Stat, error) {
	var vals []float64
	var ids []string
	for _, r := range runs {
		v, ok, err := m.value(r)
		if err != nil {
			return Stat{}, fmt.Errorf("run %s: %w", r.ID, err)
		}
		if ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			vals = append(vals, v)
			ids = append(ids, r.ID)
		}
	}
	return statOfValues(vals, ids), nil
}

// storeOpsOf lists the workload.op pairs with store latency in any run.
func storeOpsOf(runs []*record.Run) ([]string, error) {
	var ops []string
	for _, r := range runs {
		st, err := r.ServerStats()
		if err != nil {
			return nil, err
		}
		for _, l := range st.GetStoreLatency() {
			if k := l.GetWorkload() + "." + l.GetOp(); l.GetCount() > 0 && !slices.Contains(ops, k) {
				ops = append(ops, k)
			}
		}
	}
	slices.Sort(ops)
	return ops, nil
}

// storeOps lists the workload.op pairs with store latency in any group.
func storeOps(groups []*Group) []string {
	var runs []*record.Run
	for _, g := range groups {
		runs = append(runs, g.records...)
	}
	ops, _ := storeOpsOf(runs) // Aggregate has decoded every run's stats
	return ops
}
