package storetest

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locklab/locklab/store"
)

// Check runs every design that can host the machine (every row of the
// registry whose needs the machine meets, and the designs given with Store)
// as a subtest, and in each, every check as a subtest of its own:
//
//   - linearizable: concurrent clients call Do with commands from gen; the
//     design is given a recording machine, and every answer must come from
//     one Apply of that command made during its call, with the Apply calls
//     never overlapping where the machine forbids it, and a replay of them
//     in an order that fits when they ran giving the same answers on a fresh
//     machine;
//   - race: the same load on the machine alone, so that the race detector
//     sees the design's synchronisation and nothing of the recorder's;
//   - the contract of store.Store: a context already ended is refused and
//     nothing applied; Do after Close is refused with store.ErrClosed;
//     Close waits for an Apply in progress; Close under load answers or
//     refuses every caller and applies nothing after it returns;
//   - no goroutine is left behind once the stores are closed.
//
// Each check fails on its own, as soon as it ends, and logs the time it
// took. A call to Do or Close that does not return is declared hung after a
// bound derived from the calls the check saw complete (see HangAfter), so a
// design that never answers fails that check within seconds and the others
// still run.
//
// newMachine returns a fresh machine in the same initial state every time.
// gen draws one command; it is called from many goroutines, each with its
// own *rand.Rand, and must use nothing else that is shared. A failure names
// the seed (Seed replays the commands) and the time the check took, and
// prints the part of the history that shows it.
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
					r := runCheck(k, s, c, seed)
					if r.Err != nil {
						t.Errorf("Seed(%d), failed after %v: %v", seed, round(r.Elapsed), r.Err)
						return
					}
					t.Logf("passed in %v", round(r.Elapsed))
				})
			}
		})
	}
}

// A Result is the outcome of one check of one design.
type Result struct {
	Design  string // as Check names its subtest: a registry row, a variant, or a Store
	Check   string // as Check names its subtest: "linearizable", "Close under load", …
	Seed    uint64 // the seed the commands were drawn with: Seed(n) draws them again
	Elapsed time.Duration
	Err     error // nil if the check passed
}

func (r Result) String() string {
	if r.Err == nil {
		return fmt.Sprintf("%s/%s: passed in %v", r.Design, r.Check, round(r.Elapsed))
	}
	return fmt.Sprintf("%s/%s, Seed(%d), failed after %v: %v", r.Design, r.Check, r.Seed, round(r.Elapsed), r.Err)
}

// Results runs Check's checks outside a test, one after another, and yields
// each one's Result as soon as it ends: a program can print a failure while
// later checks still run, or stop at the first by breaking out of the loop.
// A mistake in the options is one Result, with Check "options".
func Results[C, R any](newMachine func() store.Machine[C, R], gen func(*rand.Rand) C, opts ...Option) iter.Seq[Result] {
	return func(yield func(Result) bool) {
		k, subjects, seed, err := prepare(newMachine, gen, opts)
		if err != nil {
			yield(Result{Check: "options", Err: err})
			return
		}
		runAll(k, subjects, seed, yield)
	}
}

// runAll runs every check of every subject, one after another, until yield
// returns false.
func runAll[C, R any](k *kit[C, R], subjects []subject[C, R], seed uint64, yield func(Result) bool) {
	for _, s := range subjects {
		for _, c := range checks[C, R]() {
			if !yield(runCheck(k, s, c, seed)) {
				return
			}
		}
	}
}

// Verify runs Check's checks outside a test, one after another, and returns
// every failure, each naming its design and check and the time it took, with
// the seed named once: for a program, a fuzz target or an example, where
// there is no *testing.T. Results yields the same failures as they happen.
func Verify[C, R any](newMachine func() store.Machine[C, R], gen func(*rand.Rand) C, opts ...Option) error {
	var failed []error
	var n int
	var seed uint64
	for r := range Results(newMachine, gen, opts...) {
		if r.Check == "options" && r.Design == "" {
			return r.Err
		}
		n++
		seed = r.Seed
		if r.Err != nil {
			failed = append(failed, fmt.Errorf("%s/%s, failed after %v: %w", r.Design, r.Check, round(r.Elapsed), r.Err))
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return fmt.Errorf("storetest, Seed(%d): %d of %d checks failed:\n%w", seed, len(failed), n, errors.Join(failed...))
}

// runCheck runs one check of one design and times it.
func runCheck[C, R any](k *kit[C, R], s subject[C, R], c oneCheck[C, R], seed uint64) Result {
	start := time.Now()
	err := c.check(k, s, seed)
	return Result{Design: s.name, Check: c.name, Seed: seed, Elapsed: time.Since(start), Err: err}
}

// round shortens a duration for a message.
func round(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
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
	if h == nil {
		return err
	}
	return errors.Join(err, k.verify(h))
}

// checkRace runs the load on the machine itself, with no recorder in
// between: the recorder's own lock would order Apply calls for the race
// detector and could hide a design's missing synchronisation (the watch that
// times the calls adds no such order). Only the store's refusals are errors
// here; what the machine answers is its business.
func (k *kit[C, R]) checkRace(s subject[C, R], seed uint64) error {
	st, err := s.new(k.machine())
	if err != nil {
		return fmt.Errorf("cannot build the store: %w", err)
	}
	w := newWatch(k.o.hang)
	errs := make(chan error, k.o.clients)
	var stop atomic.Bool // set only when the check gives up
	var wg sync.WaitGroup
	for c := range k.o.clients {
		sl := w.slot(fmt.Sprintf("client %d", c), k.describeCall(seed, c))
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(c)))
			for n := range k.o.calls {
				if stop.Load() {
					return
				}
				cmd := k.gen(rng)
				sl.begin(n)
				_, err := st.Do(context.Background(), cmd)
				sl.end()
				if !answered(err) {
					errs <- fmt.Errorf("the store refused a call while open: %w", err)
					return
				}
			}
		})
	}
	if err := w.wait(doneWaiting(&wg)); err != nil {
		stop.Store(true)
		return err
	}
	if err := closeWatched(st, w); err != nil {
		return err
	}
	close(errs)
	return <-errs
}

// describeCall describes client c's n-th call of a run drawn with seed,
// drawing its commands again.
func (k *kit[C, R]) describeCall(seed uint64, c int) func(n int) string {
	return func(n int) string {
		rng := rand.New(rand.NewPCG(seed, uint64(c)))
		var cmd C
		for range n + 1 {
			cmd = k.gen(rng)
		}
		return fmt.Sprintf("Do(%+v), call %d of client %d,", cmd, n, c)
	}
}

// DesignEnv names the environment variable that narrows Benchmark to one
// design: set to a design's name, Benchmark runs that design's
// sub-benchmarks only (their names unchanged) and the others not at all.
// storeverdict rounds sets it to run each design of a round in a go test
// of its own, in an order drawn per round.
const DesignEnv = "LOCKLAB_STORETEST_DESIGN"

// only keeps the subjects named by DesignEnv's value, or all of them when
// it is empty.
func only[C, R any](subjects []subject[C, R], design string) []subject[C, R] {
	if design == "" {
		return subjects
	}
	var out []subject[C, R]
	for _, s := range subjects {
		if s.name == design {
			out = append(out, s)
		}
	}
	return out
}

// Benchmark runs one body over every design that can host the machine and
// every parallelism, named design=D/par=P, so that rounds of it, run by
//
//	go run github.com/locklab/locklab/cmd/storeverdict rounds -verdict ./yourpkg
//
// compare the designs on the machine's own commands, paired round by round
// (see cmd/storeverdict; DesignEnv narrows it to one design). Each goroutine of
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
	for _, s := range only(subjects, os.Getenv(DesignEnv)) {
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
