package dbbank

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workload"
)

// TestNoStaleReadAfterAck: with the cache on, under every design that
// serves the bank, no read made after a transfer was acknowledged answers a
// balance or a history older than the transfer — while readers keep filling
// the cache with what they read, racing the transfers.
func TestNoStaleReadAfterAck(t *testing.T) {
	for _, d := range designs(t) {
		t.Run(d.Name, func(t *testing.T) {
			assert.Zero(t, staleReads(t, d, false), "reads older than an acknowledged transfer")
		})
	}
}

// TestStaleReadControl: with invalidation broken, the same check finds stale
// reads: it can fail.
func TestStaleReadControl(t *testing.T) {
	d, ok := store.LookupDesign("mutex")
	require.True(t, ok)
	assert.Positive(t, staleReads(t, d, true), "the check sees the cache answer an old balance")
}

// staleReads drives writers that each move 1 from an account of their own
// into a sink account, then read the sink's balance and newest transfer:
// the sink only grows, so a balance below the one the transfer answered, or
// a newest transfer older than it, is stale. Two readers read the sink
// without pause meanwhile.
func staleReads(t *testing.T, d store.Design, breakInvalidation bool) int {
	b := open(t, true)
	b.breakInvalidation = breakInvalidation
	s, err := store.Wrap[workload.BankCmd, workload.BankResult](d, b, store.Config{})
	require.NoError(t, err)
	defer s.Close()
	const sink, writers, transfers = 1, 3, 15
	ctx := t.Context()
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := s.Do(ctx, workload.BankCmd{Op: workload.BankBalance, From: sink})
				assert.NoError(t, err)
				_, err = s.Do(ctx, workload.BankCmd{Op: workload.BankHistory, From: sink, Limit: 1})
				assert.NoError(t, err)
			}
		})
	}
	var stale atomic.Int32
	var ws sync.WaitGroup
	for w := range uint32(writers) {
		ws.Go(func() {
			for range transfers {
				r, err := s.Do(ctx, workload.BankCmd{Op: workload.BankTransfer, From: 2 + w, To: sink, Amount: 1})
				if !assert.NoError(t, err) {
					return
				}
				bal, err := s.Do(ctx, workload.BankCmd{Op: workload.BankBalance, From: sink})
				require.NoError(t, err)
				if bal.Balance < r.ToBalance {
					stale.Add(1)
				}
				h, err := s.Do(ctx, workload.BankCmd{Op: workload.BankHistory, From: sink, Limit: 1})
				require.NoError(t, err)
				if len(h.History) == 0 || h.History[0].Seq < r.Seq {
					stale.Add(1)
				}
			}
		})
	}
	ws.Wait()
	close(stop)
	readers.Wait()
	return int(stale.Load())
}
