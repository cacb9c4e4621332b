package dbbank

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/locklab/locklab/workload"
)

// Apply runs cmd for a design that serialises commands (store.Machine): a
// transfer inside the open transaction, which the next Commit commits; a
// read outside it; a reset once the open transaction has been committed.
func (b *Bank) Apply(cmd workload.BankCmd) (workload.BankResult, error) {
	switch cmd.Op {
	case workload.BankTransfer:
		if err := b.check(cmd); err != nil {
			return workload.BankResult{}, err
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.applyInTx(cmd)
	case workload.BankReset:
		// TRUNCATE would wait for the open transaction's locks: commit it
		// first. Its callers are answered at the next Commit as ever, so a
		// failure is kept for that Commit to return to them too.
		if err := b.Commit(); err != nil {
			b.mu.Lock()
			b.cur.err = err
			b.mu.Unlock()
			return workload.BankResult{}, err
		}
		return workload.BankResult{}, b.doReset(cmd.Config)
	default:
		b.mu.Lock()
		if b.cur.tx != nil || b.cur.err != nil {
			defer b.mu.Unlock()
			return b.readInGroup(cmd)
		}
		b.mu.Unlock()
		return b.read(cmd)
	}
}

// readInGroup answers a read inside the open transaction, with mu held.
// A design that commits a group (inputQ-batch, combining) answers every
// command of the group after its Commit, so the read sees the group's own
// transfers, as their order says it must, and is failed with them if the
// group is; and it needs no second connection: with a pool of one, a read
// outside the transaction would wait for the connection the transaction
// holds until a Commit that only comes after the read. The cache is left
// alone: it holds committed balances only.
func (b *Bank) readInGroup(cmd workload.BankCmd) (workload.BankResult, error) {
	if b.cur.err != nil {
		return workload.BankResult{}, b.cur.err
	}
	switch cmd.Op {
	case workload.BankBalance:
		if !b.exists(cmd.From) {
			return workload.BankResult{}, workload.ErrNoAccount
		}
		bal, _, err := balanceIn(b.ctx, b.cur.tx, cmd.From)
		if err != nil {
			return workload.BankResult{}, err
		}
		return workload.BankResult{Balance: bal}, nil
	case workload.BankHistory:
		if cmd.Limit > workload.MaxHistoryLimit {
			return workload.BankResult{}, workload.ErrHistoryLimit
		}
		if !b.exists(cmd.From) {
			return workload.BankResult{}, workload.ErrNoAccount
		}
		limit := int(cmd.Limit)
		if limit == 0 {
			limit = workload.DefaultHistoryLimit
		}
		h, _, err := historyIn(b.ctx, b.cur.tx, cmd.From)
		if err != nil {
			return workload.BankResult{}, err
		}
		return workload.BankResult{History: h[:min(limit, workload.HistoryKept, len(h))]}, nil
	case workload.BankSummary:
		return summaryIn(b.ctx, b.cur.tx)
	default:
		return workload.BankResult{}, workload.ErrUnknownOp
	}
}

// Commit commits the open transaction, if any, and then invalidates the
// cache entries of the accounts it changed (store.Committer). An error is
// the error of every transfer the transaction held. The next Apply opens a
// new transaction at once, while this one commits.
func (b *Bank) Commit() error {
	b.mu.Lock()
	g := b.cur
	b.cur = group{}
	b.mu.Unlock()
	if g.err != nil {
		return g.err // rolled back already
	}
	if g.tx == nil {
		return nil
	}
	if err := g.tx.Commit(); err != nil {
		// The COMMIT may have happened with its answer lost: its accounts'
		// cache entries are dropped all the same, with every other.
		b.mu.Lock()
		b.seqStale = true
		b.mu.Unlock()
		if b.cache != nil {
			b.cache.newEpoch()
		}
		return unavailable(err)
	}
	b.invalidate(g.touched)
	return nil
}

// ApplyTx runs cmd as a transaction of its own (store.Transactional, the
// db-rowlock design): any number of calls at once.
func (b *Bank) ApplyTx(cmd workload.BankCmd) (workload.BankResult, error) {
	switch cmd.Op {
	case workload.BankTransfer:
		if err := b.check(cmd); err != nil {
			return workload.BankResult{}, err
		}
		b.reset.RLock()
		defer b.reset.RUnlock()
		for try := 0; ; try++ {
			r, touched, err := b.transferTx(cmd)
			if retryable(err) && try < maxRetries {
				continue
			}
			if retryable(err) {
				return workload.BankResult{}, unavailable(err)
			}
			if err != nil {
				return workload.BankResult{}, err
			}
			b.invalidate(touched)
			return r, nil
		}
	case workload.BankReset:
		return workload.BankResult{}, b.doReset(cmd.Config)
	default:
		return b.read(cmd)
	}
}

// check refuses a transfer that is malformed whatever the state, before
// the database is asked: the same refusals, in the same order, as
// workload.Bank.
func (b *Bank) check(cmd workload.BankCmd) error {
	switch {
	case cmd.Amount <= 0:
		return workload.ErrAmount
	case cmd.From == cmd.To:
		return workload.ErrSameAccount
	}
	return nil
}

// transferTx runs one transfer in a transaction of its own, the sequence
// number drawn by the database.
func (b *Bank) transferTx(cmd workload.BankCmd) (workload.BankResult, []touch, error) {
	tx, err := b.db.BeginTx(b.ctx, nil)
	if err != nil {
		return workload.BankResult{}, nil, unavailable(err)
	}
	r, err := transfer(b.ctx, tx, cmd, 0)
	if err != nil {
		_ = tx.Rollback()
		if retryable(err) || refused(err) {
			return workload.BankResult{}, nil, err
		}
		return workload.BankResult{}, nil, unavailable(err)
	}
	if err := tx.Commit(); err != nil {
		if retryable(err) {
			return workload.BankResult{}, nil, err
		}
		return workload.BankResult{}, nil, unavailable(err)
	}
	return r, []touch{{cmd.From, r.Seq}, {cmd.To, r.Seq}}, nil
}

// refused reports a refusal of the bank's rules, as opposed to a failure of
// the database.
func refused(err error) bool {
	return errors.Is(err, workload.ErrInvalid) || errors.Is(err, workload.ErrNotFound) || errors.Is(err, workload.ErrInsufficientFunds)
}

// transfer moves cmd.Amount inside tx: both rows locked, lower id first,
// the balance checked, the transfer recorded with sequence number seq (0:
// the next the database draws) and both balances changed.
func transfer(ctx context.Context, tx *sql.Tx, cmd workload.BankCmd, seq uint64) (workload.BankResult, error) {
	lo, hi := min(cmd.From, cmd.To), max(cmd.From, cmd.To)
	var bal [2]int64
	for i, id := range [2]uint32{lo, hi} {
		err := tx.QueryRowContext(ctx, "SELECT balance FROM accounts WHERE id = ? FOR UPDATE", id).Scan(&bal[i])
		if errors.Is(err, sql.ErrNoRows) {
			return workload.BankResult{}, workload.ErrNoAccount
		}
		if err != nil {
			return workload.BankResult{}, err
		}
	}
	from, to := bal[0], bal[1]
	if cmd.From == hi {
		from, to = to, from
	}
	if from < cmd.Amount {
		return workload.BankResult{}, workload.ErrInsufficientFunds
	}
	var seqArg any // NULL: the database draws the next one
	if seq != 0 {
		seqArg = seq
	}
	res, err := tx.ExecContext(ctx, "INSERT INTO transfers (seq, from_id, to_id, amount) VALUES (?, ?, ?, ?)", seqArg, cmd.From, cmd.To, cmd.Amount)
	if err != nil {
		return workload.BankResult{}, err
	}
	if seq == 0 {
		id, err := res.LastInsertId()
		if err != nil {
			return workload.BankResult{}, err
		}
		seq = uint64(id)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE accounts SET balance = balance + IF(id = ?, ?, ?), version = ? WHERE id IN (?, ?)",
		cmd.From, -cmd.Amount, cmd.Amount, seq, lo, hi); err != nil {
		return workload.BankResult{}, err
	}
	return workload.BankResult{Seq: seq, FromBalance: from - cmd.Amount, ToBalance: to + cmd.Amount}, nil
}

// applyInTx applies a transfer inside the serialised path's open
// transaction (begun if none is open), with the sequence number the machine
// draws. A deadlock or lock wait timeout rolls the transaction back and
// replays the group it held, which must give the same answers it gave.
// Called with mu held.
func (b *Bank) applyInTx(cmd workload.BankCmd) (workload.BankResult, error) {
	if b.cur.err != nil {
		return workload.BankResult{}, b.cur.err
	}
	for try := 0; ; try++ {
		if err := b.begin(); err != nil {
			return workload.BankResult{}, err
		}
		r, err := transfer(b.ctx, b.cur.tx, cmd, b.nextSeq)
		switch {
		case err == nil:
			b.nextSeq++
			b.cur.applied = append(b.cur.applied, applied{cmd, r})
			b.cur.touched = append(b.cur.touched, touch{cmd.From, r.Seq}, touch{cmd.To, r.Seq})
			return r, nil
		case refused(err):
			return workload.BankResult{}, err
		case retryable(err) && try < maxRetries:
			if err := b.replay(); err != nil {
				return workload.BankResult{}, err
			}
		default:
			return workload.BankResult{}, b.abort(err)
		}
	}
}

// begin opens the group's transaction if it has none. Called with mu held.
func (b *Bank) begin() error {
	if b.cur.tx != nil {
		return nil
	}
	if b.seqStale {
		// A transaction failed: the database may hold more than was
		// counted (a COMMIT whose answer was lost).
		if err := b.loadSeq(b.ctx); err != nil {
			return b.abort(err)
		}
		b.seqStale = false
	}
	tx, err := b.db.BeginTx(b.ctx, nil)
	if err != nil {
		return b.abort(err)
	}
	b.cur.tx, b.cur.seq0 = tx, b.nextSeq
	return nil
}

// replay rolls the open transaction back and applies its group again in a
// new one, with the same sequence numbers. Called with mu held.
func (b *Bank) replay() error {
	done := b.cur.applied
	_ = b.cur.tx.Rollback()
	b.nextSeq = b.cur.seq0
	b.cur = group{}
	if err := b.begin(); err != nil {
		return err
	}
	for _, a := range done {
		r, err := transfer(b.ctx, b.cur.tx, a.cmd, b.nextSeq)
		if err != nil {
			return b.abort(err)
		}
		if r.Seq != a.r.Seq || r.FromBalance != a.r.FromBalance || r.ToBalance != a.r.ToBalance {
			return b.abort(fmt.Errorf("a transfer replayed after a deadlock answered %+v, not %+v: another writer changed the accounts", r, a.r))
		}
		b.nextSeq++
		b.cur.applied = append(b.cur.applied, a)
		b.cur.touched = append(b.cur.touched, touch{a.cmd.From, r.Seq}, touch{a.cmd.To, r.Seq})
	}
	return nil
}

// abort rolls the open transaction back and keeps err (as unavailable) for
// the rest of the group: every later Apply and its Commit return it. Called
// with mu held.
func (b *Bank) abort(err error) error {
	if b.cur.tx != nil {
		_ = b.cur.tx.Rollback()
	}
	b.cur = group{err: unavailable(err)}
	b.seqStale = true
	return b.cur.err
}

// doReset replaces the bank with one made from cfg, excluding every other
// command, and starts a new cache generation.
func (b *Bank) doReset(cfg workload.BankConfig) error {
	if err := cfg.Check(); err != nil {
		return err
	}
	b.reset.Lock()
	defer b.reset.Unlock()
	if err := b.refill(b.ctx, cfg); err != nil {
		return unavailable(err)
	}
	if b.cache != nil {
		b.cache.newEpoch()
	}
	return nil
}

func (b *Bank) invalidate(touched []touch) {
	if b.cache == nil || b.breakInvalidation {
		return
	}
	b.cache.invalidate(b.ctx, touched)
}
