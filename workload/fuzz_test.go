package workload_test

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/cmdgen"
	"github.com/locklab/locklab/workload"
)

// The fuzz targets run any sequence of commands, valid or not, through a
// machine and through a model written plainly from docs/design.md §workloads
// and docs/design.md §api (big integers instead of overflow checks, whole
// histories instead of rings), and require the same result or the same
// refusal for every command. After a refusal they compare the whole state: a
// refused command changes nothing.
// `make fuzz` runs them; `go test` runs their seeds and testdata/fuzz.

// sameErr requires got to be exactly want (both nil, or the same sentinel).
func sameErr(t *testing.T, want, got error, step int, cmd any) {
	t.Helper()
	require.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "step %d, %+v", step, cmd)
	require.ErrorIs(t, got, want, "step %d, %+v", step, cmd)
}

// --- counter ---------------------------------------------------------------------

type counterModel struct{ v int64 }

func (m *counterModel) apply(c workload.CounterCmd) (int64, error) {
	switch c.Op {
	case workload.CounterIncrement:
		if c.Delta < 0 {
			return 0, workload.ErrNegativeDelta
		}
		sum := new(big.Int).Add(big.NewInt(m.v), big.NewInt(c.Delta))
		if !sum.IsInt64() {
			return 0, workload.ErrCounterOverflow
		}
		m.v = sum.Int64()
		return m.v, nil
	case workload.CounterGet:
		return m.v, nil
	case workload.CounterReset:
		m.v = 0
		return 0, nil
	}
	return 0, workload.ErrUnknownOp
}

func FuzzCounter(f *testing.F) {
	f.Add([]byte{1, 0, 5, 2, 0})                         // increment 5, get
	f.Add([]byte{1, 2, 0, 1, 0, 1})                      // MaxInt64, then +1 overflows
	f.Add([]byte{1, 0, 0xff, 3, 0, 4, 0})                // negative delta, reset, unknown op
	f.Add([]byte{0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 1, 3, 0}) // unknown op 0, full int64, MinInt64
	f.Fuzz(func(t *testing.T, data []byte) {
		c, m := workload.NewCounter(), &counterModel{}
		for i, cmd := range cmdgen.Counter(data) {
			want, wantErr := m.apply(cmd)
			got, err := c.Apply(cmd)
			sameErr(t, wantErr, err, i, cmd)
			require.Equal(t, want, got, "step %d, %+v", i, cmd)
			v, err := c.Apply(workload.CounterCmd{Op: workload.CounterGet})
			require.NoError(t, err)
			require.Equal(t, m.v, v, "state after step %d, %+v", i, cmd)
		}
	})
}

// --- bank ------------------------------------------------------------------------

type bankModel struct {
	balances []int64               // balances[id-1]
	history  [][]workload.Transfer // every transfer of each account, oldest first
	seq      uint64
}

func newBankModel(cfg workload.BankConfig) *bankModel {
	m := &bankModel{}
	if err := m.reset(cfg); err != nil {
		panic(err)
	}
	return m
}

func (m *bankModel) reset(cfg workload.BankConfig) error {
	if cfg.Scenario == 0 {
		cfg.Scenario = workload.ScenarioA
	}
	if cfg.Accounts == 0 {
		cfg.Accounts = workload.DefaultAccounts
	}
	if cfg.InitialBalance == 0 {
		cfg.InitialBalance = workload.DefaultInitialBalance
	}
	total := new(big.Int).Mul(big.NewInt(cfg.InitialBalance), big.NewInt(int64(cfg.Accounts)))
	switch {
	case cfg.Scenario > workload.ScenarioC:
		return workload.ErrScenario
	case cfg.Accounts > workload.MaxAccounts:
		return workload.ErrAccounts
	case cfg.InitialBalance < 0 || !total.IsInt64():
		return workload.ErrInitialBalance
	}
	m.balances = make([]int64, cfg.Accounts)
	m.history = make([][]workload.Transfer, cfg.Accounts)
	for i := range m.balances {
		funded := cfg.Scenario == workload.ScenarioA || cfg.Scenario == workload.ScenarioB && (i+1)%2 == 1
		if funded {
			m.balances[i] = cfg.InitialBalance
		}
	}
	m.seq = 0
	return nil
}

func (m *bankModel) exists(id uint32) bool { return id >= 1 && int(id) <= len(m.balances) }

func (m *bankModel) apply(c workload.BankCmd) (workload.BankResult, error) {
	var none workload.BankResult
	switch c.Op {
	case workload.BankTransfer:
		switch {
		case c.Amount <= 0:
			return none, workload.ErrAmount
		case c.From == c.To:
			return none, workload.ErrSameAccount
		case !m.exists(c.From) || !m.exists(c.To):
			return none, workload.ErrNoAccount
		case m.balances[c.From-1] < c.Amount:
			return none, workload.ErrInsufficientFunds
		}
		m.balances[c.From-1] -= c.Amount
		m.balances[c.To-1] += c.Amount
		m.seq++
		t := workload.Transfer{Seq: m.seq, From: c.From, To: c.To, Amount: c.Amount}
		m.history[c.From-1] = append(m.history[c.From-1], t)
		m.history[c.To-1] = append(m.history[c.To-1], t)
		return workload.BankResult{Seq: m.seq, FromBalance: m.balances[c.From-1], ToBalance: m.balances[c.To-1]}, nil
	case workload.BankBalance:
		if !m.exists(c.From) {
			return none, workload.ErrNoAccount
		}
		return workload.BankResult{Balance: m.balances[c.From-1]}, nil
	case workload.BankHistory:
		switch {
		case c.Limit > workload.MaxHistoryLimit:
			return none, workload.ErrHistoryLimit
		case !m.exists(c.From):
			return none, workload.ErrNoAccount
		}
		limit := int(c.Limit)
		if limit == 0 {
			limit = workload.DefaultHistoryLimit
		}
		all := m.history[c.From-1]
		n := min(limit, workload.HistoryKept, len(all))
		out := slices.Clone(all[len(all)-n:])
		slices.Reverse(out)
		if out == nil {
			out = []workload.Transfer{}
		}
		return workload.BankResult{History: out}, nil
	case workload.BankReset:
		return none, m.reset(c.Config)
	case workload.BankSummary:
		r := workload.BankResult{Seq: m.seq, Accounts: uint32(len(m.balances)), MinBalance: math.MaxInt64}
		for _, b := range m.balances {
			r.Total += b
			r.MinBalance = min(r.MinBalance, b)
		}
		return r, nil
	}
	return none, workload.ErrUnknownOp
}

// requireSameBank compares every account's balance and history, and the
// summary, of the machine and the model.
func requireSameBank(t *testing.T, b *workload.Bank, m *bankModel, step int) {
	t.Helper()
	for _, op := range []workload.BankOp{workload.BankSummary} {
		want, _ := m.apply(workload.BankCmd{Op: op})
		got, err := b.Apply(workload.BankCmd{Op: op})
		require.NoError(t, err)
		require.Equal(t, want, got, "summary after step %d", step)
	}
	for id := uint32(1); int(id) <= len(m.balances); id++ {
		for _, cmd := range []workload.BankCmd{{Op: workload.BankBalance, From: id}, {Op: workload.BankHistory, From: id, Limit: workload.MaxHistoryLimit}} {
			want, _ := m.apply(cmd)
			got, err := b.Apply(cmd)
			require.NoError(t, err)
			require.Equal(t, want, got, "account %d after step %d", id, step)
		}
	}
}

func FuzzBank(f *testing.F) {
	f.Add([]byte{1, 0, 1, 0, 10, 2, 0, 3, 0, 0, 0, 5, 0})           // transfer 1→2 10, balance, history, summary
	f.Add([]byte{1, 0, 1, 0, 0, 0})                                 // amount 0: refused
	f.Add([]byte{1, 0, 0, 0, 0, 250})                               // from == to
	f.Add([]byte{1, 245, 1, 0, 10, 1, 0, 250, 0, 200})              // account 0, account n+1
	f.Add([]byte{1, 1, 0, 0, 101})                                  // 2 → 1, more than 2 holds (scenario B: even at 0)
	f.Add([]byte{3, 0, 0, 0, 3, 0, 232, 3})                         // history limit 1000 and 1001
	f.Add([]byte{4, 1, 2, 0, 0, 5, 4, 4, 0, 0, 0, 4, 1, 252, 0, 0}) // resets: valid, bad scenario, too many accounts
	f.Add([]byte{4, 1, 1, 2, 0, 255, 1, 0, 1, 2, 0, 0})             // one account at MaxInt64, then a transfer to 2 (none)
	f.Add([]byte{6, 0, 0})                                          // unknown op
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := workload.NewBank(cmdgen.SmallBank)
		require.NoError(t, err)
		m := newBankModel(cmdgen.SmallBank)
		for i, cmd := range cmdgen.Bank(data) {
			want, wantErr := m.apply(cmd)
			got, err := b.Apply(cmd)
			sameErr(t, wantErr, err, i, cmd)
			require.Equal(t, want, got, "step %d, %+v", i, cmd)
			if err != nil {
				requireSameBank(t, b, m, i)
			}
		}
		requireSameBank(t, b, m, -1)
	})
}

// --- key-value -------------------------------------------------------------------

type kvModel map[string]workload.KVResult

func (m kvModel) apply(c workload.KVCmd) (workload.KVResult, error) {
	var none workload.KVResult
	switch c.Op {
	case workload.KVPut, workload.KVGet:
		switch {
		case c.Key == "":
			return none, workload.ErrEmptyKey
		case len(c.Key) > workload.MaxKeyLen:
			return none, workload.ErrKeyTooLong
		case c.Op == workload.KVPut && len(c.Value) > workload.MaxValueLen:
			return none, workload.ErrValueTooLarge
		}
		e, ok := m[c.Key]
		if c.Op == workload.KVGet {
			if !ok {
				return none, workload.ErrNoKey
			}
			return workload.KVResult{Value: slices.Clone(e.Value), Version: e.Version}, nil
		}
		m[c.Key] = workload.KVResult{Value: append([]byte{}, c.Value...), Version: e.Version + 1}
		return workload.KVResult{Version: e.Version + 1}, nil
	case workload.KVReset:
		clear(m)
		return none, nil
	case workload.KVLen:
		return workload.KVResult{Version: uint64(len(m))}, nil
	}
	return none, workload.ErrUnknownOp
}

// requireSameKV compares the number of keys and every key's value and version.
func requireSameKV(t *testing.T, kv *workload.KV, m kvModel, step int) {
	t.Helper()
	n, err := kv.Apply(workload.KVCmd{Op: workload.KVLen})
	require.NoError(t, err)
	require.Equal(t, uint64(len(m)), n.Version, "keys after step %d", step)
	for k, e := range m {
		got, err := kv.Apply(workload.KVCmd{Op: workload.KVGet, Key: k})
		require.NoError(t, err, "key %q after step %d", k, step)
		require.Equal(t, e.Version, got.Version, "key %q after step %d", k, step)
		require.Equal(t, len(e.Value), len(got.Value), "key %q after step %d", k, step)
		require.Equal(t, string(e.Value), string(got.Value), "key %q after step %d", k, step)
	}
}

func FuzzKV(f *testing.F) {
	f.Add([]byte{1, 0, 3, 'a', 'b', 'c', 2, 0, 4, 0})    // put a=abc, get a, len
	f.Add([]byte{2, 1, 1, 240, 0, 1, 244, 0, 1, 248, 0}) // get missing; put "", 256 and 257-byte keys
	f.Add([]byte{1, 0, 250, 1, 0, 253, 3, 0, 4, 0})      // put 1 MiB, put 1 MiB + 1, reset, len
	f.Add([]byte{1, 252, 2, 0xff, 0xfe, 0, 0, 5, 0})     // a non-UTF-8 key; unknown ops
	f.Fuzz(func(t *testing.T, data []byte) {
		kv, m := workload.NewKV(), kvModel{}
		for i, cmd := range cmdgen.KV(data) {
			want, wantErr := m.apply(cmd)
			got, err := kv.Apply(cmd)
			sameErr(t, wantErr, err, i, cmd.Op)
			require.Equal(t, want.Version, got.Version, "step %d, op %v key %q", i, cmd.Op, cmd.Key)
			require.Equal(t, string(want.Value), string(got.Value), "step %d, op %v key %q", i, cmd.Op, cmd.Key)
			if err != nil {
				requireSameKV(t, kv, m, i)
			}
		}
		requireSameKV(t, kv, m, -1)
	})
}

// TestModelsCatch is the control: each model disagrees with a machine that
// was changed, so the fuzz comparisons can fail.
func TestModelsCatch(t *testing.T) {
	// A counter started elsewhere than 0 differs from the model at once.
	c := workload.NewCounter()
	_, err := c.Apply(workload.CounterCmd{Op: workload.CounterIncrement, Delta: 1})
	require.NoError(t, err)
	got, _ := c.Apply(workload.CounterCmd{Op: workload.CounterGet})
	want, _ := (&counterModel{}).apply(workload.CounterCmd{Op: workload.CounterGet})
	require.NotEqual(t, want, got)

	// A bank of a different scenario differs in its summary.
	b, err := workload.NewBank(workload.BankConfig{Scenario: workload.ScenarioA, Accounts: 8, InitialBalance: 100})
	require.NoError(t, err)
	gotB, _ := b.Apply(workload.BankCmd{Op: workload.BankSummary})
	wantB, _ := newBankModel(cmdgen.SmallBank).apply(workload.BankCmd{Op: workload.BankSummary})
	require.NotEqual(t, wantB, gotB)

	// The models refuse as the machines do: a refused transfer in the model
	// after a successful one in the machine would show as a result mismatch.
	m := newBankModel(cmdgen.SmallBank)
	_, err = m.apply(workload.BankCmd{Op: workload.BankTransfer, From: 2, To: 1, Amount: 1})
	require.ErrorIs(t, err, workload.ErrInsufficientFunds, "scenario B: account 2 starts at 0")
	_, err = kvModel{}.apply(workload.KVCmd{Op: workload.KVGet, Key: "a"})
	require.ErrorIs(t, err, workload.ErrNoKey)
}
