package store

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/workload"
)

// TestRegistry: every row is complete and names are unique; lookups and
// refusals derive from the rows.
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range Designs() {
		assert.NotEmpty(t, d.Name)
		assert.NotEmpty(t, d.Doc, d.Name)
		assert.NotNil(t, d.new, d.Name)
		assert.False(t, seen[d.Name], "duplicate %s", d.Name)
		seen[d.Name] = true
		got, ok := LookupDesign(d.Name)
		assert.True(t, ok)
		assert.Equal(t, d.Name, got.Name)
		assert.Equal(t, d.GroupCommit, d.GroupCommit && d.Durable, "%s: group commit needs durability", d.Name)
	}
	assert.Equal(t, len(Designs()), len(DesignNames()))
	_, ok := LookupDesign("Mutex")
	assert.False(t, ok, "names are exact")
	_, err := New[int, int]("nope", &overlapDetector{}, Config{})
	assert.ErrorContains(t, err, `unknown design "nope"`)
	assert.ErrorContains(t, Supports[int, int]("nope", &overlapDetector{}), "unknown design")
}

// TestNeedsRefused: a design is refused, with ErrUnsupported naming it and
// the missing capability, exactly when the machine lacks what its row needs.
func TestNeedsRefused(t *testing.T) {
	for _, d := range Designs() {
		t.Run(d.Name, func(t *testing.T) {
			s, err := New[int, int](d.Name, &overlapDetector{}, Config{}) // no capabilities
			if d.Needs == 0 {
				require.NoError(t, err)
				require.NoError(t, s.Close())
				return
			}
			require.ErrorIs(t, err, ErrUnsupported)
			assert.ErrorContains(t, err, d.Name)
			assert.ErrorContains(t, err, d.Needs.String())
			assert.Nil(t, s)
		})
	}
}

// TestWorkloadCapabilities: what each workload can do decides which designs
// serve it; the atomic design serves the counter alone.
func TestWorkloadCapabilities(t *testing.T) {
	bank := newTestBank()
	assert.Equal(t, CapReads|CapShards, CapabilitiesOf[workload.BankCmd, workload.BankResult](bank))
	assert.Equal(t, CapReads|CapShards, CapabilitiesOf[workload.KVCmd, workload.KVResult](workload.NewKV()))
	assert.Equal(t, CapReads|CapShards|CapAtomic, CapabilitiesOf[workload.CounterCmd, int64](workload.NewCounter()))
	assert.ErrorIs(t, Supports[workload.BankCmd, workload.BankResult]("atomic", bank), ErrUnsupported)
	assert.NoError(t, Supports[workload.CounterCmd, int64]("atomic", workload.NewCounter()))
}

// TestWrap: Wrap serves a row already looked up as New serves its name, and
// refuses a Design that is not a registry row (its zero value) instead of
// panicking.
func TestWrap(t *testing.T) {
	for _, d := range Designs() {
		t.Run(d.Name, func(t *testing.T) {
			s, err := Wrap[workload.CounterCmd, int64](d, workload.NewCounter(), Config{})
			if d.Supports(CapabilitiesOf[workload.CounterCmd, int64](workload.NewCounter())) != nil {
				require.ErrorIs(t, err, ErrUnsupported, "a design that needs what the counter lacks (db-rowlock: a database)")
				return
			}
			require.NoError(t, err)
			defer s.Close()
			v, err := s.Do(t.Context(), workload.CounterCmd{Op: workload.CounterIncrement, Delta: 3})
			require.NoError(t, err)
			assert.Equal(t, int64(3), v)
			assert.Equal(t, Supports[workload.BankCmd, workload.BankResult](d.Name, newTestBank()), d.Supports(CapabilitiesOf[workload.BankCmd, workload.BankResult](newTestBank())))
		})
	}
	_, err := Wrap[int, int](Design{Name: "made-up"}, &overlapDetector{}, Config{})
	assert.ErrorContains(t, err, `design "made-up" is not a row of the registry`)
}

func TestConfigRefusesNegatives(t *testing.T) {
	for _, cfg := range []Config{{QueueSize: -1}, {BatchLimit: -1}, {Shards: -1}} {
		_, err := New[int, int]("mutex", &overlapDetector{}, cfg)
		assert.Error(t, err, "%+v", cfg)
	}
	q := NewInputQ[int, int](&overlapDetector{})
	defer q.Close()
	assert.Equal(t, DefaultQueueSize, q.QueueCap())
}

// committing counts its Commits and the commands each one covered.
type committing struct {
	mu        sync.Mutex // protects the fields below (Apply and Commit may race under sharding, and with inputQ-batch's syncer)
	pending   int
	batches   []int
	unsynced  []int        // applied, not yet committed
	committed map[int]bool // every command a Commit covered
	failWith  error
	applied   atomic.Int64
}

func (c *committing) Apply(cmd int) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending++
	c.unsynced = append(c.unsynced, cmd)
	c.applied.Add(1)
	return cmd, nil
}

// isCommitted reports whether a Commit covered cmd.
func (c *committing) isCommitted(cmd int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.committed[cmd]
}

// Commit takes a while, as a sync does, so that commands queue behind it and
// a group-commit design has something to batch.
func (c *committing) Commit() error {
	time.Sleep(20 * time.Microsecond)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending > 0 {
		c.batches = append(c.batches, c.pending)
		c.pending = 0
	}
	if c.failWith == nil {
		if c.committed == nil {
			c.committed = map[int]bool{}
		}
		for _, cmd := range c.unsynced {
			c.committed[cmd] = true
		}
		c.unsynced = c.unsynced[:0]
	}
	return c.failWith
}

// TestCommit: every durable design commits before it answers — once per
// command for the others, once per batch for the group-commit designs — and
// a failed Commit reaches every caller it covered. Designs that are not
// durable refuse a committing machine.
func TestCommit(t *testing.T) {
	const callers, each = 16, 40
	for _, d := range Designs() {
		t.Run(d.Name, func(t *testing.T) {
			m := &committing{}
			s, err := New[int, int](d.Name, capableCommitting{m}, Config{})
			if !d.Durable {
				require.ErrorIs(t, err, ErrUnsupported)
				assert.ErrorContains(t, err, "durable")
				return
			}
			if d.Needs&(CapTx|CapOwned) != 0 {
				// Its machine commits inside each ApplyTx or ApplyOwned,
				// and the design never calls Commit
				// (TestRowLockRunsTransactionsAtOnce, TestRoutedOwner).
				require.ErrorIs(t, err, ErrUnsupported)
				return
			}
			require.NoError(t, err)
			var wg sync.WaitGroup
			for c := range callers {
				wg.Go(func() {
					for i := range each {
						r, err := s.Do(context.Background(), c*1000+i)
						if assert.NoError(t, err) {
							assert.Equal(t, c*1000+i, r)
							assert.True(t, m.isCommitted(c*1000+i), "answered before its commit")
						}
					}
				})
			}
			wg.Wait()
			require.NoError(t, s.Close())
			total := 0
			for _, n := range m.batches {
				total += n
			}
			assert.Equal(t, callers*each, total, "every command committed")
			assert.Zero(t, m.pending)
			if d.GroupCommit {
				assert.Less(t, len(m.batches), callers*each, "group commit covered several commands at least once")
			}

			m2 := &committing{failWith: errors.New("disk full")}
			s2, err := New[int, int](d.Name, capableCommitting{m2}, Config{})
			require.NoError(t, err)
			_, err = s2.Do(context.Background(), 1)
			assert.ErrorContains(t, err, "disk full", "a failed commit is not an answer")
			require.NoError(t, s2.Close())
		})
	}
}

// TestCommitCheckCanFail: the committed-before-answered check of TestCommit
// sees a command that was applied but not yet committed — what a design that
// answered before its commit would hand back.
func TestCommitCheckCanFail(t *testing.T) {
	m := &committing{}
	r, err := m.Apply(7)
	require.NoError(t, err)
	assert.False(t, m.isCommitted(r), "applied, not committed")
	require.NoError(t, m.Commit())
	assert.True(t, m.isCommitted(r))
}

// capableCommitting adds every capability to committing, so that every
// design's refusal is for durability alone.
type capableCommitting struct{ *committing }

func (c capableCommitting) ApplyAtomic(cmd int) (int, error) { return c.Apply(cmd) }

func (capableCommitting) ReadOnly(int) bool       { return false }
func (capableCommitting) SetShards(int)           {}
func (capableCommitting) ShardsOf(int) (int, int) { return 0, 0 }
