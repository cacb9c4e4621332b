package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/locklab/locklab/store"
)

// Check runs every design that can host the machine (every row of the
// registry whose needs the machine meets, and the designs given with Store)
// as a subtest, and in each:
//
//   - linearizable: concurrent clients call Do with commands from gen; the
//     design is given a recording machine, and every answer must come from
//     one Apply of that command made during its call, with the Apply calls
//     never overlapping where the machine forbids it, and a replay of them
//     in the order they ran giving the same answers on a fresh machine;
//   - race: the same load on the machine alone, so that the race detector
//     sees the design's synchronisation and nothing of the recorder's;
//   - the contract of store.Store: a context already ended is refused and
//     nothing applied; Do after Close is refused with store.ErrClosed;
//     Close waits for an Apply in progress; Close under load answers or
//     refuses every caller and applies nothing after it returns;
//   - no goroutine is left behind once the stores are closed.
//
// newMachine returns a fresh machine in the same initial state every time.
// gen draws one command; it is called from many goroutines, each with its
// own *rand.Rand, and must use nothing else that is shared. A failure names
// the check, the design and the seed (Seed replays the commands), and prints
// the part of the history that shows it.
func Check[C, R any](t *testing.T, newMachine func() store.Machine[C, R], gen func(*rand.Rand) C, opts ...Option) {
	t.Helper()
	k, subjects, seed, err := prepare(newMachine, gen, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range subjects {
		t.Run(s.name, func(t *testing.T) {
			for _, c := range checks[C, R]() {
				t.Run(c.name, func(t *testing.T) {
					if err := c.check(k, s, seed); err != nil {
						t.Errorf("design %s, Seed(%d): %v", s.name, seed, err)
					}
				})
			}
		})
	}
}

// Verify runs Check's checks outside a test, one after another, and returns
// every failure, each naming its design and check: for a program, a fuzz
// target or an example, where there is no *testing.T.
func Verify[C, R any](newMachine func() store.Machine[C, R], gen func(*rand.Rand) C, opts ...Option) error {
	k, subjects, seed, err := prepare(newMachine, gen, opts)
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range subjects {
		for _, c := range checks[C, R]() {
			if err := c.check(k, s, seed); err != nil {
				errs = append(errs, fmt.Errorf("%s/%s, Seed(%d): %w", s.name, c.name, seed, err))
			}
		}
	}
	return errors.Join(errs...)
}

func prepare[C, R any](newMachine func() store.Machine[C, R], gen func(*rand.Rand) C, opts []Option) (*kit[C, R], []subject[C, R], uint64, error) {
	k, err := newKit(newMachine, gen, opts)
	if err != nil {
		return nil, nil, 0, err
	}
	subjects, err := k.subjects(k.o.variants)
	if err != nil {
		return nil, nil, 0, err
	}
	seed := k.o.seed
	if !k.o.seedSet {
		seed = rand.Uint64()
	}
	return k, subjects, seed, nil
}

func (k *kit[C, R]) checkLinearizable(s subject[C, R], seed uint64) error {
	h, err := k.record(s, seed, k.o.clients, 0)
	if err != nil {
		return err
	}
	return k.verify(h)
}

// checkRace runs the load on the machine itself, with no recorder in
// between: the recorder's own lock would order Apply calls for the race
// detector and could hide a design's missing synchronisation. Only the
// store's refusals are errors here; what the machine answers is its business.
func (k *kit[C, R]) checkRace(s subject[C, R], seed uint64) error {
	st, err := s.new(k.machine())
	if err != nil {
		return fmt.Errorf("%s: cannot build the store: %w", s.name, err)
	}
	errs := make(chan error, k.o.clients)
	var wg sync.WaitGroup
	for c := range k.o.clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(c)))
			for range k.o.calls {
				if _, err := st.Do(context.Background(), k.gen(rng)); !answered(err) {
					errs <- fmt.Errorf("design %s refused a call on an open store: %w", s.name, err)
					return
				}
			}
		})
	}
	if !waitGroupWithin(&wg, hangLimit) {
		return fmt.Errorf("design %s: a call did not return within %v", s.name, hangLimit)
	}
	if err := closeWithin(st, hangLimit); err != nil {
		return fmt.Errorf("design %s: %w", s.name, err)
	}
	close(errs)
	return <-errs
}

// Benchmark runs one body over every design that can host the machine and
// every parallelism, named design=D/par=P, so that
//
//	go test -run '^$' -bench . -count 10 | benchstat -col /design -
//
// compares the designs on the machine's own commands. Each goroutine of
// b.RunParallel (par per CPU, b.SetParallelism) calls Do over a ring of
// commands drawn from gen before the timer starts, so the generator is not
// measured; the machine is built, and any warm-up in newMachine done, before
// the timer starts too. A machine error is part of the workload, counted as
// refused/op when there is any; a refusal by the store fails the benchmark.
func Benchmark[C, R any](b *testing.B, newMachine func() store.Machine[C, R], gen func(*rand.Rand) C, opts ...Option) {
	b.Helper()
	k, err := newKit(newMachine, gen, opts)
	if err != nil {
		b.Fatal(err)
	}
	subjects, err := k.subjects(false)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range subjects {
		b.Run("design="+s.name, func(b *testing.B) {
			for _, par := range k.o.pars {
				b.Run(fmt.Sprintf("par=%d", par), func(b *testing.B) { k.bench(b, s, par) })
			}
		})
	}
}

// maxRings bounds the command rings a benchmark generates: goroutines beyond
// it share rings, starting at different places.
const maxRings = 256

func (k *kit[C, R]) bench(b *testing.B, s subject[C, R], par int) {
	st, err := s.new(k.machine())
	if err != nil {
		b.Fatalf("design %s: %v", s.name, err)
	}
	defer st.Close()
	seed := k.o.seed // the same commands for every design
	rings := make([][]C, min(par*runtime.GOMAXPROCS(0), maxRings))
	for i := range rings {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		rings[i] = make([]C, k.o.cmds)
		for j := range rings[i] {
			rings[i][j] = k.gen(rng)
		}
	}
	ctx := context.Background()
	var next atomic.Int64 // numbers the RunParallel goroutines
	var refused atomic.Int64
	// b.Fatal may not be called from RunParallel's goroutines: the first
	// error comes out through errs.
	errs := make(chan error, 1)
	b.SetParallelism(par)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		g := int(next.Add(1) - 1)
		ring := rings[g%len(rings)]
		i := (g / len(rings) * 97) % len(ring)
		var n int64
		for pb.Next() {
			_, err := st.Do(ctx, ring[i])
			if i++; i == len(ring) {
				i = 0
			}
			if err != nil {
				if !answered(err) {
					select {
					case errs <- err:
					default:
					}
					return
				}
				n++
			}
		}
		refused.Add(n)
	})
	b.StopTimer()
	select {
	case err := <-errs:
		b.Fatalf("design %s: Do: %v", s.name, err)
	default:
	}
	if n := refused.Load(); n > 0 {
		b.ReportMetric(float64(n)/float64(b.N), "refused/op")
	}
}
