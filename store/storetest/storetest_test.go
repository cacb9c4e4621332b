package storetest

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/store"
)

// ledger is a plain machine with no capability methods: the options give
// it reads and shards, so every design but atomic can host it.
type ledger struct{ bal [ledgerAccounts]int64 }

const ledgerAccounts = 4

type ledgerCmd struct {
	op       byte // 'd' deposit n into a, 'r' read a, 'm' move n from a to b
	a, b, n  int
	snapshot bool // 'r' of every account: touches every shard
}

var errOverdraft = errors.New("ledger: overdraft")

func (l *ledger) Apply(c ledgerCmd) (int64, error) {
	switch c.op {
	case 'd':
		l.bal[c.a] += int64(c.n)
		return l.bal[c.a], nil
	case 'm':
		if l.bal[c.a] < int64(c.n) {
			return 0, errOverdraft
		}
		l.bal[c.a] -= int64(c.n)
		l.bal[c.b] += int64(c.n)
		return l.bal[c.b], nil
	}
	if c.snapshot {
		var sum int64
		for _, b := range l.bal {
			sum += b
		}
		return sum, nil
	}
	return l.bal[c.a], nil
}

func ledgerGen(r *rand.Rand) ledgerCmd {
	a := r.IntN(ledgerAccounts)
	switch r.IntN(5) {
	case 0:
		return ledgerCmd{op: 'd', a: a, n: 1 + r.IntN(5)}
	case 1, 2:
		return ledgerCmd{op: 'm', a: a, b: (a + 1 + r.IntN(ledgerAccounts-1)) % ledgerAccounts, n: 1 + r.IntN(5)}
	case 3:
		return ledgerCmd{op: 'r', snapshot: true}
	}
	return ledgerCmd{op: 'r', a: a}
}

func ledgerReads(c ledgerCmd) bool { return c.op == 'r' }

func ledgerShards(c ledgerCmd, n int) (int, int) {
	if c.snapshot {
		return -1, -1
	}
	a, b := c.a%n, c.a%n
	if c.op == 'm' {
		b = c.b % n
	}
	return min(a, b), max(a, b)
}

func newLedger() store.Machine[ledgerCmd, int64] {
	return &ledger{bal: [ledgerAccounts]int64{10, 10, 10, 10}}
}

var ledgerOpts = []Option{ReadOnly(ledgerReads), Shards(ledgerShards), Calls(4, 40)}

// TestCheckLedger: a correct machine passes every check under every design
// that can host it, the options' capabilities included.
func TestCheckLedger(t *testing.T) {
	Check(t, newLedger, ledgerGen, ledgerOpts...)
}

// hits has a lock-free Apply, so the atomic design hosts it too.
type hits struct{ n atomic.Int64 }

func (h *hits) Apply(add int64) (int64, error)       { return h.n.Add(add), nil }
func (h *hits) ApplyAtomic(add int64) (int64, error) { return h.n.Add(add), nil }

func newHits() store.Machine[int64, int64] { return &hits{} }
func hitsGen(r *rand.Rand) int64           { return r.Int64N(3) }
func cloneHits(m store.Machine[int64, int64]) store.Machine[int64, int64] {
	c := &hits{}
	c.n.Store(m.(*hits).n.Load())
	return c
}

func TestCheckAtomic(t *testing.T) {
	Check(t, newHits, hitsGen, Designs("atomic", "mutex"), Clone(cloneHits), Calls(4, 40))
}

// TestCheckAtomicWithoutClone: without Clone the search rebuilds states by
// replay, slower but as exact. It draws no adds of 0: without Clone the
// search cannot see that such a write leaves the state as it was, and one
// tried late can send it down dead ends until its budget runs out (with
// Clone it tries those first; a declared read goes first either way).
func TestCheckAtomicWithoutClone(t *testing.T) {
	Check(t, newHits, func(r *rand.Rand) int64 { return 1 + r.Int64N(2) }, Designs("atomic"), Calls(4, 40))
}

func mustKit[C, R any](t *testing.T, newMachine func() store.Machine[C, R], gen func(*rand.Rand) C, opts ...Option) *kit[C, R] {
	t.Helper()
	k, err := newKit(newMachine, gen, opts)
	require.NoError(t, err)
	return k
}

// TestBadOptions: a mistake in the options is a clear failure before
// anything runs.
func TestBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want string
	}{
		{"unknown design", []Option{Designs("nope")}, `unknown design "nope"`},
		{"option of other types", []Option{ReadOnly(func(int) bool { return false })}, "option ReadOnly"},
		{"store of other types", []Option{Store("mine", func(store.Machine[int, int]) (store.Store[int, int], error) { return nil, nil })}, "option Store(mine)"},
		{"no calls", []Option{Calls(0, 10)}, "Calls(0, 10)"},
		{"bad par", []Option{Pars(1, 0)}, "Pars"},
		{"empty ring", []Option{BenchCommands(0)}, "BenchCommands"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newKit(newLedger, ledgerGen, tt.opts)
			assert.ErrorContains(t, err, tt.want)
		})
	}
	k := mustKit(t, newLedger, ledgerGen, Designs("atomic"))
	_, err := k.subjects(false)
	assert.ErrorIs(t, err, store.ErrUnsupported, "a named design that cannot host the machine")
}

// TestSubjects: the designs come from the registry (with the variants), so
// a design added there is checked with no change here.
func TestSubjects(t *testing.T) {
	k := mustKit(t, newLedger, ledgerGen, ledgerOpts...)
	subjects, err := k.subjects(true)
	require.NoError(t, err)
	var names []string
	for _, s := range subjects {
		names = append(names, s.name)
	}
	m := k.machine()
	for _, d := range store.Designs() {
		if store.Supports(d.Name, m) != nil {
			assert.NotContains(t, names, d.Name)
			continue
		}
		assert.Contains(t, names, d.Name)
		if d.Owner {
			assert.Contains(t, names, d.Name+"/queue1")
		}
	}
}

func TestBenchmarkRuns(t *testing.T) {
	res := testing.Benchmark(func(b *testing.B) {
		Benchmark(b, newLedger, ledgerGen, ReadOnly(ledgerReads), Shards(ledgerShards), Designs("mutex"), Pars(2), BenchCommands(8))
	})
	// testing.Benchmark reports the last sub-benchmark it ran; a zero N
	// means the body failed.
	assert.Positive(t, res.N)
}

// TestBenchmarkDesignEnv: DesignEnv narrows Benchmark to the design it
// names; the control, unset, runs every design.
func TestBenchmarkDesignEnv(t *testing.T) {
	benchtime := flag.Lookup("test.benchtime").Value
	was := benchtime.String()
	require.NoError(t, benchtime.Set("1x"))
	t.Cleanup(func() { _ = benchtime.Set(was) })
	built := func(env string) map[string]int {
		t.Setenv(DesignEnv, env)
		n := map[string]int{}
		counted := func(name string) func(store.Machine[int64, int64]) (store.Store[int64, int64], error) {
			return func(m store.Machine[int64, int64]) (store.Store[int64, int64], error) {
				n[name]++
				return store.NewMutex(m), nil
			}
		}
		testing.Benchmark(func(b *testing.B) {
			Benchmark(b, newRMW, rmwGen, Designs("mutex"), Store("mine", counted("mine")), Store("other", counted("other")), Pars(1), BenchCommands(8))
		})
		return n
	}
	n := built("mine")
	assert.Positive(t, n["mine"])
	assert.Zero(t, n["other"], "narrowed to mine")
	n = built("")
	assert.Positive(t, n["mine"])
	assert.Positive(t, n["other"], "the control: unset, every design runs")
	assert.Empty(t, built("nosuch"), "a design it cannot host runs nothing")
}

// rmw is a counter whose Apply is a separate load and store: free of data
// races (atomics), so the race detector does not stop a control, yet wrong
// under concurrent Apply calls, as any sequential machine is.
type rmw struct{ v atomic.Int64 }

func (m *rmw) Apply(add int64) (int64, error) {
	v := m.v.Load() + add
	runtime.Gosched()
	m.v.Store(v)
	return v, nil
}

func newRMW() store.Machine[int64, int64] { return &rmw{} }
func rmwGen(r *rand.Rand) int64           { return 1 + r.Int64N(3) }

// unsynchronised calls Apply from every caller at once. With meet set, its
// first two calls wait for each other before they apply, so that two Applies
// overlap even where a loaded machine would run the callers one after the
// other (rmw's Apply yields halfway, letting the second in).
type unsynchronised struct {
	m    store.Machine[int64, int64]
	meet *meeting
}

func (u unsynchronised) Do(_ context.Context, c int64) (int64, error) {
	if u.meet != nil {
		u.meet.wait()
	}
	return u.m.Apply(c)
}
func (u unsynchronised) Close() error { return nil }

// meeting holds its first arrival until the second comes (or patience, a
// second by default, has passed); later arrivals go straight through.
type meeting struct {
	n        atomic.Int32
	both     chan struct{}
	patience time.Duration
}

func (m *meeting) wait() {
	switch m.n.Add(1) {
	case 1:
		select {
		case <-m.both:
		case <-time.After(cmp.Or(m.patience, time.Second)):
		}
	case 2:
		close(m.both)
	}
}

// behind answers each command from a shadow machine and applies it to the
// real one during the next call (or Close): answers before applying. With
// swap it applies the held command after the next one: two calls that did
// not overlap take effect in the reverse order.
type behind struct {
	swap    bool
	mu      sync.Mutex // protects everything below
	m       store.Machine[int64, int64]
	shadow  store.Machine[int64, int64]
	pending []int64
	closed  bool
}

func newBehind(swap bool) func(store.Machine[int64, int64]) (store.Store[int64, int64], error) {
	return func(m store.Machine[int64, int64]) (store.Store[int64, int64], error) {
		return &behind{swap: swap, m: m, shadow: newRMW()}, nil
	}
}

func (b *behind) Do(ctx context.Context, c int64) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, store.ErrClosed
	}
	r, err := b.shadow.Apply(c)
	switch {
	case b.swap && len(b.pending) == 1:
		b.m.Apply(c)
		b.m.Apply(b.pending[0])
		b.pending = b.pending[:0]
	case b.swap:
		b.pending = append(b.pending, c)
	default:
		b.flush()
		b.pending = append(b.pending, c)
	}
	return r, err
}

func (b *behind) flush() {
	for _, c := range b.pending {
		b.m.Apply(c)
	}
	b.pending = b.pending[:0]
}

func (b *behind) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flush()
	b.closed = true
	return nil
}

// mutexAround wraps the mutex design; its hooks break one promise each.
type mutexAround struct {
	store.Store[int64, int64]
	ignoreCtx  bool          // Do applies even when ctx has ended
	noopClose  bool          // Close does nothing
	asyncClose bool          // Close returns at once, closing in the background
	lateApply  bool          // Do applies, then notices Close
	leak       chan struct{} // non-nil: a goroutine waits on it, Close does not stop it
	hangClose  chan struct{} // non-nil: Close waits for it to be closed before closing
	closed     atomic.Bool
}

func wrapMutex(hook func(*mutexAround)) func(store.Machine[int64, int64]) (store.Store[int64, int64], error) {
	return func(m store.Machine[int64, int64]) (store.Store[int64, int64], error) {
		s, err := store.New("mutex", m, store.Config{})
		w := &mutexAround{Store: s}
		hook(w)
		if w.leak != nil {
			go func() { <-w.leak }()
		}
		return w, err
	}
}

func (w *mutexAround) Do(ctx context.Context, c int64) (int64, error) {
	if w.ignoreCtx {
		ctx = context.Background()
	}
	r, err := w.Store.Do(ctx, c)
	if w.lateApply && w.closed.Load() {
		return 0, store.ErrClosed
	}
	return r, err
}

func (w *mutexAround) Close() error {
	switch {
	case w.noopClose:
		return nil
	case w.asyncClose:
		go w.Store.Close()
		return nil
	case w.lateApply:
		w.closed.Store(true)
		return nil
	case w.hangClose != nil:
		<-w.hangClose
	}
	return w.Store.Close()
}

// TestControls: for every check, a broken design it must catch, through the
// same code Check runs. The check that should fail is named, and only a
// failure with its message counts.
func TestControls(t *testing.T) {
	type control struct {
		name  string
		check string // a contract check's name, or "linearizable"
		store func(store.Machine[int64, int64]) (store.Store[int64, int64], error)
		want  string
	}
	leaked := make(chan struct{})
	defer close(leaked)
	controls := []control{
		{"unsynchronised wrapper", "linearizable", func(m store.Machine[int64, int64]) (store.Store[int64, int64], error) {
			return unsynchronised{m: m, meet: &meeting{both: make(chan struct{})}}, nil
		}, "Apply ran concurrently"},
		{"answers before applying", "linearizable", newBehind(false), "the answer came before the command was applied"},
		{"reorders two calls", "linearizable", newBehind(true), "after its call returned"},
		{"ignores an ended context", "ended context is refused", wrapMutex(func(w *mutexAround) { w.ignoreCtx = true }), "already ended"},
		{"Close does nothing", "Do after Close is refused", wrapMutex(func(w *mutexAround) { w.noopClose = true }), "want store.ErrClosed"},
		{"Close does not wait", "Close waits for Apply", wrapMutex(func(w *mutexAround) { w.asyncClose = true }), "while Apply was still running"},
		{"applies after Close", "Close under load", wrapMutex(func(w *mutexAround) { w.lateApply = true }), "after Close returned"},
		{"leaks a goroutine", "no goroutine left", wrapMutex(func(w *mutexAround) { w.leak = leaked }), "goroutines left behind"},
	}
	byName := map[string]func(*kit[int64, int64], subject[int64, int64], uint64) error{}
	for _, c := range checks[int64, int64]() {
		byName[c.name] = c.check
	}
	for _, c := range controls {
		t.Run(c.name, func(t *testing.T) {
			check, ok := byName[c.check]
			require.True(t, ok, "no check named %q", c.check)
			k := mustKit(t, newRMW, rmwGen, Calls(4, 50))
			err := check(k, subject[int64, int64]{c.name, c.store}, 7)
			require.Error(t, err, "the check passed a broken design")
			assert.ErrorContains(t, err, c.want)
			t.Log(err)
		})
	}
	// Every check has its control: here, or the race detector's below.
	for name := range byName {
		hasControl := name == "race"
		for _, c := range controls {
			hasControl = hasControl || c.check == name
		}
		assert.True(t, hasControl, "check %q has no control", name)
	}
	// The contract checks pass the correct design they wrap, so each
	// failure above is the hook's doing.
	for name, check := range byName {
		k := mustKit(t, newHits, hitsGen, Calls(4, 50))
		assert.NoError(t, check(k, registryRow[int64, int64]("mutex", "mutex", store.Config{}), 7), name)
	}
}

// TestRaceControl: the race check leaves detection to the race detector,
// which ends the process; so the control runs in a child process, a design
// with no lock around a plain machine, and must be caught there exactly when
// this binary is built with -race.
func TestRaceControl(t *testing.T) {
	if os.Getenv("STORETEST_RACE_CHILD") == "1" {
		k := mustKit(t, func() store.Machine[int64, int64] { return &plainCounter{} }, rmwGen, Calls(4, 200))
		err := k.checkRace(subject[int64, int64]{"unsynchronised", func(m store.Machine[int64, int64]) (store.Store[int64, int64], error) {
			return unsynchronised{m: m}, nil
		}}, 1)
		require.NoError(t, err)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestRaceControl$", "-test.count", "1")
	cmd.Env = append(os.Environ(), "STORETEST_RACE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if raceEnabled {
		assert.Error(t, err, "the race detector missed an unsynchronised design")
		assert.Contains(t, string(out), "DATA RACE")
	} else {
		assert.NoError(t, err, "%s", out)
	}
}

type plainCounter struct{ v int64 }

func (p *plainCounter) Apply(add int64) (int64, error) {
	p.v += add
	time.Sleep(time.Microsecond)
	return p.v, nil
}
