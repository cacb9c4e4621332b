package dbbank

import (
	"context"
	"database/sql"
	"errors"

	"github.com/locklab/locklab/workload"
)

// read answers a balance, a history or a summary outside any transaction of
// the serialised path: from the cache when it holds the entry, else from the
// database, filling the cache.
func (b *Bank) read(cmd workload.BankCmd) (workload.BankResult, error) {
	b.reset.RLock()
	defer b.reset.RUnlock()
	switch cmd.Op {
	case workload.BankBalance:
		return b.balance(cmd.From)
	case workload.BankHistory:
		if cmd.Limit > workload.MaxHistoryLimit {
			return workload.BankResult{}, workload.ErrHistoryLimit
		}
		limit := int(cmd.Limit)
		if limit == 0 {
			limit = workload.DefaultHistoryLimit
		}
		return b.history(cmd.From, min(limit, workload.HistoryKept))
	case workload.BankSummary:
		return b.summary()
	default:
		return workload.BankResult{}, workload.ErrUnknownOp
	}
}

func (b *Bank) exists(id uint32) bool { return id >= 1 && id <= b.accounts.Load() }

func (b *Bank) balance(id uint32) (workload.BankResult, error) {
	if !b.exists(id) {
		return workload.BankResult{}, workload.ErrNoAccount
	}
	var k keys
	if b.cache != nil {
		k = b.cache.keys(id)
		if bal, ok := b.cache.balance(b.ctx, k); ok {
			return workload.BankResult{Balance: bal}, nil
		}
	}
	bal, version, err := balanceIn(b.ctx, b.db, id)
	if err != nil {
		return workload.BankResult{}, err
	}
	if b.cache != nil {
		b.cache.fillBalance(b.ctx, k, version, bal)
	}
	return workload.BankResult{Balance: bal}, nil
}

// history returns id's newest n transfers (n <= HistoryKept). The database
// is read in one snapshot, so that the version the cache keeps is the
// version of the history it keeps.
func (b *Bank) history(id uint32, n int) (workload.BankResult, error) {
	if !b.exists(id) {
		return workload.BankResult{}, workload.ErrNoAccount
	}
	var k keys
	if b.cache != nil {
		k = b.cache.keys(id)
		if h, ok := b.cache.history(b.ctx, k); ok {
			return workload.BankResult{History: h[:min(n, len(h))]}, nil
		}
	}
	h, version, err := b.historyFromDB(id)
	if err != nil {
		return workload.BankResult{}, err
	}
	if b.cache != nil {
		b.cache.fillHistory(b.ctx, k, version, h)
	}
	return workload.BankResult{History: h[:min(n, len(h))]}, nil
}

// querier is what a read needs: the database, or a transaction open on it.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// balanceIn reads id's balance and version through q.
func balanceIn(ctx context.Context, q querier, id uint32) (int64, uint64, error) {
	var bal int64
	var version uint64
	err := q.QueryRowContext(ctx, "SELECT balance, version FROM accounts WHERE id = ?", id).Scan(&bal, &version)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, workload.ErrNoAccount
	}
	if err != nil {
		return 0, 0, unavailable(err)
	}
	return bal, version, nil
}

// historyFromDB reads id's version and its HistoryKept newest transfers,
// newest first, in one read-only transaction (one snapshot).
func (b *Bank) historyFromDB(id uint32) ([]workload.Transfer, uint64, error) {
	tx, err := b.db.BeginTx(b.ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, unavailable(err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep
	return historyIn(b.ctx, tx, id)
}

// historyIn reads id's version and its HistoryKept newest transfers, newest
// first, through q, which should be one snapshot.
func historyIn(ctx context.Context, q querier, id uint32) ([]workload.Transfer, uint64, error) {
	var version uint64
	err := q.QueryRowContext(ctx, "SELECT version FROM accounts WHERE id = ?", id).Scan(&version)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, workload.ErrNoAccount
	}
	if err != nil {
		return nil, 0, unavailable(err)
	}
	rows, err := q.QueryContext(ctx, `SELECT seq, from_id, to_id, amount FROM (
		(SELECT seq, from_id, to_id, amount FROM transfers WHERE from_id = ? ORDER BY seq DESC LIMIT ?)
		UNION ALL
		(SELECT seq, from_id, to_id, amount FROM transfers WHERE to_id = ? ORDER BY seq DESC LIMIT ?)
	) AS t ORDER BY seq DESC LIMIT ?`, id, workload.HistoryKept, id, workload.HistoryKept, workload.HistoryKept)
	if err != nil {
		return nil, 0, unavailable(err)
	}
	defer rows.Close()
	h := make([]workload.Transfer, 0, workload.DefaultHistoryLimit)
	for rows.Next() {
		var t workload.Transfer
		if err := rows.Scan(&t.Seq, &t.From, &t.To, &t.Amount); err != nil {
			return nil, 0, unavailable(err)
		}
		h = append(h, t)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, unavailable(err)
	}
	return h, version, nil
}

// summary reads the total, the smallest balance, the accounts and the
// sequence (the newest transfer's number) in one snapshot. A transaction
// rolled back leaves a gap in db-rowlock's sequence, so it may exceed the
// count of transfers.
func (b *Bank) summary() (workload.BankResult, error) {
	tx, err := b.db.BeginTx(b.ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return workload.BankResult{}, unavailable(err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep
	return summaryIn(b.ctx, tx)
}

// summaryIn reads the summary through q, which should be one snapshot.
func summaryIn(ctx context.Context, q querier) (workload.BankResult, error) {
	var r workload.BankResult
	if err := q.QueryRowContext(ctx, "SELECT COUNT(*), COALESCE(SUM(balance), 0), COALESCE(MIN(balance), 0) FROM accounts").
		Scan(&r.Accounts, &r.Total, &r.MinBalance); err != nil {
		return workload.BankResult{}, unavailable(err)
	}
	if err := q.QueryRowContext(ctx, "SELECT COALESCE(MAX(seq), 0) FROM transfers").Scan(&r.Seq); err != nil {
		return workload.BankResult{}, unavailable(err)
	}
	return r, nil
}
