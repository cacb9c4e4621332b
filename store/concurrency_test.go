package store

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/workload"
)

// concurrentCallers is how many goroutines hammer one store: well above
// GOMAXPROCS, so that callers are preempted inside Do.
const concurrentCallers = 64

// TestConcurrentBank: random transfers, balance reads and summaries from many
// goroutines against the real bank. Money is conserved at every moment a
// summary observes, no balance is ever negative, and every accepted transfer
// got its own sequence number.
func TestConcurrentBank(t *testing.T) {
	const (
		accounts = 16
		initial  = 1000
		each     = 150
	)
	for _, d := range designsFor[workload.BankCmd, workload.BankResult](newTestBank()) {
		t.Run(d.name, func(t *testing.T) {
			bank, err := workload.NewBank(workload.BankConfig{Accounts: accounts, InitialBalance: initial})
			require.NoError(t, err)
			s := d.new(bank)
			defer s.Close()
			ctx := context.Background()

			seqs := make([][]uint64, concurrentCallers) // seqs[c]: caller c's accepted transfers
			refused := make([]int, concurrentCallers)   // refused[c]: caller c's transfers refused for insufficient funds
			var wg sync.WaitGroup
			for c := range concurrentCallers {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(c), 1))
					for range each {
						switch p := rng.IntN(10); {
						case p < 6:
							from := uint32(1 + rng.IntN(accounts))
							to := uint32(1 + (int(from)+rng.IntN(accounts-1))%accounts) // any other account
							r, err := s.Do(ctx, workload.BankCmd{Op: workload.BankTransfer, From: from, To: to, Amount: int64(1 + rng.IntN(700))})
							if errors.Is(err, workload.ErrInsufficientFunds) {
								refused[c]++
								continue
							}
							if !assert.NoError(t, err) {
								return
							}
							assert.GreaterOrEqual(t, r.FromBalance, int64(0))
							assert.GreaterOrEqual(t, r.ToBalance, int64(0))
							seqs[c] = append(seqs[c], r.Seq)
						case p < 9:
							r, err := s.Do(ctx, workload.BankCmd{Op: workload.BankBalance, From: uint32(1 + rng.IntN(accounts))})
							if assert.NoError(t, err) {
								assert.GreaterOrEqual(t, r.Balance, int64(0), "a negative balance was observed")
							}
						default:
							r, err := s.Do(ctx, workload.BankCmd{Op: workload.BankSummary})
							if assert.NoError(t, err) {
								assert.Equal(t, int64(accounts*initial), r.Total, "money was created or destroyed")
								assert.GreaterOrEqual(t, r.MinBalance, int64(0))
							}
						}
					}
				})
			}
			wg.Wait()

			var all []uint64
			for _, s := range seqs {
				all = append(all, s...)
			}
			r, err := s.Do(ctx, workload.BankCmd{Op: workload.BankSummary})
			require.NoError(t, err)
			assert.Equal(t, int64(accounts*initial), r.Total)
			assert.GreaterOrEqual(t, r.MinBalance, int64(0))
			assert.Equal(t, uint64(len(all)), r.Seq, "every acknowledged transfer, and only those, was applied")
			slices.Sort(all)
			for i, seq := range all {
				if !assert.Equal(t, uint64(i+1), seq, "sequence numbers must be 1..n, each once") {
					break
				}
			}
			nRefused := 0
			for _, n := range refused {
				nRefused += n
			}
			t.Logf("%d transfers accepted, %d refused for insufficient funds", len(all), nRefused)
			assert.Positive(t, nRefused, "the test should exercise refused transfers too")
		})
	}
}

// TestConcurrentCounter: random increments and reads from many goroutines
// against the real counter. The final value is the sum of the acknowledged
// increments; each caller sees the counter only grow, by at least its own
// increments; no two increments return the same value.
func TestConcurrentCounter(t *testing.T) {
	const each = 200
	for _, d := range designsFor[workload.CounterCmd, int64](workload.NewCounter()) {
		t.Run(d.name, func(t *testing.T) {
			s := d.new(workload.NewCounter())
			defer s.Close()
			ctx := context.Background()

			sums := make([]int64, concurrentCallers)
			seen := make([][]int64, concurrentCallers) // values returned by increments with delta > 0
			var wg sync.WaitGroup
			for c := range concurrentCallers {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(c), 2))
					var last int64
					for range each {
						if rng.IntN(4) == 0 {
							v, err := s.Do(ctx, workload.CounterCmd{Op: workload.CounterGet})
							if !assert.NoError(t, err) {
								return
							}
							assert.GreaterOrEqual(t, v, last, "the counter went backwards")
							last = v
							continue
						}
						delta := int64(rng.IntN(10))
						v, err := s.Do(ctx, workload.CounterCmd{Op: workload.CounterIncrement, Delta: delta})
						if !assert.NoError(t, err) {
							return
						}
						assert.GreaterOrEqual(t, v, last+delta, "an increment returned less than the caller's own increments")
						last = v
						sums[c] += delta
						if delta > 0 {
							seen[c] = append(seen[c], v)
						}
					}
				})
			}
			wg.Wait()

			var sum int64
			var all []int64
			for c := range concurrentCallers {
				sum += sums[c]
				all = append(all, seen[c]...)
			}
			v, err := s.Do(ctx, workload.CounterCmd{Op: workload.CounterGet})
			require.NoError(t, err)
			assert.Equal(t, sum, v, "final value is the sum of the acknowledged increments")
			slices.Sort(all)
			assert.Equal(t, len(all), len(slices.Compact(all)), "two increments returned the same value")
		})
	}
}

// TestCloseUnderLoad: Close while many callers are mid-Do — transfers that
// cross shards and summaries that touch every shard among them — returns,
// every caller gets an answer or ErrClosed (none hangs), and the money is
// all there: every answered transfer was applied whole, none half.
func TestCloseUnderLoad(t *testing.T) {
	const accounts, initial = 8, 1000
	for _, d := range designsFor[workload.BankCmd, workload.BankResult](newTestBank()) {
		t.Run(d.name, func(t *testing.T) {
			bank, err := workload.NewBank(workload.BankConfig{Accounts: accounts, InitialBalance: initial})
			require.NoError(t, err)
			s := d.new(bank)
			var wg sync.WaitGroup
			var answered, closed atomic.Int64
			for c := range concurrentCallers {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(c), 2))
					for {
						cmd := workload.BankCmd{Op: workload.BankSummary}
						if rng.IntN(8) > 0 {
							from := uint32(1 + rng.IntN(accounts))
							cmd = workload.BankCmd{Op: workload.BankTransfer, From: from, To: from%accounts + 1, Amount: 1}
						}
						_, err := s.Do(context.Background(), cmd)
						switch {
						case errors.Is(err, ErrClosed):
							closed.Add(1)
							return
						case errors.Is(err, workload.ErrInsufficientFunds), err == nil:
							answered.Add(1)
						default:
							t.Error(err)
							return
						}
					}
				})
			}
			for answered.Load() < 500 {
				runtime.Gosched()
			}
			require.NoError(t, s.Close())
			wg.Wait()
			assert.Equal(t, int64(concurrentCallers), closed.Load(), "every caller was refused once closed")
			// Closed: the machine is ours again.
			sum, err := bank.Apply(workload.BankCmd{Op: workload.BankSummary})
			require.NoError(t, err)
			assert.Equal(t, int64(accounts*initial), sum.Total, "money conserved")
		})
	}
}
