package plan

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServerCPUsValues: a count and the set it names are one value; a set
// has one canonical text whatever order it is written in; the JSON form
// reads back; the id has only [a-z0-9.-].
func TestServerCPUsValues(t *testing.T) {
	tests := []struct {
		in, canon string
		set       []int
		id        string
		json      string
	}{
		{"half", "half", nil, "", `"half"`},
		{"1", "1", []int{0}, "-cpus1", `1`},
		{"64", "64", nil, "-cpus64", `64`},
		{"0-1", "2", []int{0, 1}, "-cpus2", `2`},
		{"1+0", "2", []int{0, 1}, "-cpus2", `2`},
		{"2-3", "2-3", []int{2, 3}, "-cpus2-3", `"2-3"`},
		{"4+0-1+5", "0-1+4-5", []int{0, 1, 4, 5}, "-cpus0-1.4-5", `"0-1+4-5"`},
		{"3-3", "3-3", []int{3}, "-cpus3-3", `"3-3"`},
		{"0-0", "1", []int{0}, "-cpus1", `1`},
		{"2+2+3", "2-3", []int{2, 3}, "-cpus2-3", `"2-3"`},
	}
	for _, tt := range tests {
		v, err := serverCPUsFactor.Parse(tt.in)
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.canon, v, tt.in)
		set, ok := CPUSet(v)
		assert.Equal(t, tt.canon != "half", ok, tt.in)
		if tt.set != nil {
			assert.Equal(t, tt.set, set, tt.in)
		}
		pt := DefaultPoint().With(ServerCPUs, v)
		assert.Equal(t, tt.id, pt.IDSuffix(), tt.in)
		b, err := json.Marshal(serverCPUsFactor.Encode(v))
		require.NoError(t, err)
		assert.JSONEq(t, tt.json, string(b), tt.in)
		back, err := serverCPUsFactor.Decode(b)
		require.NoError(t, err)
		assert.Equal(t, v, back, tt.in)
		var p Placement
		serverCPUsFactor.Place(v, &p)
		assert.Equal(t, tt.set == nil && tt.canon == "half", p.Server == nil, "half leaves the base placement")
	}
	for _, bad := range []string{"0", "-1", "x", "1-", "-2", "3-1", "0+", "+1", "1--2", "1+-2", "4097", "0-4096", " 1"} {
		_, err := serverCPUsFactor.Parse(bad)
		assert.ErrorContains(t, err, "-server-cpus: ", bad)
	}
	_, err := ParseSpace(map[string]string{ServerCPUs: "2,0-1"})
	assert.ErrorContains(t, err, `-server-cpus "2,0-1": "0-1" is 2 again`)
}
