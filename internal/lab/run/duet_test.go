package run

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/cpuset"
	"github.com/locklab/locklab/internal/lab/duet"
)

// TestDuetForeign: on a set the lab's processes used 0.6 of, interrupts (its
// own loopback traffic) and the runner's own CPU are not foreign; steal
// and another process's time are, and pass the gate (the controls).
func TestDuetForeign(t *testing.T) {
	quiet := cpuset.Usage{User: 0.55, System: 0.05, SoftIRQ: 0.12, IRQ: 0.01, Idle: 0.27}
	assert.InDelta(t, 0, duetForeign(quiet, 0.6, 0), 1e-9, "interrupts are the lab's traffic")
	withRunner := quiet
	withRunner.User += 0.03
	withRunner.Idle -= 0.03
	assert.InDelta(t, 0, duetForeign(withRunner, 0.6, 0.03), 1e-9, "the runner's CPU is the lab's")
	stolen := quiet
	stolen.Steal, stolen.Idle = 0.15, 0.12
	other := quiet
	other.User, other.Idle = 0.75, 0.07
	for name, u := range map[string]cpuset.Usage{"steal": stolen, "another process": other} {
		rd := duet.Round{ServerForeign: duetForeign(u, 0.6, 0)}
		duet.Gate(&rd, 0.1)
		assert.NotEmpty(t, rd.Dropped, name)
	}
}

// TestKnownArgs: the known-answer arm is the baseline's server with the
// known spin in every data call.
func TestKnownArgs(t *testing.T) {
	base := []string{"-mode", "mutex", "-work", "10µs"}
	got := knownArgs(base, 2*time.Microsecond)
	assert.Equal(t, []string{"-mode", "mutex", "-work", "10µs", "-call-work", "2µs"}, got)
	assert.Len(t, base, 4, "the baseline's own flags are left as they were")
}

// TestDuetApplies: the plans side-by-side rounds cannot run say why, and
// run isolated; the control, the default plan, runs side by side.
func TestDuetApplies(t *testing.T) {
	base := Options{Workloads: "counter,bank-A", Modes: "mutex,inputQ", Drivers: "go", Model: "closed", VUs: "10", H2loadVUs: "100",
		Reps: 3, Baseline: "mutex", Duration: time.Second, Warmup: 400 * time.Millisecond, Pin: true, Measure: MeasureDuet,
		Factors: map[string]string{}, Conns: 4, MaxVUs: 100}
	cfg, err := NewConfig(base, 2)
	require.NoError(t, err)
	assert.Empty(t, DuetApplies(cfg), "the control")
	for name, change := range map[string]func(o *Options){
		"k6":       func(o *Options) { o.Drivers = "k6" },
		"database": func(o *Options) { o.Workloads = "bank-A"; o.Factors = map[string]string{"backend": "mysql"} },
		"open":     func(o *Options) { o.Model, o.Rates, o.VUs = "open", "100", "" },
		"unpinned": func(o *Options) { o.Pin = false },
	} {
		o := base
		o.Factors = map[string]string{}
		change(&o)
		cfg, err := NewConfig(o, 2)
		require.NoError(t, err, name)
		assert.NotEmpty(t, DuetApplies(cfg), name)
	}
}
