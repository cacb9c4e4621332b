package store

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// txMachine stands for a machine over a database: ApplyTx runs a command as a
// transaction of its own and says whether another was inside at the same
// time; Commit counts the commits a design asked for.
type txMachine struct {
	inside  atomic.Int32
	met     chan struct{} // closed by the second caller inside at once
	once    sync.Once
	commits atomic.Int32
}

func newTxMachine() *txMachine { return &txMachine{met: make(chan struct{})} }

func (m *txMachine) Apply(cmd int) (int, error) { return m.ApplyTx(cmd) }

// ApplyTx waits, inside, for another caller to be inside too: true if one
// came. A design that serialises calls never lets it.
func (m *txMachine) ApplyTx(int) (int, error) {
	defer m.inside.Add(-1)
	if m.inside.Add(1) > 1 {
		m.once.Do(func() { close(m.met) })
		return 1, nil
	}
	select {
	case <-m.met:
		return 1, nil
	case <-time.After(300 * time.Millisecond):
		return 0, nil // alone: the design serialised us
	}
}

func (m *txMachine) Commit() error { m.commits.Add(1); return nil }

// TestRowLockRunsTransactionsAtOnce: db-rowlock calls ApplyTx from every
// caller at once, and never Commit (each transaction commits itself); the
// control is the mutex design over the same machine, under which two
// callers are never inside together and every command is committed.
func TestRowLockRunsTransactionsAtOnce(t *testing.T) {
	for _, tt := range []struct {
		design  string
		met     bool
		commits int32
	}{{"db-rowlock", true, 0}, {"mutex", false, 2}} {
		t.Run(tt.design, func(t *testing.T) {
			m := newTxMachine()
			s, err := New[int, int](tt.design, m, Config{})
			require.NoError(t, err)
			var wg sync.WaitGroup
			var together atomic.Int32
			for range 2 {
				wg.Go(func() {
					r, err := s.Do(t.Context(), 0)
					assert.NoError(t, err)
					together.Add(int32(r))
				})
			}
			wg.Wait()
			require.NoError(t, s.Close())
			assert.Equal(t, tt.met, together.Load() > 0, "two transactions inside at once")
			assert.Equal(t, tt.commits, m.commits.Load(), "commits asked for")
		})
	}
}

// TestRowLockClose: Close waits for the transactions in flight, and Do
// after it answers ErrClosed without calling the machine.
func TestRowLockClose(t *testing.T) {
	m := newTxMachine()
	s, err := New[int, int]("db-rowlock", m, Config{})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	_, err = s.Do(t.Context(), 0)
	assert.ErrorIs(t, err, ErrClosed)
	assert.Zero(t, m.inside.Load())
}

// TestCapTx: a machine with ApplyTx has CapTx, and only db-rowlock needs it.
func TestCapTx(t *testing.T) {
	assert.Equal(t, CapCommit|CapTx, CapabilitiesOf[int, int](newTxMachine()))
	for _, d := range Designs() {
		assert.Equal(t, d.Name == "db-rowlock", d.Needs&CapTx != 0, d.Name)
	}
}
