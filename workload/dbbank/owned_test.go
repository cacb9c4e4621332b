package dbbank

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/workload"
)

var testSeed = workload.BankConfig{Accounts: testAccounts, InitialBalance: testBalance}

// replicas opens n banks over one fresh database, as n replicas of
// routed-owner share it; noFencing is the first one's Config.NoFencing.
func replicas(t *testing.T, n int, noFencing bool) []*Bank {
	t.Helper()
	dsn := newDSN(t)
	var out []*Bank
	for i := range n {
		b, err := Open(t.Context(), Config{DSN: dsn, Bank: testSeed, Owner: string(rune('a' + i)), NoFencing: noFencing && i == 0})
		require.NoError(t, err)
		t.Cleanup(func() { _ = b.Close() })
		out = append(out, b)
	}
	return out
}

func transferCmd(from, to uint32, amount int64, reqID string) workload.BankCmd {
	return workload.BankCmd{Op: workload.BankTransfer, From: from, To: to, Amount: amount, ReqID: reqID}
}

// TestFencing: replica a owns accounts 1 and 2; b takes them over; a's late
// write, from the balances it still holds, is refused with ErrFenced and
// leaves the database as b left it; a's next call takes the accounts back
// and reloads them. The control is the same run with a's fencing off: the
// late write lands, overwriting b's transfer, and the audit finds the
// balances no longer match the recorded transfers.
func TestFencing(t *testing.T) {
	for _, tt := range []struct {
		name      string
		noFencing bool
	}{{"fenced", false}, {"control: no fencing", true}} {
		t.Run(tt.name, func(t *testing.T) {
			rs := replicas(t, 2, tt.noFencing)
			a, b := rs[0], rs[1]
			_, err := a.ApplyOwned(transferCmd(1, 2, 10, ""))
			require.NoError(t, err)
			own, err := a.Owners(t.Context())
			require.NoError(t, err)
			assert.Equal(t, map[uint32]Ownership{1: {"a", 1}, 2: {"a", 1}}, own)

			r, err := b.ApplyOwned(transferCmd(1, 2, 100, ""))
			require.NoError(t, err)
			assert.Equal(t, int64(testBalance-110), r.FromBalance, "b loaded a's change")

			_, err = a.ApplyOwned(transferCmd(1, 2, 1, "")) // a still holds 990
			audit, aerr := a.Audit(t.Context(), testSeed)
			require.NoError(t, aerr)
			if tt.noFencing {
				require.NoError(t, err, "unfenced, the late write lands")
				assert.NotEmpty(t, audit.Drift, "the audit sees b's transfer overwritten")
				return
			}
			require.ErrorIs(t, err, workload.ErrFenced)
			assert.Empty(t, audit.Drift)
			assert.Equal(t, int64(testAccounts*testBalance), audit.Total)
			assert.Equal(t, uint64(2), audit.Transfers)

			r, err = a.ApplyOwned(transferCmd(1, 2, 1, ""))
			require.NoError(t, err, "the retry takes the accounts back")
			assert.Equal(t, int64(testBalance-111), r.FromBalance, "and reloads them")
			audit, err = a.Audit(t.Context(), testSeed)
			require.NoError(t, err)
			assert.Empty(t, audit.Drift)
		})
	}
}

// TestRequestID: a transfer retried with its request id, on the same
// replica or on another, is applied once and answered with the first
// answer; the control, the same retries without an id, applies it again.
func TestRequestID(t *testing.T) {
	for _, tt := range []struct {
		reqID string
		rows  uint64
	}{{"r1", 1}, {"", 3}} {
		t.Run("id="+tt.reqID, func(t *testing.T) {
			rs := replicas(t, 2, false)
			first, err := rs[0].ApplyOwned(transferCmd(3, 4, 7, tt.reqID))
			require.NoError(t, err)
			for _, r := range []*Bank{rs[0], rs[1]} {
				again, err := r.ApplyOwned(transferCmd(3, 4, 7, tt.reqID))
				require.NoError(t, err)
				if tt.reqID != "" {
					assert.Equal(t, first, again, "the first answer")
				}
			}
			audit, err := rs[1].Audit(t.Context(), testSeed)
			require.NoError(t, err)
			assert.Equal(t, tt.rows, audit.Transfers)
			assert.Empty(t, audit.Drift)
			if tt.reqID != "" {
				assert.Equal(t, map[string]uint64{tt.reqID: first.Seq}, audit.ReqSeq)
			}
		})
	}
}

// TestReqIDTooLong: an id longer than MaxReqID is refused and changes
// nothing.
func TestReqIDTooLong(t *testing.T) {
	rs := replicas(t, 1, false)
	_, err := rs[0].ApplyOwned(transferCmd(1, 2, 1, string(make([]byte, MaxReqID+1))))
	require.ErrorIs(t, err, ErrReqID)
	require.ErrorIs(t, err, workload.ErrInvalid)
	audit, err := rs[0].Audit(t.Context(), testSeed)
	require.NoError(t, err)
	assert.Zero(t, audit.Transfers)
}

// TestResetFencesEveryOwner: a reset of the bank on one replica ends every
// replica's ownership, so no replica writes from the old bank's balances.
func TestResetFencesEveryOwner(t *testing.T) {
	rs := replicas(t, 2, false)
	_, err := rs[0].ApplyOwned(transferCmd(1, 2, 10, ""))
	require.NoError(t, err)
	_, err = rs[1].ApplyOwned(workload.BankCmd{Op: workload.BankReset, Config: testSeed})
	require.NoError(t, err)
	_, err = rs[0].ApplyOwned(transferCmd(1, 2, 10, ""))
	require.ErrorIs(t, err, workload.ErrFenced)
	audit, err := rs[0].Audit(t.Context(), testSeed)
	require.NoError(t, err)
	assert.Empty(t, audit.Drift)
	assert.Zero(t, audit.Transfers)
}

// TestRequestIDRace: a retry that commits on another replica while this one
// runs the same request (its lookup saw nothing; it waits on the other's
// locks, then finds the id taken) is answered with the other's answer, and
// this replica's transfer is undone: one transfer in all. The accounts are
// reloaded, so a's next transfer starts from the other's balances. The
// other replica is played by a transaction of the test's own.
func TestRequestIDRace(t *testing.T) {
	rs := replicas(t, 1, false)
	a := rs[0]
	_, err := a.ApplyOwned(transferCmd(5, 6, 1, "")) // a owns 5 and 6
	require.NoError(t, err)
	other, err := a.db.BeginTx(t.Context(), nil)
	require.NoError(t, err)
	defer other.Rollback() //nolint:errcheck // committed below
	res, err := other.ExecContext(t.Context(), "INSERT INTO transfers (from_id, to_id, amount) VALUES (5, 6, 3)")
	require.NoError(t, err)
	seq, err := res.LastInsertId()
	require.NoError(t, err)
	_, err = other.ExecContext(t.Context(), "UPDATE accounts SET balance = balance + IF(id = 5, -3, 3) WHERE id IN (5, 6)")
	require.NoError(t, err)
	_, err = other.ExecContext(t.Context(), "INSERT INTO requests VALUES ('dup', ?, 996, 1004)", seq)
	require.NoError(t, err)

	type answer struct {
		r   workload.BankResult
		err error
	}
	got := make(chan answer, 1)
	go func() {
		r, err := a.ApplyOwned(transferCmd(5, 6, 3, "dup"))
		got <- answer{r, err}
	}()
	time.Sleep(300 * time.Millisecond) // a waits on the id's lock
	require.NoError(t, other.Commit())
	ans := <-got
	require.NoError(t, ans.err)
	assert.Equal(t, workload.BankResult{Seq: uint64(seq), FromBalance: 996, ToBalance: 1004}, ans.r, "the other's answer")
	audit, err := a.Audit(t.Context(), testSeed)
	require.NoError(t, err)
	assert.Equal(t, uint64(2), audit.Transfers, "a's own transfer undone")
	assert.Empty(t, audit.Drift)
	r, err := a.ApplyOwned(transferCmd(5, 6, 1, ""))
	require.NoError(t, err)
	assert.Equal(t, int64(995), r.FromBalance, "from the other's balance")
	audit, err = a.Audit(t.Context(), testSeed)
	require.NoError(t, err)
	assert.Empty(t, audit.Drift)
}
