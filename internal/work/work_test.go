package work_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/work"
	"github.com/locklab/locklab/store"
)

// plain has no capability; reads counts read-only commands (cmd < 0) and
// shards and atomic add the other capabilities.
type plain struct{ applied int }

func (p *plain) Apply(cmd int) (int, error) { p.applied++; return cmd, nil }

type reads struct{ plain }

func (*reads) ReadOnly(cmd int) bool { return cmd < 0 }

type sharded struct {
	reads
	n int
}

func (s *sharded) SetShards(n int)             { s.n = n }
func (s *sharded) ShardsOf(cmd int) (int, int) { return cmd % s.n, cmd % s.n }

type atomicM struct{ plain }

func (*atomicM) ApplyAtomic(cmd int) (int, error) { return cmd + 1000, nil }

func TestCapabilitiesForwarded(t *testing.T) {
	tests := []struct {
		name string
		m    store.Machine[int, int]
		caps store.Capability
	}{
		{"plain", &plain{}, 0},
		{"reads", &reads{}, store.CapReads},
		{"sharded", &sharded{}, store.CapReads | store.CapShards},
		{"atomic", &atomicM{}, store.CapAtomic},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := work.New(tt.m, work.Spinner{})
			assert.Equal(t, tt.caps, w.Capabilities())
			assert.Equal(t, tt.caps, store.CapabilitiesOf[int, int](w), "CapabilitiesOf believes the report, not the method set")

			assert.Equal(t, tt.caps&store.CapReads != 0, w.ReadOnly(-1))
			assert.False(t, w.ReadOnly(1))
			w.SetShards(4)
			a, b := w.ShardsOf(6)
			if tt.caps&store.CapShards != 0 {
				assert.Equal(t, [2]int{2, 2}, [2]int{a, b})
			} else {
				assert.Equal(t, -1, a, "an unsharded machine is one shard: every shard")
			}
			r, err := w.ApplyAtomic(1)
			if tt.caps&store.CapAtomic != 0 {
				require.NoError(t, err)
				assert.Equal(t, 1001, r)
			} else {
				assert.True(t, errors.Is(err, store.ErrUnsupported))
			}
			r, err = w.Apply(7)
			require.NoError(t, err)
			assert.Equal(t, 7, r)
		})
	}
}

func TestCalibrate(t *testing.T) {
	perMicro := work.Calibrate()
	require.Greater(t, perMicro, 10.0, "a loop iteration is a few ns")
	assert.Zero(t, work.NewSpinner(0, perMicro).Iterations())
	assert.Equal(t, uint64(10*perMicro), work.NewSpinner(10*time.Microsecond, perMicro).Iterations())
	work.Spinner{}.Spin() // the zero value does nothing
}

// fastest returns the shortest of a few runs of f: other load can only make
// a run longer.
func fastest(f func()) time.Duration {
	best := time.Hour
	for range 3 {
		start := time.Now()
		f()
		best = min(best, time.Since(start))
	}
	return best
}

// TestSpinTakesItsTime: a write spins for about the duration asked; a
// read-only command does not spin — the control that the timing check can
// tell the two apart.
func TestSpinTakesItsTime(t *testing.T) {
	const d = 20 * time.Millisecond
	w := work.New[int, int](&reads{}, work.NewSpinner(d, work.Calibrate()))
	write := fastest(func() { _, _ = w.Apply(1) })
	assert.GreaterOrEqual(t, write, d/2)
	assert.Less(t, write, 20*d)
	read := fastest(func() { _, _ = w.Apply(-1) })
	assert.Less(t, read, d/10, "read-only commands do not spin")
}

// TestKinds: every kind makes a Spinner, "" the default spin; a sleeper
// runs no loop and sleeps at least its time (time.Sleep's promise, so the
// check needs no tolerance); an unknown kind is refused, naming the kinds.
func TestKinds(t *testing.T) {
	for _, k := range append(work.Kinds(), "") {
		_, err := work.NewKind(k, time.Microsecond)
		require.NoError(t, err, "kind %q", k)
	}
	s, err := work.NewKind(work.KindSpin, 10*time.Microsecond)
	require.NoError(t, err)
	assert.NotZero(t, s.Iterations(), "the default kind spins")

	const d = 2 * time.Millisecond
	sl, err := work.NewKind(work.KindSleep, d)
	require.NoError(t, err)
	assert.Zero(t, sl.Iterations(), "a sleeper runs no loop")
	start := time.Now()
	sl.Spin()
	assert.GreaterOrEqual(t, time.Since(start), d)

	_, err = work.NewKind("nap", d)
	require.Error(t, err)
	for _, k := range work.Kinds() {
		assert.Contains(t, err.Error(), k)
	}
}
