package fleet

import (
	"database/sql"
	"testing"

	_ "github.com/go-sql-driver/mysql" // the database/sql driver the tampering uses
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/workload"
	"github.com/locklab/locklab/workload/dbbank"
)

// TestCheckCanFail: the checker passes a bank left whole by transfers with
// request ids, and fails each rule when the bank or the client's record is
// broken the way that rule is about: each row's tampering makes exactly the
// named checks fail.
func TestCheckCanFail(t *testing.T) {
	for _, tt := range []struct {
		name   string
		tamper []string // SQL run on the database
		extra  *Outcome // an outcome added to the client's record
		fails  []string
	}{
		{name: "whole"},
		{name: "an acknowledged transfer lost", extra: &Outcome{Cmd: transfer(1, 2, 5, "never-stored"), Acked: true, Result: workload.BankResult{Seq: 99}},
			fails: []string{CheckNoAckLost}},
		{name: "a transfer applied twice", tamper: []string{
			"INSERT INTO transfers (from_id, to_id, amount) VALUES (3, 4, 7)",
			"UPDATE accounts SET balance = balance + IF(id = 3, -7, 7) WHERE id IN (3, 4)"},
			fails: []string{CheckAtMostOnce}},
		{name: "a stray request id", tamper: []string{"INSERT INTO requests VALUES ('nobody-sent-it', 1, 0, 0)"},
			fails: []string{CheckAtMostOnce}},
		{name: "money created", tamper: []string{"UPDATE accounts SET balance = balance + 5 WHERE id = 1"},
			fails: []string{CheckMoney, CheckLedger}},
		{name: "a lost update", tamper: []string{"UPDATE accounts SET balance = balance + IF(id = 3, 7, -7) WHERE id IN (3, 4)"},
			fails: []string{CheckLedger}},
		{name: "a negative balance", tamper: []string{
			"INSERT INTO transfers (from_id, to_id, amount) VALUES (5, 6, 2000)",
			"UPDATE accounts SET balance = balance + IF(id = 5, -2000, 2000) WHERE id IN (5, 6)"},
			fails: []string{CheckNoNegative, CheckAtMostOnce}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dsn := newDSN(t)
			b, err := dbbank.Open(t.Context(), dbbank.Config{DSN: dsn, Bank: seed, Owner: "test"})
			require.NoError(t, err)
			var log []Outcome
			for i := range 4 {
				cmd := transfer(uint32(3+i%2), uint32(4-i%2), int64(10+i), RequestID("c", i))
				r, err := b.ApplyOwned(cmd)
				require.NoError(t, err)
				log = append(log, Outcome{Cmd: cmd, Acked: true, Result: r})
			}
			require.NoError(t, b.Close())
			db, err := sql.Open("mysql", dsn)
			require.NoError(t, err)
			defer db.Close()
			for _, q := range tt.tamper {
				_, err := db.ExecContext(t.Context(), q)
				require.NoError(t, err, q)
			}
			if tt.extra != nil {
				log = append(log, *tt.extra)
			}
			checks, _, err := Check(t.Context(), dsn, seed, log)
			require.NoError(t, err)
			assert.ElementsMatch(t, tt.fails, failedNames(checks), "%+v", checks)
		})
	}
}
