package load

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	pb "github.com/locklab/locklab/proto/locklab/v1"
)

// workloadsJSON is the one definition of the workloads, shared with the k6
// scripts (k6/lib/core.js opens the same file).
//
//go:embed workloads.json
var workloadsJSON []byte

// WorkloadsSchema is the version of workloads.json this package reads.
const WorkloadsSchema = "locklab.workloads/v1"

// Definitions is workloads.json: one row per workload, which the drivers
// (this package's and k6's) and the runner range over. Every row has the
// fields of Row; the three workloads' own parameters are read into Counter,
// Bank and KV.
type Definitions struct {
	Schema  string `json:"schema"`
	Counter CounterDef
	Bank    BankDef
	KV      KVDef
	names   []string       // the workloads in the file's order
	rows    map[string]Row // by name
}

// Row is what every workload of workloads.json says of itself.
type Row struct {
	Doc   string   `json:"doc"`
	Cases []string `json:"cases"`
	// Keyed: the workload's calls draw keys (accounts, map keys), so skew
	// and a read ratio mean something for it.
	Keyed bool `json:"keyed"`
	// Scenarios are the states a run may start from (the bank's funding),
	// each a workload of its own to the runner; Defaults.Scenario is the
	// one a bare name means.
	Scenarios map[string]ScenarioDef `json:"scenarios"`
	Defaults  struct {
		Scenario string `json:"scenario"`
	} `json:"defaults"`
}

// CounterDef is the counter workload.
type CounterDef struct {
	Cases    []string `json:"cases"`
	Defaults struct {
		Delta int64 `json:"delta"`
	} `json:"defaults"`
}

// BankDef is the bank workload: its cases, default mix and scenarios.
type BankDef struct {
	Cases          []string `json:"cases"`
	Mix            string   `json:"mix"`
	ReadRatioCases struct {
		Read  string `json:"read"`
		Write string `json:"write"`
	} `json:"read_ratio_cases"`
	Scenarios map[string]ScenarioDef `json:"scenarios"`
	Defaults  struct {
		Scenario     string `json:"scenario"`
		Accounts     int    `json:"accounts"`
		Balance      int64  `json:"balance"`
		Amount       int64  `json:"amount"`
		OneAccount   uint32 `json:"one_account"`
		HistoryLimit uint32 `json:"history_limit"`
	} `json:"defaults"`
}

// ScenarioDef is one bank scenario.
type ScenarioDef struct {
	Funded          string `json:"funded"`
	RefusalExpected bool   `json:"refusal_expected"`
	Doc             string `json:"doc"`
}

// KVDef is the key-value workload.
type KVDef struct {
	Cases    []string `json:"cases"`
	Defaults struct {
		ValueSize     int     `json:"value_size"`
		ReadRatio     float64 `json:"read_ratio"`
		KeysPerCaller int     `json:"keys_per_caller"`
		SharedKeys    int     `json:"shared_keys"`
	} `json:"defaults"`
}

var defs = mustParseDefinitions(workloadsJSON)

// Workloads returns the definitions read from workloads.json. Callers must
// not modify them.
func Workloads() *Definitions { return defs }

// WorkloadNames lists the workloads in workloads.json's order (the API's:
// a test holds it to server.Workloads).
func WorkloadNames() []string { return slices.Clone(defs.names) }

// Names lists the workloads in the file's order.
func (d *Definitions) Names() []string { return slices.Clone(d.names) }

// Row returns a workload's row; ok is false for an unknown one.
func (d *Definitions) Row(workload string) (r Row, ok bool) {
	r, ok = d.rows[workload]
	return r, ok
}

// Cases returns the cases a workload can draw, or nil for an unknown one.
func (d *Definitions) Cases(workload string) []string { return d.rows[workload].Cases }

// Scenarios lists a workload's scenarios, sorted; nil if it has none.
func (d *Definitions) Scenarios(workload string) []string {
	var names []string
	for n := range d.rows[workload].Scenarios {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// FundedAccounts is how many of n accounts a bank scenario funds: what,
// times the initial balance, the bank must always hold (money is conserved).
// It is -1 for an unknown scenario.
func (d *Definitions) FundedAccounts(scenario string, n int) int {
	switch d.Bank.Scenarios[scenario].Funded {
	case "all":
		return n
	case "odd":
		return (n + 1) / 2
	case "none":
		return 0
	}
	return -1
}

// ScenarioNames lists the bank scenarios, sorted.
func (d *Definitions) ScenarioNames() []string { return d.Scenarios("bank") }

func mustParseDefinitions(b []byte) *Definitions {
	d, err := parseDefinitions(b)
	if err != nil {
		panic(err) // the file is embedded: a bad one is a build error, caught by the tests
	}
	return d
}

// ParseDefinitions reads a workloads.json (the embedded one is Workloads):
// for a test, or a tool, that adds a workload.
func ParseDefinitions(b []byte) (*Definitions, error) { return parseDefinitions(b) }

func parseDefinitions(b []byte) (*Definitions, error) {
	var top struct {
		Schema    string                     `json:"schema"`
		Workloads map[string]json.RawMessage `json:"workloads"`
	}
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("load: workloads.json: %w", err)
	}
	if top.Schema != WorkloadsSchema {
		return nil, fmt.Errorf("load: workloads.json: schema %q, want %q", top.Schema, WorkloadsSchema)
	}
	d := &Definitions{Schema: top.Schema}
	names, err := objectKeys(b, "workloads")
	if err != nil {
		return nil, fmt.Errorf("load: workloads.json: %w", err)
	}
	d.names, d.rows = names, map[string]Row{}
	for _, name := range names {
		var r Row
		if err := json.Unmarshal(top.Workloads[name], &r); err != nil {
			return nil, fmt.Errorf("load: workloads.json: %s: %w", name, err)
		}
		if len(r.Cases) == 0 {
			return nil, fmt.Errorf("load: workloads.json: %s: no cases", name)
		}
		if _, ok := r.Scenarios[r.Defaults.Scenario]; len(r.Scenarios) > 0 && !ok {
			return nil, fmt.Errorf("load: workloads.json: %s: default scenario %q is not a scenario", name, r.Defaults.Scenario)
		}
		d.rows[name] = r
	}
	// The parameters of the workloads the drivers have calls for.
	targets := map[string]any{"counter": &d.Counter, "bank": &d.Bank, "kv": &d.KV}
	for name := range targets {
		raw, ok := top.Workloads[name]
		if !ok {
			return nil, fmt.Errorf("load: workloads.json: no workload %q", name)
		}
		if err := json.Unmarshal(raw, targets[name]); err != nil {
			return nil, fmt.Errorf("load: workloads.json: %s: %w", name, err)
		}
	}
	if _, err := d.ParseMix(d.Bank.Mix); err != nil {
		return nil, err
	}
	for _, c := range []string{d.Bank.ReadRatioCases.Read, d.Bank.ReadRatioCases.Write} {
		if !slices.Contains(d.Bank.Cases, c) {
			return nil, fmt.Errorf("load: workloads.json: read_ratio_cases: %q is not a bank case", c)
		}
	}
	for name := range d.Bank.Scenarios {
		if d.FundedAccounts(name, 1) < 0 {
			return nil, fmt.Errorf("load: workloads.json: scenario %s: funded %q, want all, odd or none", name, d.Bank.Scenarios[name].Funded)
		}
	}
	if _, ok := d.Bank.Scenarios[d.Bank.Defaults.Scenario]; !ok {
		return nil, fmt.Errorf("load: workloads.json: default scenario %q is not a scenario", d.Bank.Defaults.Scenario)
	}
	return d, nil
}

// objectKeys lists the keys of the object under field of the top-level
// object in b, in the order they appear (encoding/json's maps lose it).
func objectKeys(b []byte, field string) ([]string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(top[field]))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("%s: want an object", field)
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// MixEntry is one case of a mix with its share of the calls (the shares of a
// mix sum to 1).
type MixEntry struct {
	Case  string
	Share float64
}

// Mix is a parsed bank mix: the cases with a weight above zero, in the order
// of the spec.
type Mix []MixEntry

// ParseMix reads a bank mix spec, "transfer:2,balance-random:1" (a case
// without a weight weighs 1), as k6/lib/workloads.js does.
func (d *Definitions) ParseMix(spec string) (Mix, error) {
	var out Mix
	total := 0.0
	for part := range strings.SplitSeq(spec, ",") {
		name, w, hasWeight := strings.Cut(part, ":")
		weight := 1.0
		if hasWeight {
			var err error
			if weight, err = strconv.ParseFloat(w, 64); err != nil {
				weight = math.NaN()
			}
		}
		if !slices.Contains(d.Bank.Cases, name) || !(weight >= 0) || math.IsInf(weight, 1) {
			return nil, fmt.Errorf("load: mix %q: want case:weight pairs, cases %s", spec, strings.Join(d.Bank.Cases, ", "))
		}
		if weight > 0 {
			total += weight
			out = append(out, MixEntry{Case: name, Share: weight})
		}
	}
	if total == 0 {
		return nil, fmt.Errorf("load: mix %q: no case has a weight", spec)
	}
	for i := range out {
		out[i].Share /= total
	}
	return out, nil
}

// ReadRatioMix is the bank mix a read ratio r (0..1) stands for: r of the
// calls read a random account's balance, the rest transfer.
func (d *Definitions) ReadRatioMix(r float64) Mix {
	var m Mix
	if r > 0 {
		m = append(m, MixEntry{Case: d.Bank.ReadRatioCases.Read, Share: r})
	}
	if r < 1 {
		m = append(m, MixEntry{Case: d.Bank.ReadRatioCases.Write, Share: 1 - r})
	}
	return m
}

// String renders the mix as a spec ParseMix reads back.
func (m Mix) String() string {
	parts := make([]string, len(m))
	for i, e := range m {
		parts[i] = e.Case + ":" + strconv.FormatFloat(e.Share, 'g', 6, 64)
	}
	return strings.Join(parts, ",")
}

// ResetScenario is a bank scenario's value in AdminService/Reset, the one
// mapping from workloads.json's letters to the API's enum; "" is the default
// scenario. ok is false for a letter the API does not have.
func ResetScenario(letter string) (sc pb.Scenario, ok bool) {
	if letter == "" {
		letter = defs.Bank.Defaults.Scenario
	}
	v, ok := pb.Scenario_value["SCENARIO_"+letter]
	return pb.Scenario(v), ok
}
