package dbbank

import (
	"database/sql"
	"errors"
	"fmt"
	"os"

	"github.com/go-sql-driver/mysql"

	"github.com/locklab/locklab/workload"
)

// The routed-owner design (store.Owned). Several replicas share one
// database, and a balancer routes every call about one account to one
// replica, which serves the account from memory. Routing alone is not
// enough: while a replica is paused, or while the balancer's view of the
// replicas changes, two replicas may each believe they own an account. The
// database therefore keeps, per account, its owner and an epoch:
//
//   - A replica takes an account over on first use by bumping its epoch in
//     a transaction that also reads the balance into memory (own).
//   - Every change is written through before it is answered, in a
//     transaction that first locks the accounts' ownership rows and checks
//     that their epochs are still the ones this replica took them at. A
//     replica taken over since finds a higher epoch: the transaction is
//     rolled back, the replica drops the accounts from memory and answers
//     workload.ErrFenced, and the caller tries again (on whichever replica
//     the balancer now picks, which takes the account over and reloads it).
//   - A transfer between two accounts is one such transaction over both:
//     the replica that receives it takes both accounts over, so a transfer
//     whose accounts the balancer routes to two replicas moves the second
//     account from its owner, whose next write to it is fenced.
//   - A transfer may carry a request id (BankCmd.ReqID). The id is stored
//     with the transfer in the same transaction, under a unique key: a
//     retry of a call whose answer was lost (the replica killed after its
//     COMMIT) finds it and gets the first answer, never a second transfer.
//
// Reads of an owned account are answered from memory: a replica paused past
// a takeover may answer an old balance until its next write is fenced.

// ownersTable holds each account's owner and epoch. An epoch only goes up:
// a takeover and a reset of the bank each add one.
const ownersTable = `CREATE TABLE IF NOT EXISTS owners (
		account INT UNSIGNED NOT NULL PRIMARY KEY,
		owner VARBINARY(128) NOT NULL,
		epoch BIGINT UNSIGNED NOT NULL
	) ENGINE=InnoDB`

// requestsTable holds the answer of every transfer that came with a request
// id, written in the transfer's own transaction.
const requestsTable = `CREATE TABLE IF NOT EXISTS requests (
		req_id VARBINARY(128) NOT NULL PRIMARY KEY,
		seq BIGINT UNSIGNED NOT NULL,
		from_balance BIGINT NOT NULL,
		to_balance BIGINT NOT NULL
	) ENGINE=InnoDB`

// MaxOwner is the longest replica name the ownership table holds, in bytes.
const MaxOwner = 128

// MaxReqID is the longest request id a transfer may carry, in bytes.
const MaxReqID = 128

// ErrReqID refuses a request id longer than MaxReqID.
var ErrReqID = fmt.Errorf("%w: request id must be at most %d bytes", workload.ErrInvalid, MaxReqID)

// ownedAccount is an account this replica owns: its balance, and the epoch
// it was taken over at.
type ownedAccount struct {
	balance int64
	epoch   uint64
}

func defaultOwner() string {
	h, err := os.Hostname()
	if err != nil {
		h = "replica"
	}
	return fmt.Sprintf("%s/%d", h, os.Getpid())
}

// Owner is the name this replica writes into the ownership table.
func (b *Bank) Owner() string { return b.owner }

// ApplyOwned runs cmd for the routed-owner design, on its one owner
// goroutine.
func (b *Bank) ApplyOwned(cmd workload.BankCmd) (workload.BankResult, error) {
	switch cmd.Op {
	case workload.BankTransfer:
		if err := b.check(cmd); err != nil {
			return workload.BankResult{}, err
		}
		if len(cmd.ReqID) > MaxReqID {
			return workload.BankResult{}, ErrReqID
		}
		b.reset.RLock()
		defer b.reset.RUnlock()
		if !b.exists(cmd.From) || !b.exists(cmd.To) {
			return workload.BankResult{}, workload.ErrNoAccount
		}
		for try := 0; ; try++ {
			r, err := b.transferOwned(cmd)
			if retryable(err) && try < maxRetries {
				continue
			}
			if retryable(err) {
				return workload.BankResult{}, unavailable(err)
			}
			return r, err
		}
	case workload.BankBalance:
		b.reset.RLock()
		defer b.reset.RUnlock()
		if !b.exists(cmd.From) {
			return workload.BankResult{}, workload.ErrNoAccount
		}
		a, err := b.ownWithRetry(cmd.From)
		if err != nil {
			return workload.BankResult{}, err
		}
		return workload.BankResult{Balance: a.balance}, nil
	case workload.BankReset:
		return workload.BankResult{}, b.doReset(cmd.Config)
	default:
		// Histories and summaries are read from the database: every
		// change is there before it is answered.
		return b.read(cmd)
	}
}

func (b *Bank) ownWithRetry(id uint32) (*ownedAccount, error) {
	for try := 0; ; try++ {
		a, err := b.own(id)
		if retryable(err) && try < maxRetries {
			continue
		}
		if refused(err) {
			return nil, err
		}
		if err != nil {
			return nil, unavailable(err)
		}
		return a, nil
	}
}

// own returns the account from memory, or takes it over: its epoch bumped
// and its balance read in one transaction, which holds the ownership row's
// lock so that no write-through of a former owner can come between.
func (b *Bank) own(id uint32) (*ownedAccount, error) {
	if a, ok := b.owned[id]; ok {
		return a, nil
	}
	tx, err := b.db.BeginTx(b.ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if _, err := tx.ExecContext(b.ctx, "INSERT INTO owners (account, owner, epoch) VALUES (?, ?, 1) ON DUPLICATE KEY UPDATE owner = VALUES(owner), epoch = epoch + 1", id, b.owner); err != nil {
		return nil, err
	}
	a := &ownedAccount{}
	if err := tx.QueryRowContext(b.ctx, "SELECT epoch FROM owners WHERE account = ?", id).Scan(&a.epoch); err != nil {
		return nil, err
	}
	err = tx.QueryRowContext(b.ctx, "SELECT balance FROM accounts WHERE id = ? FOR UPDATE", id).Scan(&a.balance)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, workload.ErrNoAccount
	}
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	b.owned[id] = a
	return a, nil
}

// transferOwned applies cmd to the owned accounts and writes it through,
// fenced (the package's routed-owner notes). Memory changes only after the
// COMMIT succeeded; a failure whose outcome is unknown drops both accounts,
// to be reloaded from the database.
func (b *Bank) transferOwned(cmd workload.BankCmd) (workload.BankResult, error) {
	lo, hi := min(cmd.From, cmd.To), max(cmd.From, cmd.To)
	for _, id := range [2]uint32{lo, hi} {
		if _, err := b.own(id); err != nil {
			if retryable(err) || refused(err) {
				return workload.BankResult{}, err
			}
			return workload.BankResult{}, unavailable(err)
		}
	}
	from, to := b.owned[cmd.From], b.owned[cmd.To]
	tx, err := b.db.BeginTx(b.ctx, nil)
	if err != nil {
		return workload.BankResult{}, unavailable(err)
	}
	fail := func(err error) (workload.BankResult, error) {
		_ = tx.Rollback()
		if retryable(err) || refused(err) || errors.Is(err, workload.ErrFenced) {
			return workload.BankResult{}, err
		}
		b.drop(lo, hi)
		return workload.BankResult{}, unavailable(err)
	}
	if !b.noFencing {
		if err := b.fence(tx, lo, hi); err != nil {
			return fail(err)
		}
	}
	if cmd.ReqID != "" {
		r, found, err := answered(tx, b, cmd.ReqID)
		if err != nil || found {
			_ = tx.Rollback()
			if err != nil {
				return fail(err)
			}
			return r, nil
		}
	}
	if from.balance < cmd.Amount {
		_ = tx.Rollback()
		return workload.BankResult{}, workload.ErrInsufficientFunds
	}
	res, err := tx.ExecContext(b.ctx, "INSERT INTO transfers (from_id, to_id, amount) VALUES (?, ?, ?)", cmd.From, cmd.To, cmd.Amount)
	if err != nil {
		return fail(err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fail(err)
	}
	r := workload.BankResult{Seq: uint64(id), FromBalance: from.balance - cmd.Amount, ToBalance: to.balance + cmd.Amount}
	// The balances written are this replica's, not balance ± amount: a
	// write-through of the state the owner holds. Unfenced, a late write
	// from a former owner would overwrite the new owner's changes.
	for _, w := range [2]struct {
		id  uint32
		bal int64
	}{{cmd.From, r.FromBalance}, {cmd.To, r.ToBalance}} {
		if _, err := tx.ExecContext(b.ctx, "UPDATE accounts SET balance = ?, version = ? WHERE id = ?", w.bal, r.Seq, w.id); err != nil {
			return fail(err)
		}
	}
	if cmd.ReqID != "" {
		_, err := tx.ExecContext(b.ctx, "INSERT INTO requests (req_id, seq, from_balance, to_balance) VALUES (?, ?, ?, ?)", cmd.ReqID, r.Seq, r.FromBalance, r.ToBalance)
		if duplicate(err) {
			// A retry of the same request committed on another replica
			// while this one ran: its answer stands, this one is undone,
			// and the accounts, which that replica changed, are reloaded
			// at their next use.
			_ = tx.Rollback()
			b.drop(lo, hi)
			r, found, err := answered(b.db, b, cmd.ReqID)
			if err == nil && !found {
				err = fmt.Errorf("request %q: duplicate, then not found", cmd.ReqID)
			}
			if err != nil {
				return workload.BankResult{}, unavailable(err)
			}
			return r, nil
		}
		if err != nil {
			return fail(err)
		}
	}
	if err := tx.Commit(); err != nil {
		if retryable(err) {
			return workload.BankResult{}, err
		}
		b.drop(lo, hi) // the COMMIT may have happened
		return workload.BankResult{}, unavailable(err)
	}
	from.balance, to.balance = r.FromBalance, r.ToBalance
	b.invalidate([]touch{{cmd.From, r.Seq}, {cmd.To, r.Seq}})
	return r, nil
}

// fence locks the ownership rows of lo and hi (lower first) and checks that
// this replica still owns both at the epochs it took them at. A takeover
// waits for the lock, so it cannot come between the check and the COMMIT.
// Fenced, the replica drops both accounts from memory.
func (b *Bank) fence(tx *sql.Tx, lo, hi uint32) error {
	rows, err := tx.QueryContext(b.ctx, "SELECT account, epoch FROM owners WHERE account IN (?, ?) ORDER BY account FOR UPDATE", lo, hi)
	if err != nil {
		return err
	}
	defer rows.Close()
	seen := 0
	stale := false
	for rows.Next() {
		var id uint32
		var epoch uint64
		if err := rows.Scan(&id, &epoch); err != nil {
			return err
		}
		seen++
		if a, ok := b.owned[id]; !ok || a.epoch != epoch {
			stale = true
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if stale || seen != 2 {
		b.drop(lo, hi)
		return fmt.Errorf("%w: accounts %d and %d were taken over", workload.ErrFenced, lo, hi)
	}
	return nil
}

// drop forgets accounts: the next use takes them over and reloads them.
func (b *Bank) drop(ids ...uint32) {
	for _, id := range ids {
		delete(b.owned, id)
	}
}

// answered looks up the answer stored for a request id.
func answered(q querier, b *Bank, reqID string) (workload.BankResult, bool, error) {
	var r workload.BankResult
	err := q.QueryRowContext(b.ctx, "SELECT seq, from_balance, to_balance FROM requests WHERE req_id = ?", reqID).Scan(&r.Seq, &r.FromBalance, &r.ToBalance)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	return r, err == nil, err
}

// duplicate reports a duplicate key (error 1062).
func duplicate(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1062
}
