package workload_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/workload"
)

func newBank(t *testing.T, cfg workload.BankConfig) *workload.Bank {
	t.Helper()
	b, err := workload.NewBank(cfg)
	require.NoError(t, err)
	return b
}

func apply(t *testing.T, b *workload.Bank, cmd workload.BankCmd) workload.BankResult {
	t.Helper()
	r, err := b.Apply(cmd)
	require.NoError(t, err, "%+v", cmd)
	return r
}

func transfer(t *testing.T, b *workload.Bank, from, to uint32, amount int64) workload.BankResult {
	t.Helper()
	return apply(t, b, workload.BankCmd{Op: workload.BankTransfer, From: from, To: to, Amount: amount})
}

func summary(t *testing.T, b *workload.Bank) workload.BankResult {
	t.Helper()
	return apply(t, b, workload.BankCmd{Op: workload.BankSummary})
}

func balances(t *testing.T, b *workload.Bank) []int64 {
	t.Helper()
	n := summary(t, b).Accounts
	out := make([]int64, n)
	for id := uint32(1); id <= n; id++ {
		out[id-1] = apply(t, b, workload.BankCmd{Op: workload.BankBalance, From: id}).Balance
	}
	return out
}

func history(t *testing.T, b *workload.Bank, id, limit uint32) []workload.Transfer {
	t.Helper()
	return apply(t, b, workload.BankCmd{Op: workload.BankHistory, From: id, Limit: limit}).History
}

// bankSnapshot is everything the ops can observe of a bank: the summary, every
// balance and every kept transfer. Comparing two proves a command changed
// nothing.
type bankSnapshot struct {
	summary  workload.BankResult
	balances []int64
	history  [][]workload.Transfer
}

func snapshotBank(t *testing.T, b *workload.Bank) bankSnapshot {
	t.Helper()
	s := bankSnapshot{summary: summary(t, b), balances: balances(t, b)}
	for id := uint32(1); id <= s.summary.Accounts; id++ {
		s.history = append(s.history, history(t, b, id, workload.MaxHistoryLimit))
	}
	return s
}

// smallBank has 4 accounts in scenario B: 1 and 3 hold 100, 2 and 4 hold 0;
// then 1 sends 10 to 2, so histories and the sequence are not empty.
func smallBank(t *testing.T) *workload.Bank {
	t.Helper()
	b := newBank(t, workload.BankConfig{Scenario: workload.ScenarioB, Accounts: 4, InitialBalance: 100})
	transfer(t, b, 1, 2, 10)
	require.Equal(t, []int64{90, 10, 100, 0}, balances(t, b))
	return b
}

func TestBankTransfer(t *testing.T) {
	tests := []struct {
		name     string
		from, to uint32
		amount   int64
		want     workload.BankResult // Seq, FromBalance, ToBalance
		wantBals []int64
		wantErr  error // a kind sentinel; nil for success
		wantIs   error
	}{
		{name: "ok", from: 1, to: 4, amount: 30,
			want: workload.BankResult{Seq: 2, FromBalance: 60, ToBalance: 30}, wantBals: []int64{60, 10, 100, 30}},
		{name: "whole balance", from: 3, to: 2, amount: 100,
			want: workload.BankResult{Seq: 2, FromBalance: 0, ToBalance: 110}, wantBals: []int64{90, 110, 0, 0}},
		{name: "back to the sender", from: 2, to: 1, amount: 10,
			want: workload.BankResult{Seq: 2, FromBalance: 0, ToBalance: 100}, wantBals: []int64{100, 0, 100, 0}},
		{name: "amount zero", from: 1, to: 2, amount: 0, wantErr: workload.ErrInvalid, wantIs: workload.ErrAmount},
		{name: "amount negative", from: 1, to: 2, amount: -5, wantErr: workload.ErrInvalid, wantIs: workload.ErrAmount},
		{name: "amount MinInt64", from: 1, to: 2, amount: math.MinInt64, wantErr: workload.ErrInvalid, wantIs: workload.ErrAmount},
		{name: "from == to", from: 1, to: 1, amount: 5, wantErr: workload.ErrInvalid, wantIs: workload.ErrSameAccount},
		{name: "from account 0", from: 0, to: 2, amount: 5, wantErr: workload.ErrNotFound, wantIs: workload.ErrNoAccount},
		{name: "to account 0", from: 1, to: 0, amount: 5, wantErr: workload.ErrNotFound, wantIs: workload.ErrNoAccount},
		{name: "from account N+1", from: 5, to: 2, amount: 5, wantErr: workload.ErrNotFound, wantIs: workload.ErrNoAccount},
		{name: "to account N+1", from: 1, to: 5, amount: 5, wantErr: workload.ErrNotFound, wantIs: workload.ErrNoAccount},
		{name: "to account MaxUint32", from: 1, to: math.MaxUint32, amount: 5, wantErr: workload.ErrNotFound, wantIs: workload.ErrNoAccount},
		{name: "overdraft by one", from: 2, to: 1, amount: 11, wantErr: workload.ErrInsufficientFunds, wantIs: workload.ErrInsufficientFunds},
		{name: "from an empty account", from: 4, to: 1, amount: 1, wantErr: workload.ErrInsufficientFunds, wantIs: workload.ErrInsufficientFunds},
		{name: "overdraft of MaxInt64", from: 1, to: 2, amount: math.MaxInt64, wantErr: workload.ErrInsufficientFunds, wantIs: workload.ErrInsufficientFunds},
		// Several things wrong: the first in precedence order wins (docs/decisions.md).
		{name: "amount zero from an unknown account is invalid", from: 0, to: 9, amount: 0, wantErr: workload.ErrInvalid, wantIs: workload.ErrAmount},
		{name: "from == to on an unknown account is invalid", from: 9, to: 9, amount: 5, wantErr: workload.ErrInvalid, wantIs: workload.ErrSameAccount},
		{name: "overdraft to an unknown account is not found", from: 4, to: 9, amount: 5, wantErr: workload.ErrNotFound, wantIs: workload.ErrNoAccount},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := smallBank(t)
			before := snapshotBank(t, b)

			r, err := b.Apply(workload.BankCmd{Op: workload.BankTransfer, From: tt.from, To: tt.to, Amount: tt.amount})
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				assert.ErrorIs(t, err, tt.wantIs)
				assert.Equal(t, before, snapshotBank(t, b), "a refused transfer must change nothing")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, r)
			after := snapshotBank(t, b)
			assert.Equal(t, tt.wantBals, after.balances)
			assert.Equal(t, before.summary.Total, after.summary.Total, "transfers conserve money")
			assert.Equal(t, uint64(2), after.summary.Seq)
			rec := workload.Transfer{Seq: 2, From: tt.from, To: tt.to, Amount: tt.amount}
			assert.Equal(t, rec, after.history[tt.from-1][0], "the sender records the transfer, newest first")
			assert.Equal(t, rec, after.history[tt.to-1][0], "the receiver records the transfer, newest first")
		})
	}
}

func TestBankGetBalance(t *testing.T) {
	tests := []struct {
		name    string
		id      uint32
		want    int64
		wantErr error
	}{
		{name: "first", id: 1, want: 90},
		{name: "last", id: 4, want: 0},
		{name: "account 0", id: 0, wantErr: workload.ErrNotFound},
		{name: "account N+1", id: 5, wantErr: workload.ErrNotFound},
		{name: "account MaxUint32", id: math.MaxUint32, wantErr: workload.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := smallBank(t)
			before := snapshotBank(t, b)
			r, err := b.Apply(workload.BankCmd{Op: workload.BankBalance, From: tt.id})
			assert.Equal(t, before, snapshotBank(t, b), "GetBalance never changes the bank")
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				assert.ErrorIs(t, err, workload.ErrNoAccount)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, r.Balance)
		})
	}
}

func TestBankGetHistory(t *testing.T) {
	// 30 transfers between 1 and 2 (seqs 1..30), then one 3 -> 4 (seq 31).
	newHistBank := func(t *testing.T) *workload.Bank {
		b := newBank(t, workload.BankConfig{Accounts: 4, InitialBalance: 1000})
		for i := 0; i < 30; i++ {
			from, to := uint32(1+i%2), uint32(2-i%2)
			transfer(t, b, from, to, int64(i+1))
		}
		transfer(t, b, 3, 4, 7)
		return b
	}
	seqs := func(ts []workload.Transfer) []uint64 {
		out := []uint64{}
		for _, tr := range ts {
			out = append(out, tr.Seq)
		}
		return out
	}
	span := func(hi, lo uint64) []uint64 {
		out := []uint64{}
		for s := hi; s >= lo; s-- {
			out = append(out, s)
		}
		return out
	}
	tests := []struct {
		name     string
		id       uint32
		limit    uint32
		wantSeqs []uint64
		wantErr  error
	}{
		{name: "limit 0 means 20", id: 1, limit: 0, wantSeqs: span(30, 11)},
		{name: "limit 1 is the newest", id: 2, limit: 1, wantSeqs: []uint64{30}},
		{name: "limit 5", id: 1, limit: 5, wantSeqs: span(30, 26)},
		{name: "limit above what exists", id: 1, limit: 100, wantSeqs: span(30, 1)},
		{name: "limit 1000 is the largest allowed", id: 1, limit: workload.MaxHistoryLimit, wantSeqs: span(30, 1)},
		{name: "both sides record a transfer", id: 4, limit: 0, wantSeqs: []uint64{31}},
		{name: "global seq", id: 3, limit: 0, wantSeqs: []uint64{31}},
		{name: "limit 1001", id: 1, limit: workload.MaxHistoryLimit + 1, wantErr: workload.ErrInvalid},
		{name: "limit MaxUint32", id: 1, limit: math.MaxUint32, wantErr: workload.ErrInvalid},
		{name: "account 0", id: 0, limit: 5, wantErr: workload.ErrNotFound},
		{name: "account N+1", id: 5, limit: 5, wantErr: workload.ErrNotFound},
		{name: "bad limit on an unknown account is invalid", id: 0, limit: workload.MaxHistoryLimit + 1, wantErr: workload.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newHistBank(t)
			before := snapshotBank(t, b)
			r, err := b.Apply(workload.BankCmd{Op: workload.BankHistory, From: tt.id, Limit: tt.limit})
			assert.Equal(t, before, snapshotBank(t, b), "GetHistory never changes the bank")
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, r.History)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantSeqs, seqs(r.History))
		})
	}

	t.Run("entries are whole transfers", func(t *testing.T) {
		b := newHistBank(t)
		got := history(t, b, 1, 2)
		assert.Equal(t, []workload.Transfer{
			{Seq: 30, From: 2, To: 1, Amount: 30},
			{Seq: 29, From: 1, To: 2, Amount: 29},
		}, got)
	})

	t.Run("the result is a copy", func(t *testing.T) {
		b := newHistBank(t)
		got := history(t, b, 1, 3)
		got[0].Amount = -1
		got[1].Seq = 0
		assert.Equal(t, seqs(history(t, b, 1, 3)), []uint64{30, 29, 28})
		assert.Equal(t, int64(30), history(t, b, 1, 1)[0].Amount)
	})
}

// TestBankHistoryRing checks the ring of kept transfers at and around the
// points where it fills and wraps, against a plain slice holding every
// transfer.
func TestBankHistoryRing(t *testing.T) {
	tests := []struct {
		name      string
		transfers int
	}{
		{"empty", 0},
		{"one", 1},
		{"one short of full", workload.HistoryKept - 1},
		{"exactly full", workload.HistoryKept},
		{"first overwrite", workload.HistoryKept + 1},
		{"half way round again", workload.HistoryKept + workload.HistoryKept/2},
		{"one short of twice round", 2*workload.HistoryKept - 1},
		{"twice round", 2 * workload.HistoryKept},
		{"twice round and one", 2*workload.HistoryKept + 1},
		{"many times round", 7*workload.HistoryKept + 37},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const accounts = 5
			b := newBank(t, workload.BankConfig{Accounts: accounts, InitialBalance: 1_000_000})
			// model[id] holds every transfer of id, oldest first.
			model := make([][]workload.Transfer, accounts+1)
			rng := rand.New(rand.NewPCG(1, uint64(tt.transfers)))
			// Account 1 takes part in each transfer, so its ring sees exactly
			// tt.transfers; the others see fewer, at irregular seqs.
			for i := 0; i < tt.transfers; i++ {
				other := uint32(2 + rng.IntN(accounts-1))
				from, to := uint32(1), other
				if rng.IntN(2) == 0 {
					from, to = to, from
				}
				amount := int64(1 + rng.IntN(100))
				r := transfer(t, b, from, to, amount)
				tr := workload.Transfer{Seq: r.Seq, From: from, To: to, Amount: amount}
				model[from] = append(model[from], tr)
				model[to] = append(model[to], tr)
			}
			require.Equal(t, uint64(tt.transfers), summary(t, b).Seq)

			for id := uint32(1); id <= accounts; id++ {
				for _, limit := range []uint32{0, 1, 2, 20, 99, 100, 101, workload.MaxHistoryLimit} {
					n := int(limit)
					if limit == 0 {
						n = workload.DefaultHistoryLimit
					}
					n = min(n, len(model[id]), workload.HistoryKept)
					want := make([]workload.Transfer, n)
					for k := range want {
						want[k] = model[id][len(model[id])-1-k]
					}
					assert.Equal(t, want, history(t, b, id, limit), "account %d limit %d", id, limit)
				}
			}
		})
	}
}

func TestBankReset(t *testing.T) {
	tests := []struct {
		name         string
		cfg          workload.BankConfig
		wantBalances []int64 // nil: check wantAccounts and wantEach instead
		wantAccounts uint32
		wantEach     int64
		wantErr      error
	}{
		{name: "defaults", cfg: workload.BankConfig{},
			wantAccounts: workload.DefaultAccounts, wantEach: workload.DefaultInitialBalance},
		{name: "scenario A", cfg: workload.BankConfig{Scenario: workload.ScenarioA, Accounts: 5, InitialBalance: 7},
			wantBalances: []int64{7, 7, 7, 7, 7}},
		{name: "scenario B funds odd accounts", cfg: workload.BankConfig{Scenario: workload.ScenarioB, Accounts: 5, InitialBalance: 7},
			wantBalances: []int64{7, 0, 7, 0, 7}},
		{name: "scenario C funds none", cfg: workload.BankConfig{Scenario: workload.ScenarioC, Accounts: 5, InitialBalance: 7},
			wantBalances: []int64{0, 0, 0, 0, 0}},
		{name: "scenario 0 means A", cfg: workload.BankConfig{Accounts: 3, InitialBalance: 2},
			wantBalances: []int64{2, 2, 2}},
		{name: "accounts 0 means default", cfg: workload.BankConfig{Scenario: workload.ScenarioA, InitialBalance: 3},
			wantAccounts: workload.DefaultAccounts, wantEach: 3},
		{name: "balance 0 means default", cfg: workload.BankConfig{Scenario: workload.ScenarioA, Accounts: 2},
			wantBalances: []int64{workload.DefaultInitialBalance, workload.DefaultInitialBalance}},
		{name: "one account", cfg: workload.BankConfig{Accounts: 1, InitialBalance: 1},
			wantBalances: []int64{1}},
		{name: "MaxAccounts", cfg: workload.BankConfig{Accounts: workload.MaxAccounts, InitialBalance: 1},
			wantAccounts: workload.MaxAccounts, wantEach: 1},
		{name: "largest total that fits", cfg: workload.BankConfig{Accounts: 2, InitialBalance: math.MaxInt64 / 2},
			wantBalances: []int64{math.MaxInt64 / 2, math.MaxInt64 / 2}},
		{name: "one account with MaxInt64", cfg: workload.BankConfig{Accounts: 1, InitialBalance: math.MaxInt64},
			wantBalances: []int64{math.MaxInt64}},

		{name: "scenario 4", cfg: workload.BankConfig{Scenario: workload.ScenarioC + 1, Accounts: 2, InitialBalance: 1},
			wantErr: workload.ErrScenario},
		{name: "scenario 255", cfg: workload.BankConfig{Scenario: 255, Accounts: 2, InitialBalance: 1},
			wantErr: workload.ErrScenario},
		{name: "MaxAccounts + 1", cfg: workload.BankConfig{Accounts: workload.MaxAccounts + 1, InitialBalance: 1},
			wantErr: workload.ErrAccounts},
		{name: "accounts MaxUint32", cfg: workload.BankConfig{Accounts: math.MaxUint32, InitialBalance: 1},
			wantErr: workload.ErrAccounts},
		{name: "negative initial balance", cfg: workload.BankConfig{Accounts: 2, InitialBalance: -1},
			wantErr: workload.ErrInitialBalance},
		{name: "total overflows int64", cfg: workload.BankConfig{Accounts: 2, InitialBalance: math.MaxInt64/2 + 1},
			wantErr: workload.ErrInitialBalance},
		{name: "default accounts times a huge balance overflows", cfg: workload.BankConfig{InitialBalance: math.MaxInt64 / 999},
			wantErr: workload.ErrInitialBalance},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := smallBank(t)
			transfer(t, b, 3, 4, 25)
			before := snapshotBank(t, b)

			_, err := b.Apply(workload.BankCmd{Op: workload.BankReset, Config: tt.cfg})
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, workload.ErrInvalid)
				assert.ErrorIs(t, err, tt.wantErr)
				assert.Equal(t, before, snapshotBank(t, b), "a refused reset must change nothing")

				nb, err := workload.NewBank(tt.cfg)
				assert.ErrorIs(t, err, tt.wantErr, "NewBank validates as Reset does")
				assert.Nil(t, nb)
				assert.ErrorIs(t, tt.cfg.Check(), tt.wantErr, "Check validates as Reset does")
				return
			}
			require.NoError(t, err)
			assert.NoError(t, tt.cfg.Check())
			checkFresh := func(t *testing.T, b *workload.Bank) {
				s := summary(t, b)
				assert.Equal(t, uint64(0), s.Seq, "the sequence restarts")
				if tt.wantBalances != nil {
					assert.Equal(t, tt.wantBalances, balances(t, b))
					return
				}
				// Large banks: check the summary and the ends, not every account.
				assert.Equal(t, tt.wantAccounts, s.Accounts)
				assert.Equal(t, tt.wantEach*int64(tt.wantAccounts), s.Total)
				assert.Equal(t, tt.wantEach, s.MinBalance)
				for _, id := range []uint32{1, tt.wantAccounts} {
					assert.Equal(t, tt.wantEach, apply(t, b, workload.BankCmd{Op: workload.BankBalance, From: id}).Balance)
				}
				_, err := b.Apply(workload.BankCmd{Op: workload.BankBalance, From: tt.wantAccounts + 1})
				assert.ErrorIs(t, err, workload.ErrNotFound)
			}
			checkFresh(t, b)
			for id := uint32(1); id <= min(4, summary(t, b).Accounts); id++ {
				assert.Empty(t, history(t, b, id, 0), "history of account %d is cleared", id)
			}
			t.Run("NewBank builds the same bank", func(t *testing.T) {
				checkFresh(t, newBank(t, tt.cfg))
			})
		})
	}
}

func TestBankSummary(t *testing.T) {
	b := smallBank(t)
	transfer(t, b, 3, 2, 100) // 90, 110, 0, 0
	assert.Equal(t, workload.BankResult{Seq: 2, Total: 200, MinBalance: 0, Accounts: 4}, summary(t, b))
	transfer(t, b, 2, 3, 50)
	transfer(t, b, 2, 4, 20) // 90, 40, 50, 20
	assert.Equal(t, workload.BankResult{Seq: 4, Total: 200, MinBalance: 20, Accounts: 4}, summary(t, b))
}

func TestBankUnknownOp(t *testing.T) {
	b := smallBank(t)
	before := snapshotBank(t, b)
	for _, op := range []workload.BankOp{0, 99} {
		_, err := b.Apply(workload.BankCmd{Op: op, From: 1, To: 2, Amount: 1})
		assert.ErrorIs(t, err, workload.ErrInvalid)
		assert.ErrorIs(t, err, workload.ErrUnknownOp)
	}
	assert.Equal(t, before, snapshotBank(t, b))
}

// TestBankRandomTransfersConserveMoney runs many random transfers, refused
// ones included, and checks the invariants the concurrent tests rely on.
func TestBankRandomTransfersConserveMoney(t *testing.T) {
	const accounts = 8
	b := newBank(t, workload.BankConfig{Scenario: workload.ScenarioB, Accounts: accounts, InitialBalance: 50})
	total := summary(t, b).Total
	rng := rand.New(rand.NewPCG(7, 7))
	var ok uint64
	for i := 0; i < 5000; i++ {
		from, to := uint32(1+rng.IntN(accounts)), uint32(1+rng.IntN(accounts))
		before := balances(t, b)
		r, err := b.Apply(workload.BankCmd{Op: workload.BankTransfer, From: from, To: to, Amount: int64(1 + rng.IntN(60))})
		if err != nil {
			if from == to {
				require.ErrorIs(t, err, workload.ErrSameAccount)
			} else {
				require.ErrorIs(t, err, workload.ErrInsufficientFunds)
			}
			require.Equal(t, before, balances(t, b), "a refused transfer must change nothing")
			continue
		}
		ok++
		assert.Equal(t, ok, r.Seq, "seq counts accepted transfers")
		assert.Equal(t, r.FromBalance, apply(t, b, workload.BankCmd{Op: workload.BankBalance, From: from}).Balance)
		assert.Equal(t, r.ToBalance, apply(t, b, workload.BankCmd{Op: workload.BankBalance, From: to}).Balance)
	}
	s := summary(t, b)
	assert.Equal(t, total, s.Total)
	assert.GreaterOrEqual(t, s.MinBalance, int64(0))
	assert.Equal(t, ok, s.Seq)
}
