package plan

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/locklab/locklab/internal/lab/paired"
)

// Config is what the plan ranges over.
type Config struct {
	Workloads []Workload
	Modes     []string
	Drivers   []string // in the order given
	// Model is "closed" (constant callers, levels are caller counts) or
	// "open" (constant arrival rate, levels are calls per second).
	Model string
	// Levels are the load levels of every driver but h2load; H2loadLevels
	// are h2load's (it is the counter's ceiling driver, and its runs cost the
	// time budget as much as anyone's).
	Levels       []int
	H2loadLevels []int
	Reps         int
	Factors      Space
	// Seed draws each block's order of the modes (paired.Order): the same
	// seed lays out the same plan.
	Seed int
	// Twin is the mode run twice in every block, by two servers of its
	// own, as the A/A control: the difference between two identical
	// servers is what "no difference" means on the machine that day.
	// Empty: no A/A control.
	Twin string
}

// LevelsOf are the load levels a driver runs at.
func (c Config) LevelsOf(driver string) []int {
	if driver == "h2load" {
		return c.H2loadLevels
	}
	return c.Levels
}

// Spec is one cell of the comparison's grid: one run.
type Spec struct {
	Index    int    `json:"index"` // 1-based, in execution order
	ID       string `json:"id"`
	Workload string `json:"workload"`
	Scenario string `json:"scenario,omitempty"`
	Driver   string `json:"driver"`
	Factors  Point  `json:"factors"`
	Mode     string `json:"mode"`
	Model    string `json:"model"`
	Level    int    `json:"level"` // callers (closed) or calls/s (open)
	// Rep is the repetition, 1-based: the run's block. Every mode of a
	// group ran once in each block, so the analysis pairs runs by it.
	Rep int `json:"rep"`
	// Twin marks the second run of the A/A control's mode in its block
	// (Config.Twin): the report keeps it apart as its own arm (Arm).
	Twin bool `json:"twin,omitempty"`
	// Attempt counts the times the run's block ran (0 and 1: the first):
	// a block that the validity gate found spoiled runs again, and every
	// attempt keeps its records.
	Attempt int `json:"attempt,omitempty"`
}

// TwinSuffix ends the name of the A/A control's second arm.
const TwinSuffix = " (A/A)"

// Arm is what the analysis calls the run's mode: the mode, or for the A/A
// control's second run the mode and TwinSuffix.
func (s Spec) Arm() string {
	if s.Twin {
		return s.Mode + TwinSuffix
	}
	return s.Mode
}

// Cell names the runs that are compared with each other inside a block:
// one workload, driver, combination of factors (but the arms': Factor.Arm)
// and level in one block. The validity gate judges and reruns a block cell
// by cell.
func (s Spec) Cell() string {
	return fmt.Sprintf("%s|%s|%s|%s|%d|%d", s.Workload, s.Driver, s.Factors.WithoutArms().Key(), s.Model, s.Level, s.Rep)
}

// Retry is the spec of the run's next attempt: the same run with its
// attempt counted in its id.
func (s Spec) Retry() Spec {
	s.Attempt = max(s.Attempt, 1) + 1
	s.ID = s.baseID() + fmt.Sprintf("-try%d", s.Attempt)
	return s
}

// Renumbered is the spec at another place in the execution order, its id
// following its index.
func (s Spec) Renumbered(index int) Spec {
	s.Index = index
	s.ID = s.baseID()
	if s.Attempt > 1 {
		s.ID += fmt.Sprintf("-try%d", s.Attempt)
	}
	return s
}

func (s Spec) baseID() string {
	id := fmt.Sprintf("%03d-%s-%s-%s-%s%d%s-rep%d", s.Index, s.Workload, s.Driver, s.Mode, LevelUnit(s.Model), s.Level, s.Factors.IDSuffix(), s.Rep)
	if s.Twin {
		id += "-aa"
	}
	return id
}

// WorkloadDef is the spec's workload.
func (s Spec) WorkloadDef() Workload {
	w, _ := LookupWorkload(s.Workload)
	return w
}

// LevelUnit names what the level counts in run ids.
func LevelUnit(model string) string {
	if model == "open" {
		return "rate"
	}
	return "vus"
}

// Serves says whether a driver can run a workload under a model.
type Serves func(driver string, wl Workload, model string) bool

// Layout lays out the runs. Each repetition is a block, outermost, so that
// drift over time moves a whole block and cancels out of the per-block
// ratios the report compares. Inside a block the workloads, drivers, factor
// combinations and levels keep their order, and at every one of them the
// arms run in the block's own order, drawn from cfg.Seed (paired.Order): a
// fixed order would let an arm always run first, or always after the same
// neighbour, and take whatever that does to it as its own effect. The arms
// are the modes (and the A/A control's twin), each under every value of the
// arm factors (Factor.Arm: a design on each Go runtime). Cells no mode can
// fill (NACells) get no runs.
func Layout(cfg Config, cat Catalog, serves Serves) []Spec {
	na := NACells(cfg, cat)
	var specs []Spec
	modes := slices.Clone(cfg.Modes)
	if cfg.Twin != "" {
		modes = append(modes, cfg.Twin+TwinSuffix)
	}
	// An arm is a mode under the nth combination of the arm factors'
	// values; without a swept arm factor its name is the mode's alone, so
	// that such a plan's orders are the ones it always drew.
	variants := len(cfg.Factors.Arms(DefaultPoint()))
	type arm struct {
		mode    string
		variant int
	}
	var names []string
	arms := map[string]arm{}
	for _, m := range modes {
		for v := range variants {
			name := m
			if variants > 1 {
				name = fmt.Sprintf("%s#%d", m, v)
			}
			names = append(names, name)
			arms[name] = arm{m, v}
		}
	}
	for rep := 1; rep <= cfg.Reps; rep++ {
		order := paired.Order(cfg.Seed, rep, names)
		for _, wl := range cfg.Workloads {
			for _, drv := range cfg.Drivers {
				if !serves(drv, wl, cfg.Model) {
					continue
				}
				seen := map[Point]bool{}
				for _, pt := range cfg.Factors.Points() {
					pt = pt.ForWorkload(wl.Kind).WithoutArms()
					if seen[pt] {
						continue
					}
					seen[pt] = true
					pts := cfg.Factors.Arms(pt)
					for _, level := range cfg.LevelsOf(drv) {
						for _, name := range order {
							a := arms[name]
							mode, twin := strings.CutSuffix(a.mode, TwinSuffix)
							at := pts[a.variant]
							if _, ok := NAFor(na, wl.Name, mode, at); ok {
								continue
							}
							specs = append(specs, Spec{
								Workload: wl.Name, Scenario: wl.Scenario, Driver: drv, Factors: at, Mode: mode,
								Model: cfg.Model, Level: level, Rep: rep, Twin: twin,
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
		s.ID = s.baseID()
	}
	return specs
}

// ModeList is a server's -list-modes: every mode, in the server's order,
// with the workload kinds it serves.
type ModeList []ModeInfo

// ModeInfo is one line of -list-modes.
type ModeInfo struct {
	Name      string
	Workloads []string
}

// ParseModeList reads -list-modes' output: one mode a line, its name first,
// then the workloads it serves.
func ParseModeList(out string) ModeList {
	var ml ModeList
	for line := range strings.Lines(out) {
		if f := strings.Fields(line); len(f) > 0 {
			ml = append(ml, ModeInfo{Name: f[0], Workloads: f[1:]})
		}
	}
	return ml
}

// Names are the modes, in the server's order.
func (ml ModeList) Names() []string {
	var out []string
	for _, m := range ml {
		out = append(out, m.Name)
	}
	return out
}

func (ml ModeList) lookup(mode string) (ModeInfo, bool) {
	i := slices.IndexFunc(ml, func(m ModeInfo) bool { return m.Name == mode })
	if i < 0 {
		return ModeInfo{}, false
	}
	return ml[i], true
}

// serves reports whether mode is listed and serves kind.
func (ml ModeList) serves(mode, kind string) bool {
	m, ok := ml.lookup(mode)
	return ok && slices.Contains(m.Workloads, kind)
}

// Catalog is what the server binary says it can run: its modes unasked, and
// under the server arguments of each factor value swept (keyed "name=value").
type Catalog struct {
	Base  ModeList
	Under map[string]ModeList
}

// CatalogKey keys Catalog.Under.
func CatalogKey(factor, value string) string { return factor + "=" + value }

// NA is a cell of the grid that has no runs because the mode cannot serve
// it: the report shows it as n/a with the reason, never as an error or a
// zero. Factor and Value are set when a factor's value is what the mode
// cannot do; in JSON the value sits under the factor's key.
type NA struct {
	Workload string
	Mode     string
	Factor   string // a factor's Name
	Value    string
	Reason   string
}

// NACells lists the cells of the grid no mode can fill, one per workload,
// mode and (where it matters) factor value. A mode the server does not list
// at all is preflight's to report, not a cell's.
func NACells(cfg Config, cat Catalog) []NA {
	var out []NA
	for _, wl := range cfg.Workloads {
		for _, mode := range cfg.Modes {
			if !cat.Knows(mode) {
				continue
			}
			applies := func(i int) bool {
				f := Factors[i]
				return i < len(cfg.Factors) && (f.Applies == nil || f.Applies(wl.Kind))
			}
			// A mode the server does not serve unasked may be served under
			// one factor's value (db-rowlock with the bank in a database):
			// that factor's other values are then its n/a cells.
			base, enabler := cat.Base.serves(mode, wl.Kind), -1
			for i, f := range Factors {
				if base || enabler >= 0 || !applies(i) {
					continue
				}
				for _, v := range cfg.Factors[i] {
					if ml, asked := cat.Under[CatalogKey(f.Name, v)]; asked && ml.serves(mode, wl.Kind) {
						enabler = i
					}
				}
			}
			if !base && enabler < 0 {
				out = append(out, NA{Workload: wl.Name, Mode: mode, Reason: fmt.Sprintf("%s does not serve the %s workload", mode, wl.Kind)})
				continue
			}
			for i, f := range Factors {
				if !applies(i) || !base && i != enabler {
					continue
				}
				for _, v := range cfg.Factors[i] {
					ml, asked := cat.Under[CatalogKey(f.Name, v)]
					if asked && !ml.serves(mode, wl.Kind) {
						out = append(out, NA{Workload: wl.Name, Mode: mode, Factor: f.Name, Value: v, Reason: f.refusal(mode, v)})
					}
				}
			}
		}
	}
	return out
}

// Knows reports whether the server lists mode unasked or under some factor
// value.
func (c Catalog) Knows(mode string) bool { return slices.Contains(c.Names(), mode) }

// Names are the modes the server lists unasked, in its order, then those
// it lists only under some factor value (db-rowlock, under -backend mysql).
func (c Catalog) Names() []string {
	names := c.Base.Names()
	keys := slices.Sorted(maps.Keys(c.Under))
	for _, k := range keys {
		for _, m := range c.Under[k].Names() {
			if !slices.Contains(names, m) {
				names = append(names, m)
			}
		}
	}
	return names
}

// NAFor finds the n/a entry of a cell, if it has one.
func NAFor(cells []NA, workload, mode string, pt Point) (NA, bool) {
	for _, c := range cells {
		if c.Workload == workload && c.Mode == mode && (c.Factor == "" || pt.Get(c.Factor) == c.Value) {
			return c, true
		}
	}
	return NA{}, false
}

// MarshalJSON writes {"workload", "mode", <factor's JSON key>: value,
// "reason"}.
func (na NA) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	field := func(k string, v any) error {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(v)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
		return err
	}
	b.WriteByte('{')
	err := field("workload", na.Workload)
	err = cmp.Or(err, field("mode", na.Mode))
	if na.Factor != "" {
		f, _ := lookupFactor(na.Factor)
		if f == nil {
			return nil, fmt.Errorf("n/a cell: no factor %q", na.Factor)
		}
		err = cmp.Or(err, field(f.JSON, f.Encode(na.Value)))
	}
	err = cmp.Or(err, field("reason", na.Reason))
	b.WriteByte('}')
	return b.Bytes(), err
}

// UnmarshalJSON reads what MarshalJSON writes.
func (na *NA) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	var out NA
	for k, p := range map[string]*string{"workload": &out.Workload, "mode": &out.Mode, "reason": &out.Reason} {
		if raw, ok := m[k]; ok {
			if err := json.Unmarshal(raw, p); err != nil {
				return fmt.Errorf("n/a cell: %s: %w", k, err)
			}
		}
	}
	for _, f := range Factors {
		if raw, ok := m[f.JSON]; ok {
			v, err := f.Decode(raw)
			if err != nil {
				return fmt.Errorf("n/a cell: %s: %w", f.Name, err)
			}
			out.Factor, out.Value = f.Name, v
		}
	}
	*na = out
	return nil
}
