package plan

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/load"
)

// tallyJSON is a throw-away workload's row of workloads.json: keyed, with two
// scenarios.
const tallyJSON = `{"doc": "a test's workload", "keyed": true, "cases": ["add"],
	"scenarios": {"X": {"doc": "one start"}, "Y": {"doc": "another"}},
	"defaults": {"scenario": "Y"}}`

// addWorkload adds a row to workloads.json, as the committed file with it
// appended, for one test.
func addWorkload(t *testing.T, name, row string) {
	t.Helper()
	b, err := os.ReadFile("../../../load/workloads.json")
	require.NoError(t, err)
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &top))
	ws := top["workloads"]
	top["workloads"] = append(append(ws[:len(ws)-1:len(ws)-1], []byte(`,"`+name+`":`+row)...), '}')
	b, err = json.Marshal(top)
	require.NoError(t, err)
	d, err := load.ParseDefinitions(b)
	require.NoError(t, err)
	saved := definitions
	definitions = func() *load.Definitions { return d }
	t.Cleanup(func() { definitions = saved })
}

// TestAWorkloadIsOneRow adds a workload to workloads.json and sees the
// runner take it up: -workloads names it once per scenario, with its k6
// script, its bare name means its default scenario, the factors that need
// keys apply to it, and the plan lays out its runs on the modes whose
// -list-modes says they serve it.
func TestAWorkloadIsOneRow(t *testing.T) {
	addWorkload(t, "tally", tallyJSON)
	assert.Subset(t, WorkloadNames(), []string{"tally-X", "tally-Y"})
	w, ok := LookupWorkload("tally")
	require.True(t, ok)
	assert.Equal(t, Workload{Name: "tally-Y", Kind: "tally", Script: "tally.js", Scenario: "Y"}, w)
	assert.True(t, hasKeys("tally"), "keyed in its row")
	assert.False(t, hasKeys("counter"), "the control: the counter's row is not keyed")

	space, err := ParseSpace(map[string]string{"skew": "0,0.99"})
	require.NoError(t, err)
	cfg := Config{Workloads: []Workload{w}, Modes: []string{"mutex", "atomic"}, Drivers: []string{"go"},
		Model: "closed", Levels: []int{10}, Reps: 1, Factors: space}
	cat := Catalog{Base: ParseModeList("mutex counter bank kv tally\natomic counter\n")}
	specs := Layout(cfg, cat, func(string, Workload, string) bool { return true })
	require.Len(t, specs, 2, "mutex at both skews; atomic does not serve it")
	for _, s := range specs {
		assert.Equal(t, "tally-Y", s.Workload)
		assert.Equal(t, "mutex", s.Mode)
	}
	na := NACells(cfg, cat)
	require.NotEmpty(t, na)
	assert.Contains(t, na[0].Reason, "atomic does not serve the tally workload")
}
