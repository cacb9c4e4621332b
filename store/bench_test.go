package store_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
	"github.com/locklab/locklab/workload"
)

// The store benchmarks go through storetest.Benchmark, the body a user's
// machine gets: every design that can host an op's machine, at every
// parallelism of storetest.DefaultPars.

// benchBankAccounts is the bank of the server's default run.
const benchBankAccounts = workload.DefaultAccounts

// benchOp is one operation of the benchmark: how to build its machine (with
// any warm-up done; storetest builds it before the timer starts) and how to
// draw its commands.
type benchOp[C, R any] struct {
	name       string
	newMachine func() store.Machine[C, R]
	gen        func(r *rand.Rand) C
	// worked: the critical-section sweep runs over this op (a state change).
	worked bool
}

func counterBenchOps() []benchOp[workload.CounterCmd, int64] {
	m := func() store.Machine[workload.CounterCmd, int64] { return workload.NewCounter() }
	return []benchOp[workload.CounterCmd, int64]{
		{name: "Increment", newMachine: m, worked: true, gen: func(*rand.Rand) workload.CounterCmd {
			return workload.CounterCmd{Op: workload.CounterIncrement, Delta: 1}
		}},
		{name: "GetValue", newMachine: m, gen: func(*rand.Rand) workload.CounterCmd {
			return workload.CounterCmd{Op: workload.CounterGet}
		}},
	}
}

// ringTransfer moves 1000 from account from to its neighbour: over many
// draws every account sends as often as it receives, so balances stay near
// their start and no transfer is refused however long the benchmark runs.
func ringTransfer(from uint32) workload.BankCmd {
	return workload.BankCmd{Op: workload.BankTransfer, From: from, To: from%benchBankAccounts + 1, Amount: 1000}
}

func randomAccount(r *rand.Rand) uint32 { return 1 + r.Uint32N(benchBankAccounts) }

func bankBenchOps() []benchOp[workload.BankCmd, workload.BankResult] {
	return []benchOp[workload.BankCmd, workload.BankResult]{
		{name: "TransferMoney", newMachine: newBenchBank, worked: true, gen: func(r *rand.Rand) workload.BankCmd {
			return ringTransfer(randomAccount(r))
		}},
		{name: "GetBalance", newMachine: newBenchBank, gen: func(r *rand.Rand) workload.BankCmd {
			return workload.BankCmd{Op: workload.BankBalance, From: randomAccount(r)}
		}},
	}
}

// benchKeys is how many keys the kv benchmark spreads over, each holding a
// value of the default size.
const benchKeys = 1024

var benchKeyNames = func() []string {
	k := make([]string, benchKeys)
	for i := range k {
		k[i] = fmt.Sprintf("key-%04d", i)
	}
	return k
}()

func kvBenchOps() []benchOp[workload.KVCmd, workload.KVResult] {
	value := make([]byte, workload.DefaultValueSize)
	newKV := func() store.Machine[workload.KVCmd, workload.KVResult] {
		kv := workload.NewKV()
		for _, k := range benchKeyNames {
			if _, err := kv.Apply(workload.KVCmd{Op: workload.KVPut, Key: k, Value: value}); err != nil {
				panic(err)
			}
		}
		return kv
	}
	return []benchOp[workload.KVCmd, workload.KVResult]{
		{name: "Put", newMachine: newKV, gen: func(r *rand.Rand) workload.KVCmd {
			return workload.KVCmd{Op: workload.KVPut, Key: benchKeyNames[r.IntN(benchKeys)], Value: value}
		}},
		{name: "Get", newMachine: newKV, gen: func(r *rand.Rand) workload.KVCmd {
			return workload.KVCmd{Op: workload.KVGet, Key: benchKeyNames[r.IntN(benchKeys)]}
		}},
	}
}

// newBenchBank returns the default bank with every account's history ring
// already full, so the timed region measures the steady state (no append
// growth) rather than the first moments of a run.
func newBenchBank() store.Machine[workload.BankCmd, workload.BankResult] {
	bank, err := workload.NewBank(workload.BankConfig{})
	if err != nil {
		panic(err)
	}
	for i := uint32(0); i < workload.HistoryKept/2*benchBankAccounts; i++ {
		if _, err := bank.Apply(ringTransfer(i%benchBankAccounts + 1)); err != nil {
			panic(err)
		}
	}
	return bank
}

// benchWork is the critical-section sweep: deterministic CPU work (a
// calibrated spin, not a sleep) inside every state-changing Apply, so the
// length at which one design overtakes another is visible.
var benchWork = []time.Duration{0, time.Microsecond, 10 * time.Microsecond}

// BenchmarkStore runs storetest's body over every op × critical section,
// named like BenchmarkStore/op=Increment/work=1µs/design=inputQ/par=8. A
// design that does not serve an op's machine has no row (an n/a cell in the
// report).
func BenchmarkStore(b *testing.B) {
	benchOps(b, counterBenchOps())
	benchOps(b, bankBenchOps())
	benchOps(b, kvBenchOps())
}

func benchOps[C, R any](b *testing.B, ops []benchOp[C, R]) {
	for _, op := range ops {
		works := benchWork[:1]
		if op.worked {
			works = benchWork
		}
		for _, work := range works {
			b.Run(fmt.Sprintf("op=%s/work=%v", op.name, work), func(b *testing.B) {
				storetest.Benchmark(b, func() store.Machine[C, R] {
					if work > 0 {
						return store.WithSpin(op.newMachine(), work)
					}
					return op.newMachine()
				}, op.gen)
			})
		}
	}
}
