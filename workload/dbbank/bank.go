// Package dbbank is the bank workload with its state in a MariaDB (or MySQL)
// database instead of memory, and an optional Redis cache-aside for balances
// and histories in front of it.
//
// A Bank answers every command as workload.Bank does, with the same
// refusals, and is a store.Machine with two ways in:
//
//   - Apply and Commit, for the designs that serialise commands in the
//     process (the lock and owner designs, and the batching ones). A
//     transfer runs inside the machine's open transaction, which Commit
//     commits: the lock and owner designs commit once per transfer, the
//     batching designs (inputQ-batch, combining) once per group.
//   - ApplyTx, for the db-rowlock design, which serialises nothing: every
//     call is a transaction of its own, from a pool of Config.Pool
//     connections, and the database's row locks order the transfers that
//     share an account.
//
// Either way a transfer locks its two accounts' rows with SELECT … FOR
// UPDATE, lower id first, checks the balance inside the transaction, records
// the transfer and moves the money. A deadlock (error 1213) or lock wait
// timeout (1205) rolls the transaction back and runs it again; the caller
// never sees it. Any other failure of the database — it is gone, it was
// killed mid-transaction — is workload.ErrUnavailable, and nothing the
// caller was told succeeded is lost: an answer is given only after COMMIT.
//
// With a cache, a read looks in Redis first and fills it from the database
// on a miss; every transfer invalidates its accounts' entries after it
// commits and before it is answered (cache.go says how a slow reader cannot
// put an older value back).
package dbbank

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/locklab/locklab/backend"
	"github.com/locklab/locklab/workload"
)

// DefaultPool is the database connections a Bank keeps open by default
// (package backend names it, for the server's -db-pool).
const DefaultPool = backend.DefaultPool

// pingTimeout bounds how long Open waits for the database and the cache to
// answer.
const pingTimeout = 5 * time.Second

// maxRetries bounds how often a transaction that met a deadlock or a lock
// wait timeout is run again before the failure is surfaced as unavailable.
const maxRetries = 20

// Config says where a Bank's state lives.
type Config struct {
	// DSN is the database's data source name, as github.com/go-sql-driver/mysql
	// reads it, e.g. "root@unix(/tmp/db/sock)/locklab" (required).
	DSN string
	// Pool is the most connections open at once; 0 means DefaultPool.
	Pool int
	// RedisAddr is the cache's host:port; empty means no cache.
	RedisAddr string
	// Bank seeds a database whose tables are empty or missing; a database
	// that holds a bank keeps it (as a write-ahead log does).
	Bank workload.BankConfig
	// Owner names this replica in the ownership table (routed-owner,
	// owned.go); empty means the host's name and the process id.
	Owner string
	// NoFencing makes routed-owner's write-through skip the epoch check: a
	// control for the tests only, to show what the check prevents (a
	// replica that lost its accounts overwrites the new owner's changes).
	NoFencing bool
}

// Bank is the bank over a database (the package doc).
type Bank struct {
	db    *sql.DB
	cache *cache // nil: no cache
	ctx   context.Context
	stop  context.CancelFunc

	// reset excludes every other command while the tables are refilled; the
	// designs that serialise hold it anyway, db-rowlock's callers share it.
	reset sync.RWMutex
	// accounts is the number of accounts, 1..accounts; written under reset.
	accounts atomic.Uint32

	// mu orders Apply's and Commit's use of cur: inputQ-batch commits one
	// group on its syncer while its owner applies the next (a Commit may
	// take transfers applied after the batch it was called for, which are
	// answered only after a later Commit, never half a transfer).
	mu sync.Mutex
	// cur is the serialised path's open group (Apply … Commit).
	cur group
	// nextSeq is the next transfer's sequence number on the serialised
	// path, which draws them itself: it is the database's only writer.
	nextSeq  uint64
	seqStale bool // a transaction failed: read the sequence again before the next

	// breakInvalidation skips the cache invalidation (a test's control).
	breakInvalidation bool

	// owner and noFencing are Config's Owner and NoFencing.
	owner     string
	noFencing bool
	// owned is routed-owner's state: the accounts this replica owns, with
	// the epoch it owns each at. Only the owner goroutine touches it.
	owned map[uint32]*ownedAccount
}

// group is the transfers of one transaction of the serialised path.
type group struct {
	tx      *sql.Tx
	err     error     // the group's failure: later Applies and its Commit return it
	applied []applied // to replay after a deadlock
	touched []touch   // accounts changed, with their new versions
	seq0    uint64    // nextSeq when tx began
}

// applied is a transfer applied in the open transaction, and its result.
type applied struct {
	cmd workload.BankCmd
	r   workload.BankResult
}

// touch is an account a committed transfer changed, and its new version.
type touch struct {
	id      uint32
	version uint64
}

var errNoDSN = errors.New("dbbank: no database DSN")

// Open connects to the database (and the cache), creates the tables if
// they are missing, seeds an empty database from cfg.Bank, and returns the
// bank. A database or cache that does not answer within a few seconds is an
// error naming it.
func Open(ctx context.Context, cfg Config) (*Bank, error) {
	if cfg.DSN == "" {
		return nil, errNoDSN
	}
	if cfg.Pool < 0 {
		return nil, fmt.Errorf("dbbank: pool %d: want >= 0 (0: %d)", cfg.Pool, DefaultPool)
	}
	if err := cfg.Bank.Check(); err != nil {
		return nil, err
	}
	mc, err := mysql.ParseDSN(cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("dbbank: database DSN %q: %w", cfg.DSN, err)
	}
	// Arguments are put into the statement text by the driver: one round
	// trip per statement, not a prepare, an execute and a close.
	mc.InterpolateParams = true
	mc.Timeout = cmp.Or(mc.Timeout, pingTimeout)
	if mc.Params == nil {
		mc.Params = map[string]string{}
	}
	// A transfer waits for another's row lock at most this long before it
	// is rolled back and run again (maxRetries), not InnoDB's 50 s.
	mc.Params["innodb_lock_wait_timeout"] = "5"
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, fmt.Errorf("dbbank: database DSN %q: %w", cfg.DSN, err)
	}
	pool := cmp.Or(cfg.Pool, DefaultPool)
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(pool)
	db.SetMaxIdleConns(pool)
	bctx, stop := context.WithCancel(context.Background())
	b := &Bank{db: db, ctx: bctx, stop: stop, owner: cfg.Owner, noFencing: cfg.NoFencing, owned: map[uint32]*ownedAccount{}}
	if b.owner == "" {
		b.owner = defaultOwner()
	}
	fail := func(err error) (*Bank, error) {
		_ = b.Close()
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		return fail(fmt.Errorf("%w: the database at %s (%s) does not answer: %w", workload.ErrUnavailable, mc.Addr, mc.Net, err))
	}
	if err := b.migrate(pctx, cfg.Bank); err != nil {
		return fail(fmt.Errorf("%w: setting up the database at %s: %w", workload.ErrUnavailable, mc.Addr, err))
	}
	if cfg.RedisAddr != "" {
		c, err := newCache(pctx, cfg.RedisAddr, pool)
		if err != nil {
			return fail(err)
		}
		b.cache = c
	}
	return b, nil
}

// The tables. An account's version is the sequence number of the last
// transfer that changed it (0: none yet); the cache keeps it beside every
// value it holds.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS accounts (
		id INT UNSIGNED NOT NULL PRIMARY KEY,
		balance BIGINT NOT NULL,
		version BIGINT UNSIGNED NOT NULL DEFAULT 0
	) ENGINE=InnoDB`,
	`CREATE TABLE IF NOT EXISTS transfers (
		seq BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
		from_id INT UNSIGNED NOT NULL,
		to_id INT UNSIGNED NOT NULL,
		amount BIGINT NOT NULL,
		KEY by_from (from_id, seq),
		KEY by_to (to_id, seq)
	) ENGINE=InnoDB`,
	ownersTable,
	requestsTable,
}

func (b *Bank) migrate(ctx context.Context, seed workload.BankConfig) error {
	for _, s := range schema {
		if _, err := b.db.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	var n uint32
	if err := b.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM accounts").Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return b.refill(ctx, seed)
	}
	b.accounts.Store(n)
	return b.loadSeq(ctx)
}

// loadSeq sets the serialised path's next sequence number past every
// transfer recorded, never back: a number drawn for a transaction that
// failed is a gap.
func (b *Bank) loadSeq(ctx context.Context) error {
	var last uint64
	if err := b.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(seq), 0) FROM transfers").Scan(&last); err != nil {
		return err
	}
	b.nextSeq = max(b.nextSeq, last+1)
	return nil
}

// refill replaces the bank with a new one made from cfg: the tables emptied,
// the accounts inserted a thousand rows a statement.
func (b *Bank) refill(ctx context.Context, cfg workload.BankConfig) error {
	if err := cfg.Check(); err != nil {
		return err
	}
	seed, err := workload.NewBank(cfg) // the balances a reset gives, from the one rule
	if err != nil {
		return err
	}
	for _, t := range []string{"transfers", "accounts", "requests"} {
		if _, err := b.db.ExecContext(ctx, "TRUNCATE TABLE "+t); err != nil {
			return err
		}
	}
	// Every replica's ownership ends with the old bank: epochs go up, never
	// back, so that no replica's cached epoch can match a new owner's.
	if _, err := b.db.ExecContext(ctx, "UPDATE owners SET epoch = epoch + 1, owner = ''"); err != nil {
		return err
	}
	clear(b.owned)
	sum, err := seed.Apply(workload.BankCmd{Op: workload.BankSummary})
	if err != nil {
		return err
	}
	const chunk = 1000
	for lo := uint32(1); lo <= sum.Accounts; lo += chunk {
		hi := min(sum.Accounts, lo+chunk-1)
		q := make([]byte, 0, 64+int(hi-lo+1)*24)
		q = append(q, "INSERT INTO accounts (id, balance) VALUES "...)
		for id := lo; id <= hi; id++ {
			r, err := seed.Apply(workload.BankCmd{Op: workload.BankBalance, From: id})
			if err != nil {
				return err
			}
			if id > lo {
				q = append(q, ',')
			}
			q = fmt.Appendf(q, "(%d,%d)", id, r.Balance)
		}
		if _, err := b.db.ExecContext(ctx, string(q)); err != nil {
			return err
		}
	}
	b.accounts.Store(sum.Accounts)
	b.mu.Lock()
	b.nextSeq, b.seqStale = 1, false // TRUNCATE started the sequence again
	b.mu.Unlock()
	return nil
}

// Close closes the connections to the database and the cache. Call it once
// no command runs.
func (b *Bank) Close() error {
	b.stop()
	err := b.db.Close()
	if b.cache != nil {
		err = errors.Join(err, b.cache.close())
	}
	return err
}

// ReadOnly reports whether cmd only reads (store.ReadOnly): balances,
// histories and summaries, which read outside any transaction and may run
// side by side.
func (b *Bank) ReadOnly(cmd workload.BankCmd) bool {
	switch cmd.Op {
	case workload.BankBalance, workload.BankHistory, workload.BankSummary:
		return true
	}
	return false
}

// unavailable wraps a failure of the database.
func unavailable(err error) error {
	if err == nil || errors.Is(err, workload.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: database: %w", workload.ErrUnavailable, err)
}

// retryable reports a deadlock or a lock wait timeout: the transaction was
// (or must be) rolled back and may simply run again.
func retryable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205)
}
