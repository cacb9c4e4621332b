package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/workload"
)

// The linearizability checks record real concurrent histories (each call's
// command, result and start/end times) and ask porcupine whether some order of
// the calls, each taking effect between its start and its end, explains every
// result with a sequential model written here independently of the workload
// package.

// result is the outcome of one call in a history.
type result[R any] struct {
	r   R
	err error
}

// recordHistory runs clients goroutines, each doing ops calls of s.Do with
// commands from gen, and returns the history.
func recordHistory[C, R any](t *testing.T, s Store[C, R], clients, ops int, gen func(rng *rand.Rand) C) []porcupine.Operation {
	t.Helper()
	// A monotonic clock: time.Since reads the monotonic reading, which never
	// steps back the way the wall clock of time.Now().UnixNano() can.
	start := time.Now()
	history := make([][]porcupine.Operation, clients)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 3))
			for range ops {
				cmd := gen(rng)
				call := time.Since(start).Nanoseconds()
				r, err := s.Do(context.Background(), cmd)
				ret := time.Since(start).Nanoseconds()
				history[c] = append(history[c], porcupine.Operation{
					ClientId: c, Input: cmd, Call: call, Output: result[R]{r, err}, Return: ret,
				})
			}
		})
	}
	wg.Wait()
	var all []porcupine.Operation
	for _, h := range history {
		all = append(all, h...)
	}
	return all
}

// checkLinearizable fails the test unless porcupine finds history linearizable
// within a generous time limit.
func checkLinearizable(t *testing.T, model porcupine.Model, history []porcupine.Operation) {
	t.Helper()
	res := porcupine.CheckOperationsTimeout(model, history, time.Minute)
	assert.Equal(t, porcupine.Ok, res, "history of %d operations is not linearizable", len(history))
}

// counterModel is the counter's specification: an int64 that increments add
// to (returning the new value) and gets read.
func counterModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return int64(0) },
		Step: func(state, input, output any) (bool, any) {
			v := state.(int64)
			cmd := input.(workload.CounterCmd)
			out := output.(result[int64])
			if out.err != nil {
				return false, v // the histories here contain no refusals
			}
			switch cmd.Op {
			case workload.CounterIncrement:
				return out.r == v+cmd.Delta, v + cmd.Delta
			case workload.CounterGet:
				return out.r == v, v
			}
			return false, v
		},
		DescribeOperation: func(input, output any) string {
			cmd, out := input.(workload.CounterCmd), output.(result[int64])
			if cmd.Op == workload.CounterGet {
				return fmt.Sprintf("get() -> %d, %v", out.r, out.err)
			}
			return fmt.Sprintf("inc(%d) -> %d, %v", cmd.Delta, out.r, out.err)
		},
	}
}

func counterOps(rng *rand.Rand) workload.CounterCmd {
	if rng.IntN(3) == 0 {
		return workload.CounterCmd{Op: workload.CounterGet}
	}
	return workload.CounterCmd{Op: workload.CounterIncrement, Delta: int64(1 + rng.IntN(3))}
}

// linBankAccounts keeps the bank small, so that calls contend for the same
// accounts and the checker's search stays fast.
const linBankAccounts = 4

// bankState is the bank model's state; a comparable value, as porcupine
// requires models to be pure.
type bankState struct {
	balance [linBankAccounts + 1]int64 // [0] unused: accounts are 1..N
	seq     uint64
}

// bankModel is the bank's specification for transfers and balance reads:
// a transfer larger than the sender's balance is refused and changes nothing;
// otherwise it moves the money, takes the next sequence number and reports
// both new balances.
func bankModel(initial int64) porcupine.Model {
	return porcupine.Model{
		Init: func() any {
			var s bankState
			for id := 1; id <= linBankAccounts; id++ {
				s.balance[id] = initial
			}
			return s
		},
		Step: func(state, input, output any) (bool, any) {
			s := state.(bankState)
			cmd := input.(workload.BankCmd)
			out := output.(result[workload.BankResult])
			switch cmd.Op {
			case workload.BankBalance:
				return out.err == nil && out.r.Balance == s.balance[cmd.From], s
			case workload.BankTransfer:
				if s.balance[cmd.From] < cmd.Amount {
					return errors.Is(out.err, workload.ErrInsufficientFunds), s
				}
				s.balance[cmd.From] -= cmd.Amount
				s.balance[cmd.To] += cmd.Amount
				s.seq++
				ok := out.err == nil && out.r.Seq == s.seq &&
					out.r.FromBalance == s.balance[cmd.From] && out.r.ToBalance == s.balance[cmd.To]
				return ok, s
			}
			return false, s
		},
		DescribeOperation: func(input, output any) string {
			cmd, out := input.(workload.BankCmd), output.(result[workload.BankResult])
			if cmd.Op == workload.BankBalance {
				return fmt.Sprintf("balance(%d) -> %d, %v", cmd.From, out.r.Balance, out.err)
			}
			return fmt.Sprintf("transfer(%d->%d, %d) -> seq %d, %d, %d, %v",
				cmd.From, cmd.To, cmd.Amount, out.r.Seq, out.r.FromBalance, out.r.ToBalance, out.err)
		},
	}
}

func bankOps(rng *rand.Rand) workload.BankCmd {
	from := uint32(1 + rng.IntN(linBankAccounts))
	if rng.IntN(3) == 0 {
		return workload.BankCmd{Op: workload.BankBalance, From: from}
	}
	to := uint32(1 + (int(from)+rng.IntN(linBankAccounts-1))%linBankAccounts)
	return workload.BankCmd{Op: workload.BankTransfer, From: from, To: to, Amount: int64(1 + rng.IntN(80))}
}

func TestLinearizableCounter(t *testing.T) {
	for _, d := range designsFor[workload.CounterCmd, int64](workload.NewCounter()) {
		t.Run(d.name, func(t *testing.T) {
			s := d.new(workload.NewCounter())
			defer s.Close()
			checkLinearizable(t, counterModel(), recordHistory(t, s, 8, 250, counterOps))
		})
	}
}

func TestLinearizableBank(t *testing.T) {
	const initial = 100
	for _, d := range designsFor[workload.BankCmd, workload.BankResult](newTestBank()) {
		t.Run(d.name, func(t *testing.T) {
			bank, err := workload.NewBank(workload.BankConfig{Accounts: linBankAccounts, InitialBalance: initial})
			require.NoError(t, err)
			s := d.new(bank)
			defer s.Close()
			checkLinearizable(t, bankModel(initial), recordHistory(t, s, 8, 150, bankOps))
		})
	}
}

// TestLinearizabilityCheckCanFail shows that the models and the checker reject
// histories no correct design could produce, so the Ok above means something.
func TestLinearizabilityCheckCanFail(t *testing.T) {
	inc := func(d int64) workload.CounterCmd { return workload.CounterCmd{Op: workload.CounterIncrement, Delta: d} }
	get := workload.CounterCmd{Op: workload.CounterGet}
	op := func(client int, in any, call, ret int64, out any) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
	}
	counter := func(v int64) result[int64] { return result[int64]{r: v} }
	transfer := func(from, to uint32, amount int64) workload.BankCmd {
		return workload.BankCmd{Op: workload.BankTransfer, From: from, To: to, Amount: amount}
	}
	balance := func(id uint32) workload.BankCmd { return workload.BankCmd{Op: workload.BankBalance, From: id} }
	bankOut := func(r workload.BankResult) result[workload.BankResult] { return result[workload.BankResult]{r: r} }

	tests := []struct {
		name    string
		model   porcupine.Model
		history []porcupine.Operation
		want    porcupine.CheckResult
	}{
		{"counter: a read after an increment sees it", counterModel(), []porcupine.Operation{
			op(0, inc(1), 0, 10, counter(1)),
			op(1, get, 20, 30, counter(1)),
		}, porcupine.Ok},
		{"counter: stale read", counterModel(), []porcupine.Operation{
			op(0, inc(1), 0, 10, counter(1)),
			op(1, get, 20, 30, counter(0)),
		}, porcupine.Illegal},
		{"counter: overlapping reads may see either", counterModel(), []porcupine.Operation{
			op(0, inc(1), 0, 100, counter(1)),
			op(1, get, 10, 20, counter(0)),
			op(2, get, 30, 40, counter(1)),
		}, porcupine.Ok},
		{"counter: a read cannot go back", counterModel(), []porcupine.Operation{
			op(0, inc(1), 0, 100, counter(1)),
			op(1, get, 10, 20, counter(1)),
			op(1, get, 30, 40, counter(0)),
		}, porcupine.Illegal},
		{"counter: lost update", counterModel(), []porcupine.Operation{
			op(0, inc(1), 0, 100, counter(1)),
			op(1, inc(1), 0, 100, counter(1)),
		}, porcupine.Illegal},
		{"bank: a transfer is seen by a later read", bankModel(100), []porcupine.Operation{
			op(0, transfer(1, 2, 30), 0, 10, bankOut(workload.BankResult{Seq: 1, FromBalance: 70, ToBalance: 130})),
			op(1, balance(1), 20, 30, bankOut(workload.BankResult{Balance: 70})),
		}, porcupine.Ok},
		{"bank: stale balance", bankModel(100), []porcupine.Operation{
			op(0, transfer(1, 2, 30), 0, 10, bankOut(workload.BankResult{Seq: 1, FromBalance: 70, ToBalance: 130})),
			op(1, balance(1), 20, 30, bankOut(workload.BankResult{Balance: 100})),
		}, porcupine.Illegal},
		{"bank: two transfers with one seq", bankModel(100), []porcupine.Operation{
			op(0, transfer(1, 2, 10), 0, 100, bankOut(workload.BankResult{Seq: 1, FromBalance: 90, ToBalance: 110})),
			op(1, transfer(3, 4, 10), 0, 100, bankOut(workload.BankResult{Seq: 1, FromBalance: 90, ToBalance: 110})),
		}, porcupine.Illegal},
		{"bank: overdraft accepted", bankModel(100), []porcupine.Operation{
			op(0, transfer(1, 2, 60), 0, 10, bankOut(workload.BankResult{Seq: 1, FromBalance: 40, ToBalance: 160})),
			op(0, transfer(1, 3, 60), 20, 30, bankOut(workload.BankResult{Seq: 2, FromBalance: -20, ToBalance: 160})),
		}, porcupine.Illegal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, porcupine.CheckOperationsTimeout(tt.model, tt.history, time.Minute))
		})
	}

	// A design that is free of data races yet wrong: it splits each
	// increment into a read and a write, each under the lock, so concurrent
	// increments can lose updates. A barrier forces the bad interleaving.
	t.Run("counter: read-then-write design", func(t *testing.T) {
		s := &splitIncrement{inner: NewMutex[workload.CounterCmd, int64](workload.NewCounter())}
		s.barrier.Add(2)
		defer s.Close()
		var history []porcupine.Operation
		var mu sync.Mutex // protects history
		var wg sync.WaitGroup
		start := time.Now()
		for c := range 2 {
			wg.Go(func() {
				call := time.Since(start).Nanoseconds()
				v, err := s.Do(context.Background(), inc(1))
				ret := time.Since(start).Nanoseconds()
				mu.Lock()
				history = append(history, op(c, inc(1), call, ret, result[int64]{v, err}))
				mu.Unlock()
			})
		}
		wg.Wait()
		assert.Equal(t, porcupine.Illegal, porcupine.CheckOperationsTimeout(counterModel(), history, time.Minute), "%v", history)
	})
}

// splitIncrement is a broken design for the counter: Increment reads the value
// and then adds to what it read, in two separate critical sections.
type splitIncrement struct {
	inner   *Mutex[workload.CounterCmd, int64]
	barrier sync.WaitGroup // both increments read before either writes
}

func (s *splitIncrement) Do(ctx context.Context, cmd workload.CounterCmd) (int64, error) {
	v, err := s.inner.Do(ctx, workload.CounterCmd{Op: workload.CounterGet})
	if err != nil || cmd.Op != workload.CounterIncrement {
		return v, err
	}
	s.barrier.Done()
	s.barrier.Wait()
	// Write back v + delta: reset, then add, as a careless read-modify-write.
	if _, err := s.inner.Do(ctx, workload.CounterCmd{Op: workload.CounterReset}); err != nil {
		return 0, err
	}
	return s.inner.Do(ctx, workload.CounterCmd{Op: workload.CounterIncrement, Delta: v + cmd.Delta})
}

func (s *splitIncrement) Close() error { return s.inner.Close() }
