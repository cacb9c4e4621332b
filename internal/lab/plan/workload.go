package plan

import (
	"cmp"
	"slices"

	"github.com/locklab/locklab/load"
)

// definitions are the workloads' rows the runner ranges over: workloads.json
// (a test adds a row to them).
var definitions = load.Workloads

// Workload is a workload as the runner names it, and how each driver selects
// it.
type Workload struct {
	Name     string // as given on the command line: counter, bank-A, kv …
	Kind     string // the server's and the Go driver's workload: counter, bank, kv
	Script   string // k6 script, a file name under the scripts folder
	Scenario string // bank: A, B or C
}

// Workloads are the runner's workloads, sorted by name: every row of
// workloads.json, the one definition the drivers share, and a workload with
// scenarios (the bank) once per scenario, since a scenario changes what a run
// may see (refusals). Its k6 script is k6/<name>.js.
func Workloads() []Workload {
	defs := definitions()
	var out []Workload
	for _, kind := range defs.Names() {
		scenarios := defs.Scenarios(kind)
		if len(scenarios) == 0 {
			scenarios = []string{""}
		}
		for _, sc := range scenarios {
			w := Workload{Name: kind, Kind: kind, Script: kind + ".js", Scenario: sc}
			if sc != "" {
				w.Name = kind + "-" + sc
			}
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b Workload) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// WorkloadNames lists the accepted -workloads values, sorted.
func WorkloadNames() []string {
	var names []string
	for _, w := range Workloads() {
		names = append(names, w.Name)
	}
	return names
}

// LookupWorkload finds a workload by its runner name; the bare name of a
// workload with scenarios (bank) means it in its default scenario.
func LookupWorkload(name string) (Workload, bool) {
	if r, ok := definitions().Row(name); ok && len(r.Scenarios) > 0 {
		name += "-" + r.Defaults.Scenario
	}
	for _, w := range Workloads() {
		if w.Name == name {
			return w, true
		}
	}
	return Workload{}, false
}
