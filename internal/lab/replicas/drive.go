package replicas

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/locklab/locklab/internal/lab/balancer"
	"github.com/locklab/locklab/internal/lab/fleet"
	"github.com/locklab/locklab/load"
	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/workload"
)

// The workloads the driver runs, by the server's names.
const (
	Counter = "counter"
	Bank    = "bank"
	KV      = "kv"
)

// Bank is set up as Blocks pairs of accounts, each pair one key: a
// transfer moves money inside its pair, so that under key routing every
// account lives on one replica. A small balance makes overdrafts likely
// when a pair's transfers are spread over replicas.
const (
	Blocks         = 32
	InitialBalance = 100
	MaxAmount      = 60
)

// Accounts is the bank's size: two accounts per block.
const Accounts = 2 * Blocks

// counterKey is the key of every increment: there is one counter.
const counterKey = "counter"

// A Load is one closed-loop run of the driver: Callers goroutines, each
// calling one at a time for Duration.
type Load struct {
	Workload string
	Callers  int
	Duration time.Duration
	Seed     uint64
	// IDs sends every transfer of the bank with a request id through
	// fleet.Transfer, which retries an attempt fenced (ABORTED) or of
	// unknown outcome with the same id; Tally.Outcomes keeps them for the
	// database's audit (fleet.Check). For replicas over a database.
	IDs bool
}

// retryGrace bounds how long a transfer with IDs goes on retrying after
// the run's window has closed: the window's last calls are answered, and
// one that is still unresolved then counts as an error.
const retryGrace = 10 * time.Second

// Tally is what the driver saw.
type Tally struct {
	Calls, OK, Refused, Errors int64
	Elapsed                    time.Duration
	Latency                    *hdrhistogram.Histogram // µs
	// AckedDelta is the sum of the increments answered OK (counter).
	AckedDelta int64
	// Ledger is each account's change by the transfers answered OK (bank),
	// indexed by account − 1.
	Ledger []int64
	// DriverCPU is the runner's own CPU time over the run: the driver's,
	// to tell whether it or the servers ran out first.
	DriverCPU time.Duration
	// FirstError is the first unexpected error, for the report's log.
	FirstError error
	// Outcomes are the transfers sent with IDs, each with its request id
	// and its attempts; Fenced and Unknown sum their attempts refused with
	// ABORTED (the replica had lost an account) and without a definite
	// answer, each retried.
	Outcomes        []fleet.Outcome
	Fenced, Unknown int64
}

// CallsPerS is the rate of calls answered (OK or refused as expected).
func (t Tally) CallsPerS() float64 {
	if t.Elapsed <= 0 {
		return 0
	}
	return float64(t.OK+t.Refused) / t.Elapsed.Seconds()
}

// P99 is the 99th percentile of latency in ms.
func (t Tally) P99() float64 { return float64(t.Latency.ValueAtQuantile(99)) / 1000 }

// Drive runs l through cc, every call with its key in balancer.KeyHeader.
func Drive(ctx context.Context, cc grpc.ClientConnInterface, l Load) (Tally, error) {
	if l.Callers < 1 || l.Duration <= 0 {
		return Tally{}, fmt.Errorf("replicas: a load of %d callers for %v", l.Callers, l.Duration)
	}
	call, err := caller(cc, l)
	if err != nil {
		return Tally{}, err
	}
	// Every call started in the window is answered: a call cut at the
	// window's end may have changed a replica without the driver knowing,
	// which the checks would count as an anomaly.
	end := time.Now().Add(l.Duration)
	tallies := make([]Tally, l.Callers)
	cpu0 := cpuNow()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range tallies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := newTally()
			rng := rand.New(rand.NewPCG(l.Seed, uint64(i)))
			for t0 := time.Now(); t0.Before(end) && ctx.Err() == nil; t0 = time.Now() {
				err := call(ctx, rng, &t)
				t.Calls++
				_ = t.Latency.RecordValue(time.Since(t0).Microseconds())
				switch code := status.Code(err); {
				case err == nil:
					t.OK++
				case code == codes.FailedPrecondition:
					t.Refused++
				default:
					t.Errors++
					if t.FirstError == nil {
						t.FirstError = err
					}
				}
			}
			tallies[i] = t
		}()
	}
	wg.Wait()
	total := newTally()
	total.Elapsed = time.Since(start)
	total.DriverCPU = cpuNow() - cpu0
	for _, t := range tallies {
		total.add(t)
	}
	return total, nil
}

func newTally() Tally {
	return Tally{Latency: hdrhistogram.New(1, 60_000_000, 3), Ledger: make([]int64, Accounts)}
}

func (t *Tally) add(o Tally) {
	t.Calls += o.Calls
	t.OK += o.OK
	t.Refused += o.Refused
	t.Errors += o.Errors
	t.AckedDelta += o.AckedDelta
	t.Fenced += o.Fenced
	t.Unknown += o.Unknown
	t.Outcomes = append(t.Outcomes, o.Outcomes...)
	t.Latency.Merge(o.Latency)
	for i, v := range o.Ledger {
		t.Ledger[i] += v
	}
	if t.FirstError == nil {
		t.FirstError = o.FirstError
	}
}

type callFunc func(ctx context.Context, rng *rand.Rand, t *Tally) error

func keyed(ctx context.Context, key string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, balancer.KeyHeader, key)
}

// caller is one call of the load's workload.
func caller(cc grpc.ClientConnInterface, l Load) (callFunc, error) {
	if l.IDs && l.Workload != Bank {
		return nil, fmt.Errorf("replicas: request ids are for the %s workload, not %q", Bank, l.Workload)
	}
	switch l.Workload {
	case Counter:
		c := pb.NewCounterServiceClient(cc)
		return func(ctx context.Context, _ *rand.Rand, t *Tally) error {
			_, err := c.Increment(keyed(ctx, counterKey), &pb.IncrementRequest{Delta: 1})
			if err == nil {
				t.AckedDelta++
			}
			return err
		}, nil
	case Bank:
		if l.IDs {
			return transferWithID(cc, l), nil
		}
		c := pb.NewBankServiceClient(cc)
		return func(ctx context.Context, rng *rand.Rand, t *Tally) error {
			b := rng.IntN(Blocks)
			from, to := uint32(2*b+1), uint32(2*b+2)
			if rng.IntN(2) == 0 {
				from, to = to, from
			}
			amount := int64(1 + rng.IntN(MaxAmount))
			_, err := c.TransferMoney(keyed(ctx, blockKey(b)), &pb.TransferMoneyRequest{FromAccount: from, ToAccount: to, Amount: amount})
			if err == nil {
				t.Ledger[from-1] -= amount
				t.Ledger[to-1] += amount
			}
			return err
		}, nil
	case KV:
		c := pb.NewKVServiceClient(cc)
		value := make([]byte, load.Workloads().KV.Defaults.ValueSize)
		return func(ctx context.Context, rng *rand.Rand, _ *Tally) error {
			key := "k" + strconv.Itoa(rng.IntN(1024))
			_, err := c.Put(keyed(ctx, key), &pb.PutRequest{Key: key, Value: value})
			return err
		}, nil
	}
	return nil, fmt.Errorf("replicas: workload %q: want %s, %s or %s", l.Workload, Counter, Bank, KV)
}

// transferWithID is the bank's call with a request id, through
// fleet.Transfer: a transfer inside one pair, keyed by its pair, retried
// while fenced or of unknown outcome, for at most retryGrace after the
// run's window.
func transferWithID(cc grpc.ClientConnInterface, l Load) callFunc {
	deadline := time.Now().Add(l.Duration + retryGrace)
	var n atomic.Int64
	return func(ctx context.Context, rng *rand.Rand, t *Tally) error {
		b := rng.IntN(Blocks)
		from, to := uint32(2*b+1), uint32(2*b+2)
		if rng.IntN(2) == 0 {
			from, to = to, from
		}
		cmd := workload.BankCmd{Op: workload.BankTransfer, From: from, To: to, Amount: int64(1 + rng.IntN(MaxAmount)),
			ReqID: fleet.RequestID(fmt.Sprintf("s%d", l.Seed), int(n.Add(1)))}
		dctx, cancel := context.WithDeadline(ctx, deadline)
		o := fleet.Transfer(dctx, cc, cmd, fleet.Retry{Key: blockKey(b)})
		cancel()
		t.Outcomes = append(t.Outcomes, o)
		t.Fenced += int64(o.Fenced)
		t.Unknown += int64(o.Unknown)
		switch {
		case o.Acked:
			t.Ledger[from-1] -= cmd.Amount
			t.Ledger[to-1] += cmd.Amount
			return nil
		case o.Refused != codes.OK:
			return status.Error(o.Refused, "refused")
		case o.Err != nil:
			return o.Err
		}
		return status.Error(codes.Unknown, "replicas: a transfer left unresolved")
	}
}

// blockKey is the key of a pair of accounts.
func blockKey(b int) string { return "pair-" + strconv.Itoa(b) }

// Reset resets every replica to the same state: the bank's Accounts at
// InitialBalance, the counter at 0.
func Reset(ctx context.Context, replicas []*grpc.ClientConn) error {
	var errs []error
	for i, cc := range replicas {
		_, err := pb.NewAdminServiceClient(cc).Reset(ctx, &pb.ResetRequest{Scenario: pb.Scenario_SCENARIO_A, Accounts: Accounts, InitialBalance: InitialBalance})
		if err != nil {
			errs = append(errs, fmt.Errorf("replica %d: reset: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// cpuNow is the runner's CPU time, user and system.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
