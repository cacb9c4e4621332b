package plan

import (
	"cmp"
	"slices"

	"github.com/locklab/locklab/load"
)

// Workload is a workload as the runner names it, and how each driver selects
// it.
type Workload struct {
	Name     string // as given on the command line: counter, bank-A, kv …
	Kind     string // the server's and the Go driver's workload: counter, bank, kv
	Script   string // k6 script, a file name under the scripts folder
	Scenario string // bank: A, B or C
}

// Workloads are the runner's workloads, sorted by name: every workload of
// workloads.json, the one definition the drivers share, and the bank once
// per scenario, since a scenario changes what a run may see (refusals).
func Workloads() []Workload {
	defs := load.Workloads()
	var out []Workload
	for _, kind := range load.WorkloadNames() {
		scenarios := []string{""}
		if kind == "bank" {
			scenarios = defs.ScenarioNames()
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

// LookupWorkload finds a workload by its runner name; the bare bank means
// the bank in its default scenario.
func LookupWorkload(name string) (Workload, bool) {
	if name == "bank" {
		name = "bank-" + load.Workloads().Bank.Defaults.Scenario
	}
	for _, w := range Workloads() {
		if w.Name == name {
			return w, true
		}
	}
	return Workload{}, false
}
