package workload

import (
	"math"
	"sync/atomic"
)

// Bank defaults and limits (docs/design.md §bank, after the ghz bank
// benchmark seed).
const (
	DefaultAccounts       = 1000
	DefaultInitialBalance = 20_000_000
	// MaxAccounts bounds Reset so a request cannot exhaust the server's memory.
	MaxAccounts = 1_000_000
	// HistoryKept is how many transfers each account remembers.
	HistoryKept = 100
	// DefaultHistoryLimit is the number of transfers GetHistory returns for a
	// limit of 0.
	DefaultHistoryLimit = 20
	// MaxHistoryLimit is the largest limit GetHistory accepts; at most
	// HistoryKept transfers exist to return.
	MaxHistoryLimit = 1000
)

// Scenario is how a bank's accounts are funded at reset, after the seed's
// scenarios.
type Scenario uint8

const (
	// ScenarioA funds every account with the initial balance.
	ScenarioA Scenario = iota + 1
	// ScenarioB funds odd accounts; even accounts start at 0.
	ScenarioB
	// ScenarioC starts every account at 0: every transfer is refused.
	ScenarioC
)

// BankConfig describes a bank at reset. Its zero value is the default: 1000
// accounts, scenario A, 20,000,000 each.
type BankConfig struct {
	Scenario       Scenario // 0 means ScenarioA
	Accounts       uint32   // 0 means DefaultAccounts
	InitialBalance int64    // 0 means DefaultInitialBalance
}

func (c BankConfig) withDefaults() BankConfig {
	if c.Scenario == 0 {
		c.Scenario = ScenarioA
	}
	if c.Accounts == 0 {
		c.Accounts = DefaultAccounts
	}
	if c.InitialBalance == 0 {
		c.InitialBalance = DefaultInitialBalance
	}
	return c
}

// Check reports whether NewBank (or a reset) would accept c, without making
// the bank: ErrScenario, ErrAccounts, ErrInitialBalance or nil.
func (c BankConfig) Check() error { return c.withDefaults().validate() }

// validate reports whether c (with defaults applied) describes a bank whose
// total balance fits in an int64, so no transfer can ever overflow.
func (c BankConfig) validate() error {
	switch {
	case c.Scenario < ScenarioA || c.Scenario > ScenarioC:
		return ErrScenario
	case c.Accounts < 1 || c.Accounts > MaxAccounts:
		return ErrAccounts
	case c.InitialBalance < 0 || c.InitialBalance > math.MaxInt64/int64(c.Accounts):
		return ErrInitialBalance
	}
	return nil
}

// BankOp selects what a BankCmd does.
type BankOp uint8

const (
	// BankTransfer moves Amount from From to To.
	BankTransfer BankOp = iota + 1
	// BankBalance returns the balance of From in Balance.
	BankBalance
	// BankHistory returns up to Limit of From's transfers, newest first.
	BankHistory
	// BankReset replaces the whole bank with one made from Config.
	BankReset
	// BankSummary returns Total, MinBalance, Accounts and Seq.
	BankSummary
)

// BankCmd is a command for Bank. Only the fields its Op names are read.
type BankCmd struct {
	Op       BankOp
	From, To uint32
	Amount   int64
	Limit    uint32
	Config   BankConfig
	// ReqID is a transfer's request id, given by its caller: a machine
	// that keeps request ids (the bank over a database, routed-owner)
	// applies a transfer with a given id at most once and answers a retry
	// with the first answer. Empty: no id. The in-memory bank ignores it.
	ReqID string
}

// Transfer is one applied transfer.
type Transfer struct {
	Seq      uint64
	From, To uint32
	Amount   int64
}

// BankResult is what a Bank command returns. History is a fresh slice.
type BankResult struct {
	Seq         uint64 // Transfer: the transfer's sequence number; Summary: transfers so far
	FromBalance int64  // Transfer: sender's new balance
	ToBalance   int64  // Transfer: receiver's new balance
	Balance     int64  // Balance
	History     []Transfer
	Total       int64  // Summary: sum of all balances
	MinBalance  int64  // Summary: smallest balance
	Accounts    uint32 // Summary
}

type account struct {
	balance int64
	// history is a ring of the last HistoryKept transfers; next is where the
	// next one goes once the ring is full. It grows on demand, so a large
	// bank with few transfers stays small.
	history []Transfer
	next    int
}

func (a *account) record(t Transfer) {
	if len(a.history) < HistoryKept {
		a.history = append(a.history, t)
		return
	}
	a.history[a.next] = t
	a.next = (a.next + 1) % HistoryKept
}

// newest returns up to n transfers, newest first, in a fresh slice.
func (a *account) newest(n int) []Transfer {
	n = min(n, len(a.history))
	out := make([]Transfer, n)
	// The newest is just before next (len-1 while the ring is not full).
	i := a.next - 1
	if len(a.history) < HistoryKept {
		i = len(a.history) - 1
	}
	for k := range out {
		if i < 0 {
			i += len(a.history)
		}
		out[k] = a.history[i]
		i--
	}
	return out
}

// Bank holds accounts numbered 1..N with int64 balances, a global transfer
// sequence and each account's last HistoryKept transfers.
//
// Bank implements the store package's optional capabilities: ReadOnly
// (balances, histories and summaries only read) and Sharded (account id
// modulo the shard count; a transfer touches its two accounts' shards, a
// summary or reset every shard). Under sharding, transfers between disjoint
// shards run at once; the global sequence is then drawn with an atomic add
// while both accounts' shards are held, so it stays unique, and increasing
// along every account's history (docs/decisions.md).
type Bank struct {
	accounts []account // accounts[id-1]
	seq      atomic.Uint64
	shards   uint32 // 1 until SetShards
}

// NewBank returns a bank made from cfg, or an error wrapping ErrInvalid.
func NewBank(cfg BankConfig) (*Bank, error) {
	b := &Bank{shards: 1}
	if err := b.reset(cfg); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *Bank) reset(cfg BankConfig) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	b.accounts = make([]account, cfg.Accounts)
	for i := range b.accounts {
		id := i + 1
		switch {
		case cfg.Scenario == ScenarioC, cfg.Scenario == ScenarioB && id%2 == 0:
		default:
			b.accounts[i].balance = cfg.InitialBalance
		}
	}
	b.seq.Store(0)
	return nil
}

func (b *Bank) account(id uint32) (*account, error) {
	if id < 1 || int(id) > len(b.accounts) {
		return nil, ErrNoAccount
	}
	return &b.accounts[id-1], nil
}

// Apply runs cmd. Checks run in the order of the status codes' precedence:
// malformed, then unknown account, then insufficient funds.
func (b *Bank) Apply(cmd BankCmd) (BankResult, error) {
	switch cmd.Op {
	case BankTransfer:
		return b.transfer(cmd.From, cmd.To, cmd.Amount)
	case BankBalance:
		a, err := b.account(cmd.From)
		if err != nil {
			return BankResult{}, err
		}
		return BankResult{Balance: a.balance}, nil
	case BankHistory:
		if cmd.Limit > MaxHistoryLimit {
			return BankResult{}, ErrHistoryLimit
		}
		a, err := b.account(cmd.From)
		if err != nil {
			return BankResult{}, err
		}
		limit := int(cmd.Limit)
		if limit == 0 {
			limit = DefaultHistoryLimit
		}
		return BankResult{History: a.newest(limit)}, nil
	case BankReset:
		return BankResult{}, b.reset(cmd.Config)
	case BankSummary:
		r := BankResult{Seq: b.seq.Load(), Accounts: uint32(len(b.accounts)), MinBalance: math.MaxInt64}
		for i := range b.accounts {
			r.Total += b.accounts[i].balance
			r.MinBalance = min(r.MinBalance, b.accounts[i].balance)
		}
		return r, nil
	default:
		return BankResult{}, ErrUnknownOp
	}
}

func (b *Bank) transfer(from, to uint32, amount int64) (BankResult, error) {
	switch {
	case amount <= 0:
		return BankResult{}, ErrAmount
	case from == to:
		return BankResult{}, ErrSameAccount
	}
	src, err := b.account(from)
	if err != nil {
		return BankResult{}, err
	}
	dst, err := b.account(to)
	if err != nil {
		return BankResult{}, err
	}
	if src.balance < amount {
		return BankResult{}, ErrInsufficientFunds
	}
	// Cannot overflow: validate bounds the bank's total by MaxInt64 and
	// transfers conserve it.
	src.balance -= amount
	dst.balance += amount
	t := Transfer{Seq: b.seq.Add(1), From: from, To: to, Amount: amount}
	src.record(t)
	dst.record(t)
	return BankResult{Seq: t.Seq, FromBalance: src.balance, ToBalance: dst.balance}, nil
}

// ReadOnly reports whether cmd only reads (store.ReadOnly).
func (b *Bank) ReadOnly(cmd BankCmd) bool {
	switch cmd.Op {
	case BankBalance, BankHistory, BankSummary:
		return true
	}
	return false
}

// SetShards splits the accounts into n shards by id modulo n (store.Sharded).
// The state needs no change: each account is its own memory.
func (b *Bank) SetShards(n int) { b.shards = uint32(max(n, 1)) }

// ShardsOf reports the shards cmd touches (store.Sharded): its one or two
// accounts' shards, lower first, or every shard (-1) for a summary or reset.
// An account out of range maps to some shard and is refused by Apply there.
func (b *Bank) ShardsOf(cmd BankCmd) (int, int) {
	switch cmd.Op {
	case BankTransfer:
		x, y := int(cmd.From%b.shards), int(cmd.To%b.shards)
		return min(x, y), max(x, y)
	case BankBalance, BankHistory:
		x := int(cmd.From % b.shards)
		return x, x
	case BankReset, BankSummary:
		return -1, -1
	}
	return 0, 0
}
