package run

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/internal/lab/record"
)

// TestWindowSets: the sets' time is taken over the same window as the
// processes', the start interpolated; samples that could not read
// /proc/stat are skipped, and fewer than two that could give nothing.
func TestWindowSets(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	set := func(busy, idle, steal float64) record.SetUsage {
		return record.SetUsage{CPUs: []int{0}, User: busy, Idle: idle, Steal: steal}
	}
	samples := []cpuSample{
		{t: at(0), sets: true, serverSet: set(0, 0, 0), driverSet: set(0, 0, 0)},
		{t: at(1), sets: true, serverSet: set(0, 1, 0), driverSet: set(1, 0, 0)},         // connecting: the server idle
		{t: at(2), sets: true, serverSet: set(0.9, 1, 0.1), driverSet: set(1.5, 0.5, 0)}, // load
		{t: at(2.5)}, // /proc/stat unread
		{t: at(3), sets: true, serverSet: set(1.8, 1, 0.2), driverSet: set(2, 1, 0)},
	}
	server, driver := windowSets(samples, 2)
	assert.InDelta(t, 2, server.Total(), 1e-9)
	assert.InDelta(t, 0.9, server.Busy(), 1e-9, "the window leaves connecting out")
	assert.InDelta(t, 0.1, server.StealShare(), 1e-9)
	assert.InDelta(t, 0.5, driver.Busy(), 1e-9)
	server, _ = windowSets(samples, 1.5)
	assert.InDelta(t, 1.5, server.Total(), 1e-9, "interpolated: the window starts at 1.5 s")
	server, _ = windowSets(samples, 0)
	assert.InDelta(t, 0.6, server.Busy(), 1e-9, "the control: over the whole life connecting dilutes it")
	server, _ = windowSets(samples[3:], 2)
	assert.False(t, server.Sampled(), "one readable sample is no window")
}
