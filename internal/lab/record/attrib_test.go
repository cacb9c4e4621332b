package record

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/attrib"
)

func TestAttribution(t *testing.T) {
	b := attrib.Breakdown{Wall: 2 * time.Second, Samples: 100, Total: time.Second, CPU: map[string]time.Duration{}}
	for _, c := range attrib.CategoryNames() {
		b.CPU[c] = 0
	}
	b.CPU["store"], b.CPU["scheduler"], b.CPU["grpc"] = 250*time.Millisecond, 250*time.Millisecond, 500*time.Millisecond
	a, err := NewAttribution(b, "001-x.cpu.pprof", attrib.IO{Reads: 10, Writes: 20}, attrib.IO{Reads: 1010, Writes: 520}, 1000)
	require.NoError(t, err)
	assert.Len(t, a.CPUSeconds, len(attrib.CategoryNames()), "every category a key")
	assert.InDelta(t, 1.0, a.Total(), 1e-12)
	reads, writes, err := a.PerCall()
	require.NoError(t, err)
	assert.InDelta(t, 1.0, reads, 1e-12)
	assert.InDelta(t, 0.5, writes, 1e-12)

	r := &Run{Attribution: a, Derived: Derived{ServerCPUPerCallUs: 40}}
	us, err := r.CategoryUs("store")
	require.NoError(t, err)
	assert.InDelta(t, 10, us, 1e-12, "a quarter of the profile, a quarter of the server's CPU per call")
	var sum float64
	for _, c := range attrib.CategoryNames() {
		us, err := r.CategoryUs(c)
		require.NoError(t, err)
		sum += us
	}
	assert.InDelta(t, 40, sum, 1e-9, "the categories add up to the server's CPU per call")

	// A record round-trips, and one folded with another table is refused
	// by name, not read as zero.
	j, err := json.Marshal(r)
	require.NoError(t, err)
	var back Run
	require.NoError(t, json.Unmarshal(j, &back))
	assert.Equal(t, a, back.Attribution)
	delete(back.Attribution.CPUSeconds, "store")
	_, err = back.CategoryUs("store")
	assert.ErrorContains(t, err, `no category "store"`)

	_, err = (&Run{}).CategoryUs("store")
	assert.ErrorContains(t, err, "no attribution")
	_, err = NewAttribution(b, "", attrib.IO{Reads: 10}, attrib.IO{Reads: 9}, 1)
	assert.ErrorContains(t, err, "backwards")
	_, _, err = (&Attribution{}).PerCall()
	assert.Error(t, err)
	_, err = (&Attribution{CPUSeconds: map[string]float64{"store": 0}}).Share("store")
	assert.ErrorContains(t, err, "no CPU")
}

// Total is the same sum at every call: a report rendered twice from the
// same records is the same bytes.
func TestAttributionTotalIsDeterministic(t *testing.T) {
	a := &Attribution{CPUSeconds: map[string]float64{"a": 1e16, "b": 1, "c": -1e16, "d": 1, "e": 0.1, "f": 0.2, "g": 0.3, "h": 3e-17, "i": 7}}
	// The control: these values sum to other bits in another order.
	sum := func(keys ...string) float64 {
		var s float64
		for _, k := range keys {
			s += a.CPUSeconds[k]
		}
		return s
	}
	require.NotEqual(t, sum("a", "b", "c", "d", "e", "f", "g", "h", "i"), sum("i", "h", "g", "f", "e", "d", "c", "b", "a"))
	first := a.Total()
	for range 200 {
		require.Equal(t, first, a.Total())
	}
}
