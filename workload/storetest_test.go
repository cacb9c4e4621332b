package workload_test

import (
	"math/rand/v2"
	"testing"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
	"github.com/locklab/locklab/workload"
)

// The workloads go through the same kit a user's machine does: every design
// that can host each of them, its contract, and linearizability with the
// workload as its own specification. Each generator keeps the state small,
// so that calls contend and refusals (an overdraft, a missing key) happen.

func TestCounterUnderEveryDesign(t *testing.T) {
	storetest.Check(t, func() store.Machine[workload.CounterCmd, int64] { return workload.NewCounter() }, counterCmds,
		storetest.Clone(func(m store.Machine[workload.CounterCmd, int64]) store.Machine[workload.CounterCmd, int64] {
			c := workload.NewCounter()
			if err := c.Restore(m.(*workload.Counter).Snapshot()); err != nil {
				panic(err)
			}
			return c
		}))
}

// counterCmds draws increments (some of 0) and reads.
func counterCmds(r *rand.Rand) workload.CounterCmd {
	if r.IntN(3) == 0 {
		return workload.CounterCmd{Op: workload.CounterGet}
	}
	return workload.CounterCmd{Op: workload.CounterIncrement, Delta: r.Int64N(4)}
}

// kitAccounts keeps the bank small, so that transfers meet on accounts and
// shards.
const kitAccounts = 4

func TestBankUnderEveryDesign(t *testing.T) {
	storetest.Check(t, func() store.Machine[workload.BankCmd, workload.BankResult] {
		b, err := workload.NewBank(workload.BankConfig{Accounts: kitAccounts, InitialBalance: 100})
		if err != nil {
			panic(err)
		}
		return b
	}, bankCmds)
}

// bankCmds draws transfers (some larger than a balance), balance and
// history reads and summaries, which touch every shard.
func bankCmds(r *rand.Rand) workload.BankCmd {
	from := uint32(1 + r.IntN(kitAccounts))
	switch p := r.IntN(10); {
	case p < 5:
		to := uint32(1 + (int(from)+r.IntN(kitAccounts-1))%kitAccounts)
		return workload.BankCmd{Op: workload.BankTransfer, From: from, To: to, Amount: int64(1 + r.IntN(80))}
	case p < 7:
		return workload.BankCmd{Op: workload.BankBalance, From: from}
	case p < 9:
		return workload.BankCmd{Op: workload.BankHistory, From: from, Limit: 3}
	}
	return workload.BankCmd{Op: workload.BankSummary}
}

func TestKVUnderEveryDesign(t *testing.T) {
	storetest.Check(t, func() store.Machine[workload.KVCmd, workload.KVResult] { return workload.NewKV() }, kvCmds)
}

var kitKeys = []string{"a", "b", "c", "d", "e"}

// kvCmds draws puts and gets over a few keys (a get may find none) and
// lengths, which touch every shard.
func kvCmds(r *rand.Rand) workload.KVCmd {
	key := kitKeys[r.IntN(len(kitKeys))]
	switch p := r.IntN(10); {
	case p < 4:
		return workload.KVCmd{Op: workload.KVPut, Key: key, Value: []byte{byte(r.IntN(256))}}
	case p < 9:
		return workload.KVCmd{Op: workload.KVGet, Key: key}
	}
	return workload.KVCmd{Op: workload.KVLen}
}
