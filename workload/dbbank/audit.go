package dbbank

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/locklab/locklab/workload"
)

// Audit is the database's bank checked against itself and against the bank
// it was seeded with: what a test of many replicas over one database counts
// after a fault.
type Audit struct {
	Accounts   uint32
	Total      int64 // the sum of the balances
	MinBalance int64
	Transfers  uint64 // rows in transfers
	Requests   uint64 // rows in requests: transfers that came with a request id
	// Drift lists the accounts whose balance is not their seeded balance
	// plus what the recorded transfers moved: a change lost (a write that
	// overwrote another) or made without its record.
	Drift []uint32
	// ReqSeq is each stored request id's transfer.
	ReqSeq map[string]uint64
	// Balances is every account's balance.
	Balances map[uint32]int64
}

// Audit reads the bank in one snapshot and checks it against seed, the
// bank it was made from.
func (b *Bank) Audit(ctx context.Context, seed workload.BankConfig) (Audit, error) {
	init, err := workload.NewBank(seed)
	if err != nil {
		return Audit{}, err
	}
	tx, err := b.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Audit{}, unavailable(err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	bal := map[uint32]int64{}
	a := Audit{ReqSeq: map[string]uint64{}, Balances: bal}
	rows, err := tx.QueryContext(ctx, "SELECT id, balance FROM accounts")
	if err != nil {
		return Audit{}, unavailable(err)
	}
	for rows.Next() {
		var id uint32
		var v int64
		if err := rows.Scan(&id, &v); err != nil {
			rows.Close()
			return Audit{}, unavailable(err)
		}
		bal[id] = v
		if a.Accounts == 0 || v < a.MinBalance {
			a.MinBalance = v
		}
		a.Accounts++
		a.Total += v
	}
	rows.Close()
	want := map[uint32]int64{}
	for id := range bal {
		r, err := init.Apply(workload.BankCmd{Op: workload.BankBalance, From: id})
		if err != nil {
			return Audit{}, fmt.Errorf("dbbank: audit: account %d is not in the seed: %w", id, err)
		}
		want[id] = r.Balance
	}
	rows, err = tx.QueryContext(ctx, "SELECT from_id, to_id, amount FROM transfers")
	if err != nil {
		return Audit{}, unavailable(err)
	}
	for rows.Next() {
		var from, to uint32
		var amount int64
		if err := rows.Scan(&from, &to, &amount); err != nil {
			rows.Close()
			return Audit{}, unavailable(err)
		}
		want[from] -= amount
		want[to] += amount
		a.Transfers++
	}
	rows.Close()
	for id := uint32(1); id <= a.Accounts; id++ {
		if bal[id] != want[id] {
			a.Drift = append(a.Drift, id)
		}
	}
	rows, err = tx.QueryContext(ctx, "SELECT req_id, seq FROM requests")
	if err != nil {
		return Audit{}, unavailable(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var seq uint64
		if err := rows.Scan(&id, &seq); err != nil {
			return Audit{}, unavailable(err)
		}
		a.ReqSeq[id] = seq
		a.Requests++
	}
	return a, rows.Err()
}

// Ownership is one row of the ownership table.
type Ownership struct {
	Owner string // the replica that took the account last; empty after a reset
	Epoch uint64 // one more at every takeover and every reset
}

// Owners reads the ownership table (routed-owner): every account taken
// over at least once.
func (b *Bank) Owners(ctx context.Context) (map[uint32]Ownership, error) {
	rows, err := b.db.QueryContext(ctx, "SELECT account, owner, epoch FROM owners")
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	out := map[uint32]Ownership{}
	for rows.Next() {
		var id uint32
		var o Ownership
		if err := rows.Scan(&id, &o.Owner, &o.Epoch); err != nil {
			return nil, unavailable(err)
		}
		out[id] = o
	}
	return out, rows.Err()
}
