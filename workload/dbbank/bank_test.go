package dbbank

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workload"
)

const (
	testAccounts = 16
	testBalance  = 1000
)

// open is a bank of testAccounts accounts of testBalance each in a fresh
// database, with the cache or without.
func open(t testing.TB, cached bool) *Bank { t.Helper(); return openPool(t, cached, 0) }

// openPool is open with a pool of that many connections (0: the default).
func openPool(t testing.TB, cached bool, pool int) *Bank {
	t.Helper()
	cfg := Config{DSN: newDSN(t), Pool: pool, Bank: workload.BankConfig{Accounts: testAccounts, InitialBalance: testBalance}}
	if cached {
		cfg.RedisAddr = testRedis.Addr
	}
	b, err := Open(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// designs are the registry's designs that serve a bank over a database, from
// the registry: a design added there is tested here without an edit.
func designs(t *testing.T) []store.Design {
	var out []store.Design
	for _, d := range store.Designs() {
		if d.Supports(store.CapabilitiesOf[workload.BankCmd, workload.BankResult](&Bank{})) == nil {
			out = append(out, d)
		}
	}
	require.NotEmpty(t, out)
	return out
}

// TestDesigns: a bank over a database has reads, commits and transactions,
// not shards nor a lock-free path: the sharded designs and atomic are
// refused, db-rowlock and the serialising ones serve it.
func TestDesigns(t *testing.T) {
	caps := store.CapabilitiesOf[workload.BankCmd, workload.BankResult](&Bank{})
	assert.Equal(t, store.CapReads|store.CapCommit|store.CapTx|store.CapOwned, caps)
	var names []string
	for _, d := range designs(t) {
		names = append(names, d.Name)
	}
	assert.Contains(t, names, "db-rowlock")
	assert.Contains(t, names, "mutex")
	assert.Contains(t, names, "inputQ-batch")
	assert.Contains(t, names, "routed-owner")
	for _, refused := range []string{"sharded", "atomic"} {
		d, ok := store.LookupDesign(refused)
		require.True(t, ok)
		assert.ErrorIs(t, d.Supports(caps), store.ErrUnsupported, refused)
	}
}

// TestMoneyConserved: concurrent transfers (and reads) through every design
// that serves the bank leave the database's total as it was, no balance
// negative, and one row per acknowledged transfer — also with a pool of one
// connection, where a design that commits a group must answer its reads
// inside the group's transaction (a read that waited for a second
// connection would wait for ever: the deadline turns that into a failure).
func TestMoneyConserved(t *testing.T) {
	for _, d := range designs(t) {
		for _, v := range []struct {
			cached bool
			pool   int
		}{{false, 0}, {true, 0}, {false, 1}} {
			name := d.Name
			if v.cached {
				name += "/cache"
			}
			if v.pool > 0 {
				name += fmt.Sprintf("/pool%d", v.pool)
			}
			t.Run(name, func(t *testing.T) {
				b := openPool(t, v.cached, v.pool)
				s, err := store.Wrap[workload.BankCmd, workload.BankResult](d, b, store.Config{})
				require.NoError(t, err)
				ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
				defer cancel()
				var acked atomic.Uint64
				var wg sync.WaitGroup
				for c := range 4 {
					wg.Go(func() {
						rng := rand.New(rand.NewPCG(uint64(c), 1))
						for range 25 {
							from, to := 1+rng.Uint32N(testAccounts), 1+rng.Uint32N(testAccounts)
							_, err := s.Do(ctx, workload.BankCmd{Op: workload.BankTransfer, From: from, To: to, Amount: 1 + rng.Int64N(300)})
							switch {
							case err == nil:
								acked.Add(1)
							case errors.Is(err, workload.ErrInsufficientFunds), errors.Is(err, workload.ErrSameAccount):
							default:
								t.Errorf("transfer: %v", err)
							}
							_, err = s.Do(ctx, workload.BankCmd{Op: workload.BankBalance, From: from})
							assert.NoError(t, err)
							_, err = s.Do(ctx, workload.BankCmd{Op: workload.BankHistory, From: to})
							assert.NoError(t, err)
						}
					})
				}
				wg.Wait()
				require.NoError(t, s.Close())
				sum, err := b.summary()
				require.NoError(t, err)
				assert.Equal(t, int64(testAccounts*testBalance), sum.Total, "money conserved")
				assert.GreaterOrEqual(t, sum.MinBalance, int64(0))
				var rows uint64
				require.NoError(t, b.db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM transfers").Scan(&rows))
				assert.Equal(t, acked.Load(), rows, "one row per acknowledged transfer")
				assert.GreaterOrEqual(t, sum.Seq, rows)
				assert.Positive(t, acked.Load())
			})
		}
	}
}

// TestRefusedChangesNothing: a transfer the bank refuses — an overdraft, an
// unknown account, a zero amount, to itself — answers its refusal on both
// ways in, and leaves every balance, history and the transfer count as they
// were.
func TestRefusedChangesNothing(t *testing.T) {
	b := open(t, true)
	ok := workload.BankCmd{Op: workload.BankTransfer, From: 1, To: 2, Amount: 10}
	_, err := b.ApplyTx(ok)
	require.NoError(t, err)
	before := snapshot(t, b)
	for _, tt := range []struct {
		cmd  workload.BankCmd
		want error
	}{
		{workload.BankCmd{Op: workload.BankTransfer, From: 1, To: 2, Amount: testBalance + 1}, workload.ErrInsufficientFunds},
		{workload.BankCmd{Op: workload.BankTransfer, From: 1, To: testAccounts + 1, Amount: 1}, workload.ErrNoAccount},
		{workload.BankCmd{Op: workload.BankTransfer, From: 0, To: 2, Amount: 1}, workload.ErrNoAccount},
		{workload.BankCmd{Op: workload.BankTransfer, From: 1, To: 2, Amount: 0}, workload.ErrAmount},
		{workload.BankCmd{Op: workload.BankTransfer, From: 3, To: 3, Amount: 1}, workload.ErrSameAccount},
	} {
		_, err := b.ApplyTx(tt.cmd)
		assert.ErrorIs(t, err, tt.want, "ApplyTx %+v", tt.cmd)
		_, err = b.Apply(tt.cmd)
		assert.ErrorIs(t, err, tt.want, "Apply %+v", tt.cmd)
		require.NoError(t, b.Commit())
	}
	assert.Equal(t, before, snapshot(t, b))
	_, err = b.Apply(workload.BankCmd{Op: workload.BankBalance, From: testAccounts + 1})
	assert.ErrorIs(t, err, workload.ErrNoAccount)
	_, err = b.Apply(workload.BankCmd{Op: workload.BankHistory, From: 1, Limit: workload.MaxHistoryLimit + 1})
	assert.ErrorIs(t, err, workload.ErrHistoryLimit)
}

// state is every balance and history and the summary, read from the
// database.
type state struct {
	sum       workload.BankResult
	balances  []int64
	histories [][]workload.Transfer
}

func snapshot(t *testing.T, b *Bank) state {
	t.Helper()
	var st state
	var err error
	st.sum, err = b.summary()
	require.NoError(t, err)
	for id := uint32(1); id <= testAccounts; id++ {
		var bal int64
		require.NoError(t, b.db.QueryRowContext(t.Context(), "SELECT balance FROM accounts WHERE id = ?", id).Scan(&bal))
		h, _, err := b.historyFromDB(id)
		require.NoError(t, err)
		st.balances, st.histories = append(st.balances, bal), append(st.histories, h)
	}
	return st
}

// TestGroupCommit: the serialised path holds transfers in one transaction
// until Commit; a reader outside sees none of them before it and all after,
// and the history answers them newest first.
func TestGroupCommit(t *testing.T) {
	b := open(t, false)
	for range 3 {
		_, err := b.Apply(workload.BankCmd{Op: workload.BankTransfer, From: 1, To: 2, Amount: 5})
		require.NoError(t, err)
	}
	sum, err := b.summary()
	require.NoError(t, err)
	assert.Zero(t, sum.Seq, "nothing committed yet")
	require.NoError(t, b.Commit())
	r, err := b.Apply(workload.BankCmd{Op: workload.BankHistory, From: 2, Limit: 2})
	require.NoError(t, err)
	require.Len(t, r.History, 2)
	assert.Equal(t, []uint64{3, 2}, []uint64{r.History[0].Seq, r.History[1].Seq})
	r, err = b.Apply(workload.BankCmd{Op: workload.BankBalance, From: 2})
	require.NoError(t, err)
	assert.Equal(t, int64(testBalance+15), r.Balance)
}

// TestReset: a reset refills the tables from its config, and the cache
// forgets what it held.
func TestReset(t *testing.T) {
	b := open(t, true)
	_, err := b.ApplyTx(workload.BankCmd{Op: workload.BankTransfer, From: 1, To: 2, Amount: 5})
	require.NoError(t, err)
	_, err = b.ApplyTx(workload.BankCmd{Op: workload.BankBalance, From: 2}) // cached
	require.NoError(t, err)
	_, err = b.Apply(workload.BankCmd{Op: workload.BankReset, Config: workload.BankConfig{Scenario: workload.ScenarioB, Accounts: 4, InitialBalance: 7}})
	require.NoError(t, err)
	sum, err := b.summary()
	require.NoError(t, err)
	assert.Equal(t, workload.BankResult{Accounts: 4, Total: 14, MinBalance: 0}, sum)
	r, err := b.ApplyTx(workload.BankCmd{Op: workload.BankBalance, From: 2})
	require.NoError(t, err)
	assert.Zero(t, r.Balance, "even accounts start empty in scenario B, whatever the cache held")
	_, err = b.ApplyTx(workload.BankCmd{Op: workload.BankBalance, From: 5})
	assert.ErrorIs(t, err, workload.ErrNoAccount)
}

// TestOpenUnreachable: a database that does not answer is an error naming
// it, wrapping ErrUnavailable; so is a cache.
func TestOpenUnreachable(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, err := Open(ctx, Config{DSN: "root@unix(" + t.TempDir() + "/no.sock)/x"})
	require.ErrorIs(t, err, workload.ErrUnavailable)
	assert.Contains(t, err.Error(), "no.sock")
	_, err = Open(ctx, Config{DSN: newDSN(t), RedisAddr: "127.0.0.1:1"})
	require.ErrorIs(t, err, workload.ErrUnavailable)
	assert.Contains(t, err.Error(), "(Redis) at 127.0.0.1:1")
	_, err = Open(ctx, Config{})
	assert.ErrorIs(t, err, errNoDSN)
}

// TestKeepsExistingBank: a database that holds a bank is kept at Open, not
// seeded again, and transfers continue its sequence.
func TestKeepsExistingBank(t *testing.T) {
	dsn := newDSN(t)
	cfg := Config{DSN: dsn, Bank: workload.BankConfig{Accounts: 3, InitialBalance: 10}}
	b, err := Open(t.Context(), cfg)
	require.NoError(t, err)
	r, err := b.Apply(workload.BankCmd{Op: workload.BankTransfer, From: 1, To: 2, Amount: 4})
	require.NoError(t, err)
	require.NoError(t, b.Commit())
	require.NoError(t, b.Close())
	b, err = Open(t.Context(), cfg)
	require.NoError(t, err)
	defer b.Close()
	r2, err := b.Apply(workload.BankCmd{Op: workload.BankTransfer, From: 1, To: 2, Amount: 1})
	require.NoError(t, err)
	require.NoError(t, b.Commit())
	assert.Equal(t, r.Seq+1, r2.Seq)
	assert.Equal(t, int64(5), r2.FromBalance)
}
