package run

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

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
