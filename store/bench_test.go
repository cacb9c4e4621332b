package store

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locklab/locklab/workload"
)

// benchBankAccounts is the bank of DESIGN.md §2's default run.
const benchBankAccounts = workload.DefaultAccounts

// benchOp is one operation of the benchmark: how to build its machine (with
// any warm-up done, outside the timed region) and the i-th command of one
// caller. Commands are computed, not drawn from a shared generator, so the
// benchmark adds no synchronisation of its own.
type benchOp[C, R any] struct {
	name       string
	newMachine func(b *testing.B) Machine[C, R]
	cmd        func(caller, i uint32) C
	// worked: the critical-section sweep runs over this op (a state change).
	worked bool
}

func counterBenchOps() []benchOp[workload.CounterCmd, int64] {
	m := func(*testing.B) Machine[workload.CounterCmd, int64] { return workload.NewCounter() }
	return []benchOp[workload.CounterCmd, int64]{
		{name: "Increment", newMachine: m, worked: true, cmd: func(_, _ uint32) workload.CounterCmd {
			return workload.CounterCmd{Op: workload.CounterIncrement, Delta: 1}
		}},
		{name: "GetValue", newMachine: m, cmd: func(_, _ uint32) workload.CounterCmd {
			return workload.CounterCmd{Op: workload.CounterGet}
		}},
	}
}

// transferCmd is the i-th transfer of a caller. They form a ring: every
// account sends as often as it receives, so balances stay near their start
// and no transfer is refused however long the benchmark runs.
func transferCmd(caller, i uint32) workload.BankCmd {
	from := (caller*7919+i)%benchBankAccounts + 1
	to := from%benchBankAccounts + 1
	return workload.BankCmd{Op: workload.BankTransfer, From: from, To: to, Amount: 1000}
}

func bankBenchOps() []benchOp[workload.BankCmd, workload.BankResult] {
	return []benchOp[workload.BankCmd, workload.BankResult]{
		{name: "TransferMoney", newMachine: newBenchBank, cmd: transferCmd, worked: true},
		{name: "GetBalance", newMachine: newBenchBank, cmd: func(caller, i uint32) workload.BankCmd {
			return workload.BankCmd{Op: workload.BankBalance, From: (caller*7919+i)%benchBankAccounts + 1}
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
	newKV := func(b *testing.B) Machine[workload.KVCmd, workload.KVResult] {
		kv := workload.NewKV()
		for _, k := range benchKeyNames {
			if _, err := kv.Apply(workload.KVCmd{Op: workload.KVPut, Key: k, Value: value}); err != nil {
				b.Fatal(err)
			}
		}
		return kv
	}
	return []benchOp[workload.KVCmd, workload.KVResult]{
		{name: "Put", newMachine: newKV, cmd: func(caller, i uint32) workload.KVCmd {
			return workload.KVCmd{Op: workload.KVPut, Key: benchKeyNames[(caller*7919+i)%benchKeys], Value: value}
		}},
		{name: "Get", newMachine: newKV, cmd: func(caller, i uint32) workload.KVCmd {
			return workload.KVCmd{Op: workload.KVGet, Key: benchKeyNames[(caller*7919+i)%benchKeys]}
		}},
	}
}

// newBenchBank returns the default bank with every account's history ring
// already full, so the timed region measures the steady state (no append
// growth) rather than the first moments of a run.
func newBenchBank(b *testing.B) Machine[workload.BankCmd, workload.BankResult] {
	bank, err := workload.NewBank(workload.BankConfig{})
	if err != nil {
		b.Fatal(err)
	}
	for i := uint32(0); i < workload.HistoryKept/2*benchBankAccounts; i++ {
		if _, err := bank.Apply(transferCmd(0, i)); err != nil {
			b.Fatal(err)
		}
	}
	return bank
}

// benchWork is the critical-section sweep: deterministic CPU work (a
// calibrated spin, not a sleep) inside every state-changing Apply, so the
// length at which one design overtakes another is visible.
var benchWork = []time.Duration{0, time.Microsecond, 10 * time.Microsecond}

// BenchmarkStore runs one body over every design × op × parallelism, and
// the state-changing ops over the critical-section sweep, named like
// BenchmarkStore/design=inputQ/op=Increment/par=8/work=1µs. A design that
// does not serve an op's machine has no row (an n/a cell in the report).
func BenchmarkStore(b *testing.B) {
	for _, d := range DesignNames() {
		b.Run("design="+d, func(b *testing.B) {
			for _, op := range counterBenchOps() {
				benchDesign(b, d, op)
			}
			for _, op := range bankBenchOps() {
				benchDesign(b, d, op)
			}
			for _, op := range kvBenchOps() {
				benchDesign(b, d, op)
			}
		})
	}
}

func benchDesign[C, R any](b *testing.B, design string, op benchOp[C, R]) {
	if Supports(design, op.newMachine(b)) != nil {
		return
	}
	works := benchWork[:1]
	if op.worked {
		works = benchWork
	}
	// Goroutines per CPU (b.SetParallelism): one caller per P, a few callers
	// per P, and the many callers of the lab's top load levels.
	for _, par := range []int{1, 8, 64} {
		for _, work := range works {
			name := fmt.Sprintf("op=%s/par=%d/work=%v", op.name, par, work)
			b.Run(name, func(b *testing.B) {
				var m Machine[C, R] = op.newMachine(b)
				if work > 0 {
					m = withSpin(m, work)
				}
				s, err := New(design, m, Config{})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				ctx := context.Background()
				var callers atomic.Uint32 // numbers the RunParallel goroutines
				// b.Fatal may not be called from RunParallel's goroutines: the
				// first error comes out through errs.
				errs := make(chan error, 1)
				b.SetParallelism(par)
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					caller := callers.Add(1)
					for i := uint32(0); pb.Next(); i++ {
						if _, err := s.Do(ctx, op.cmd(caller, i)); err != nil {
							select {
							case errs <- err:
							default:
							}
							return
						}
					}
				})
				b.StopTimer()
				select {
				case err := <-errs:
					b.Fatalf("Do: %v", err)
				default:
				}
			})
		}
	}
}
