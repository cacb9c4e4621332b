package store

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/locklab/locklab/workload"
)

// benchBankAccounts is the bank of DESIGN.md §2's default run.
const benchBankAccounts = workload.DefaultAccounts

// benchOp is one operation of the benchmark: how to build its machine (with
// any warm-up done, outside the timed region) and the i-th command of one
// caller. Commands are computed, not drawn from a shared generator, so the
// benchmark adds no synchronisation of its own.
type benchOp[C, R any] struct {
	newMachine func(b *testing.B) Machine[C, R]
	cmd        func(caller, i uint32) C
}

func incrementOp() benchOp[workload.CounterCmd, int64] {
	return benchOp[workload.CounterCmd, int64]{
		newMachine: func(*testing.B) Machine[workload.CounterCmd, int64] { return workload.NewCounter() },
		cmd: func(_, _ uint32) workload.CounterCmd {
			return workload.CounterCmd{Op: workload.CounterIncrement, Delta: 1}
		},
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

func transferOp() benchOp[workload.BankCmd, workload.BankResult] {
	return benchOp[workload.BankCmd, workload.BankResult]{newMachine: newBenchBank, cmd: transferCmd}
}

func balanceOp() benchOp[workload.BankCmd, workload.BankResult] {
	return benchOp[workload.BankCmd, workload.BankResult]{
		newMachine: newBenchBank,
		cmd: func(caller, i uint32) workload.BankCmd {
			return workload.BankCmd{Op: workload.BankBalance, From: (caller*7919+i)%benchBankAccounts + 1}
		},
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

// BenchmarkStore runs one body over every design × op × parallelism, named
// like BenchmarkStore/design=inputQ/op=Increment/par=8.
func BenchmarkStore(b *testing.B) {
	for _, d := range DesignNames() {
		b.Run("design="+d, func(b *testing.B) {
			b.Run("op=Increment", func(b *testing.B) { benchDesign(b, d, incrementOp()) })
			b.Run("op=TransferMoney", func(b *testing.B) { benchDesign(b, d, transferOp()) })
			b.Run("op=GetBalance", func(b *testing.B) { benchDesign(b, d, balanceOp()) })
		})
	}
}

func benchDesign[C, R any](b *testing.B, design string, op benchOp[C, R]) {
	// Goroutines per CPU (b.SetParallelism): one caller per P, a few callers
	// per P, and the many callers of the lab's top k6 levels.
	for _, par := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("par=%d", par), func(b *testing.B) {
			s, err := New(design, op.newMachine(b), Config{})
			if errors.Is(err, ErrUnsupported) {
				b.Skipf("%v", err) // e.g. atomic has no bank: an n/a cell, not a failure
			}
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
