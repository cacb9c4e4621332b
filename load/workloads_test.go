package load_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/load"
	"github.com/locklab/locklab/server"
)

func TestWorkloadsDefinitions(t *testing.T) {
	d := load.Workloads()
	for _, w := range load.WorkloadNames() {
		assert.NotEmpty(t, d.Cases(w), w)
	}
	assert.Nil(t, d.Cases("nosuch"))
	m, err := d.ParseMix(d.Bank.Mix)
	require.NoError(t, err)
	assert.Len(t, m, len(d.Bank.Cases), "the default mix draws every bank case")
	assert.NotEmpty(t, d.ScenarioNames())
	for _, sc := range d.ScenarioNames() {
		assert.NotEmpty(t, d.Bank.Scenarios[sc].Funded, sc)
	}
}

func TestParseMix(t *testing.T) {
	d := load.Workloads()
	tests := []struct {
		spec string
		want load.Mix // nil: an error
	}{
		{"transfer:3,balance-one:1", load.Mix{{Case: "transfer", Share: 0.75}, {Case: "balance-one", Share: 0.25}}},
		{"transfer", load.Mix{{Case: "transfer", Share: 1}}},
		{"transfer:0,history-one:2", load.Mix{{Case: "history-one", Share: 1}}},
		{"transfer:0", nil},
		{"deposit:1", nil},
		{"transfer:-1", nil},
		{"transfer:x", nil},
		{"transfer:Inf", nil},
		{"", nil},
	}
	for _, tt := range tests {
		got, err := d.ParseMix(tt.spec)
		if tt.want == nil {
			assert.Error(t, err, tt.spec)
			continue
		}
		require.NoError(t, err, tt.spec)
		assert.Equal(t, tt.want, got, tt.spec)
		again, err := d.ParseMix(got.String())
		require.NoError(t, err)
		assert.Equal(t, got, again, "String reads back")
	}
}

func TestReadRatioMix(t *testing.T) {
	d := load.Workloads()
	r, w := d.Bank.ReadRatioCases.Read, d.Bank.ReadRatioCases.Write
	assert.Equal(t, load.Mix{{Case: r, Share: 0.9}, {Case: w, Share: 0.1}}, roundMix(d.ReadRatioMix(0.9)))
	assert.Equal(t, load.Mix{{Case: w, Share: 1}}, d.ReadRatioMix(0))
	assert.Equal(t, load.Mix{{Case: r, Share: 1}}, d.ReadRatioMix(1))
}

func roundMix(m load.Mix) load.Mix {
	for i := range m {
		m[i].Share = float64(int(m[i].Share*1e9+0.5)) / 1e9
	}
	return m
}

// workloads.json and the server name the same workloads, in the same order.
func TestWorkloadsMatchTheServer(t *testing.T) {
	assert.Equal(t, server.Workloads(), load.WorkloadNames())
}

func TestFundedAccounts(t *testing.T) {
	d := load.Workloads()
	for _, sc := range d.ScenarioNames() {
		for _, n := range []int{2, 3, 1000} {
			f := d.FundedAccounts(sc, n)
			assert.True(t, f >= 0 && f <= n, "scenario %s, %d accounts: %d funded", sc, n, f)
			// A refusal is expected exactly where some account is empty.
			assert.Equal(t, d.Bank.Scenarios[sc].RefusalExpected, f < n, "scenario %s", sc)
		}
	}
	assert.Equal(t, 2, d.FundedAccounts("B", 3), "odd accounts: 1 and 3")
	assert.Equal(t, -1, d.FundedAccounts("Z", 10))
}
