package plan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/load"
)

// TestWorkloadsFromTheOneDefinition: the runner's workloads are
// workloads.json's, the bank once per scenario it declares.
func TestWorkloadsFromTheOneDefinition(t *testing.T) {
	want := len(load.WorkloadNames()) - 1 + len(load.Workloads().ScenarioNames())
	assert.Len(t, Workloads(), want)
	for _, sc := range load.Workloads().ScenarioNames() {
		w, ok := LookupWorkload("bank-" + sc)
		require.True(t, ok, sc)
		assert.Equal(t, Workload{Name: "bank-" + sc, Kind: "bank", Script: "bank.js", Scenario: sc}, w)
		_, ok = load.ResetScenario(sc)
		assert.True(t, ok, "scenario %s has a value in the API", sc)
	}
	w, ok := LookupWorkload("bank")
	require.True(t, ok)
	assert.Equal(t, "bank-"+load.Workloads().Bank.Defaults.Scenario, w.Name)
	_, ok = LookupWorkload("bank-Z")
	assert.False(t, ok, "the control: a scenario the file does not declare")
}

// TestPointJSON: a run's factors are written as an object in the table's
// order, with each factor's own JSON form, and read back; a factor a record
// lacks is at its default.
func TestPointJSON(t *testing.T) {
	p := DefaultPoint().With("work", "10µs").With("durability", "wal").With("skew", "0.99")
	b, err := json.Marshal(p)
	require.NoError(t, err)
	assert.JSONEq(t, `{"work":10000,"durability":"wal","skew":0.99,"read_ratio":-1,"server_cpus":"half","attribute":"off"}`, string(b))
	assert.Equal(t, `{"work":10000,"durability":"wal","skew":0.99,"read_ratio":-1,"server_cpus":"half","attribute":"off"}`, string(b), "the table's order")
	var back Point
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, p, back)
	require.NoError(t, json.Unmarshal([]byte(`{"work":0}`), &back))
	assert.Equal(t, DefaultPoint(), back)
	assert.Equal(t, DefaultPoint(), Point{}, "the zero Point is the defaults")
	assert.Error(t, json.Unmarshal([]byte(`{"skew":"high"}`), &back))
	assert.Equal(t, "-w10us-wal-skew0.99", p.IDSuffix())
	assert.Empty(t, DefaultPoint().IDSuffix())
	assert.Equal(t, DefaultPoint(), p.ForWorkload("counter").With("work", "0s").With("durability", "none"), "the counter has no keys to skew")
}

func TestSpaceJSON(t *testing.T) {
	sp, err := ParseSpace(map[string]string{"work": "0,50us", "read-ratio": "default,0.5"})
	require.NoError(t, err)
	b, err := json.Marshal(sp)
	require.NoError(t, err)
	assert.Equal(t, `{"work":[0,50000],"durability":["none"],"skew":[0],"read_ratio":[-1,0.5],"server_cpus":["half"],"attribute":["off"]}`, string(b))
	var back Space
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, sp, back)
	assert.Len(t, sp.Points(), 4)
	assert.Equal(t, "work 0s, 50µs, durability none, skew 0, read ratio default, 0.5, server CPUs half, attribution off", sp.String())
}

// TestNAJSON: an n/a cell keeps the value it cannot run with under its
// factor's key, as meta.json has always had it.
func TestNAJSON(t *testing.T) {
	na := NA{Workload: "counter", Mode: "atomic", Factor: "durability", Value: "wal", Reason: "atomic cannot run with a write-ahead log"}
	b, err := json.Marshal(na)
	require.NoError(t, err)
	assert.Equal(t, `{"workload":"counter","mode":"atomic","durability":"wal","reason":"atomic cannot run with a write-ahead log"}`, string(b))
	var back NA
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, na, back)
	plain := NA{Workload: "bank-A", Mode: "atomic", Reason: "atomic does not serve the bank workload"}
	b, err = json.Marshal(plain)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, plain, back)
	_, err = json.Marshal(NA{Factor: "nosuch"})
	assert.Error(t, err)
}

func TestParseModeList(t *testing.T) {
	ml := ParseModeList("mutex counter bank kv\natomic counter\n\n")
	assert.Equal(t, []string{"mutex", "atomic"}, ml.Names())
	assert.True(t, ml.serves("atomic", "counter"))
	assert.False(t, ml.serves("atomic", "bank"))
	assert.False(t, ml.serves("nosuch", "counter"))
}

// TestPointChanged: only the factors moved from their defaults are named;
// the control is the default point, which names none.
func TestPointChanged(t *testing.T) {
	assert.Empty(t, DefaultPoint().Changed())
	p := DefaultPoint().With(Backend, "mysql").With(ServerCPUs, "2")
	got := p.Changed()
	assert.Contains(t, got, "backend=mysql")
	assert.Contains(t, got, "server-cpus=2")
	assert.Len(t, strings.Fields(got), 2)
}
