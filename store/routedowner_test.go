package store

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ownedMachine stands for a machine that writes owned keys through to a
// database: it counts the calls of each way in, the commits, and whether two
// calls were ever inside at once.
type ownedMachine struct {
	inside, overlap         atomic.Int32
	applies, owned, commits atomic.Int32
}

func (m *ownedMachine) enter() func() {
	if m.inside.Add(1) > 1 {
		m.overlap.Add(1)
	}
	return func() { m.inside.Add(-1) }
}

func (m *ownedMachine) Apply(cmd int) (int, error) {
	defer m.enter()()
	m.applies.Add(1)
	return cmd, nil
}

func (m *ownedMachine) ApplyOwned(cmd int) (int, error) {
	defer m.enter()()
	m.owned.Add(1)
	return cmd, nil
}

func (m *ownedMachine) Commit() error { m.commits.Add(1); return nil }

// TestRoutedOwner: routed-owner hands every command to ApplyOwned on one
// goroutine at a time, and never calls Apply or Commit (each write-through
// commits itself); the control is the mutex design over the same machine,
// which calls Apply and Commit, and which the same counts tell apart.
func TestRoutedOwner(t *testing.T) {
	const n = 200
	for _, tt := range []struct {
		design                  string
		applies, owned, commits int32
	}{{"routed-owner", 0, n, 0}, {"mutex", n, 0, n}} {
		t.Run(tt.design, func(t *testing.T) {
			m := &ownedMachine{}
			s, err := New[int, int](tt.design, m, Config{})
			require.NoError(t, err)
			var wg sync.WaitGroup
			for c := range 8 {
				wg.Go(func() {
					for i := range n / 8 {
						r, err := s.Do(t.Context(), c*100+i)
						assert.NoError(t, err)
						assert.Equal(t, c*100+i, r)
					}
				})
			}
			wg.Wait()
			require.NoError(t, s.Close())
			assert.Zero(t, m.overlap.Load(), "two calls inside at once")
			assert.Equal(t, tt.applies, m.applies.Load(), "Apply calls")
			assert.Equal(t, tt.owned, m.owned.Load(), "ApplyOwned calls")
			assert.Equal(t, tt.commits, m.commits.Load(), "commits")
		})
	}
}

// TestCapOwned: a machine with ApplyOwned has CapOwned, only routed-owner
// needs it, and a machine without it is refused by routed-owner.
func TestCapOwned(t *testing.T) {
	assert.Equal(t, CapCommit|CapOwned, CapabilitiesOf[int, int](&ownedMachine{}))
	for _, d := range Designs() {
		assert.Equal(t, d.Name == "routed-owner", d.Needs&CapOwned != 0, d.Name)
	}
	_, err := New[int, int]("routed-owner", newTxMachine(), Config{})
	assert.ErrorIs(t, err, ErrUnsupported)
}
