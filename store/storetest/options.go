package storetest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"time"

	"github.com/locklab/locklab/store"
)

// An Option tells Check and Benchmark something the machine's own methods do
// not: which commands only read, how its state shards, how to copy it, which
// designs to run. Options are not generic, so a call site names no types;
// the few that carry the machine's types are checked against them when Check
// or Benchmark starts, and a mismatch fails with a message naming both.
type Option func(*options)

type options struct {
	designs  []string // registry rows to run; nil: every row that can host the machine
	stores   []namedStore
	readOnly any // func(C) bool
	shards   any // func(C, int) (int, int)
	clone    any // func(store.Machine[C, R]) store.Machine[C, R]
	equal    any // func(a, b R) bool
	clients  int
	calls    int
	seed     uint64
	seedSet  bool
	pars     []int
	cmds     int
	variants bool
	hang     time.Duration // the hang bound's floor
	budget   int           // applies the replay search may make; 0: the default
}

// Defaults of the options Check and Benchmark read.
const (
	// DefaultClients goroutines call the store at once in Check: a few per
	// CPU of a small machine, so callers are preempted inside Do.
	DefaultClients = 8
	// DefaultCalls is each client's number of calls in Check's history: 800
	// calls in all keep a check of every design within seconds under -race.
	DefaultCalls = 100
	// DefaultBenchCommands is the length of each benchmark goroutine's
	// command ring, generated before the timer starts so that the generator
	// is not measured.
	DefaultBenchCommands = 1024
)

// DefaultPars are Benchmark's goroutines per CPU (b.SetParallelism): one
// caller per P, a few callers per P, and the many callers of a busy server.
var DefaultPars = []int{1, 8, 64}

func newOptions(opts []Option) *options {
	o := &options{clients: DefaultClients, calls: DefaultCalls, pars: DefaultPars, cmds: DefaultBenchCommands, variants: true, hang: DefaultHangAfter}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

// Designs limits Check and Benchmark to these rows of the registry
// (store.DesignNames), in the registry's order. Without it every row that can
// host the machine runs; naming a row that cannot is a failure.
func Designs(names ...string) Option {
	return func(o *options) { o.designs = append(o.designs, names...) }
}

// Store adds a design of your own beside the registry's: newStore wraps a
// machine the way store.New does. Its Apply calls are watched like the
// built-in designs'; it should find a machine's capabilities with
// store.CapabilitiesOf, since the machine it gets is a wrapper.
func Store[C, R any](name string, newStore func(store.Machine[C, R]) (store.Store[C, R], error)) Option {
	return func(o *options) { o.stores = append(o.stores, namedStore{name, newStore}) }
}

type namedStore struct {
	name string
	new  any // func(store.Machine[C, R]) (store.Store[C, R], error)
}

// ReadOnly says which commands only read, for a machine that does not
// implement store.ReadOnly itself: the rwmutex design can then host it.
func ReadOnly[C any](f func(cmd C) bool) Option {
	return func(o *options) { o.readOnly = f }
}

// Shards says how the machine's state splits, for a machine that does not
// implement store.Sharded itself: shardsOf(cmd, n) reports the shards of n
// that cmd touches, as store.Sharded's ShardsOf does (a < 0 every shard). The
// sharded designs can then host it.
func Shards[C any](shardsOf func(cmd C, n int) (a, b int)) Option {
	return func(o *options) { o.shards = shardsOf }
}

// Clone copies a machine's state into a new, independent machine. Check
// needs it for the atomic design only, whose Apply calls overlap by design:
// the order they took effect in is then searched for, from copies, rather
// than read off the record.
func Clone[C, R any](clone func(store.Machine[C, R]) store.Machine[C, R]) Option {
	return func(o *options) { o.clone = clone }
}

// Equal compares two results; the default is reflect.DeepEqual. Errors are
// compared apart from results: by identity between the machine and the
// caller (a design passes them through), by message between two machines.
func Equal[R any](equal func(a, b R) bool) Option {
	return func(o *options) { o.equal = equal }
}

// Calls sets Check's history: clients goroutines, each making calls calls
// (defaults DefaultClients and DefaultCalls).
func Calls(clients, calls int) Option {
	return func(o *options) { o.clients, o.calls = clients, calls }
}

// Seed fixes the generator's seed; a failure prints the seed it ran with, so
// that Seed(n) replays the same commands (the interleaving is the
// scheduler's).
func Seed(seed uint64) Option {
	return func(o *options) { o.seed, o.seedSet = seed, true }
}

// Pars sets Benchmark's goroutines per CPU (default DefaultPars).
func Pars(pars ...int) Option {
	return func(o *options) { o.pars = pars }
}

// BenchCommands sets the length of each benchmark goroutine's command ring
// (default DefaultBenchCommands).
func BenchCommands(n int) Option {
	return func(o *options) { o.cmds = n }
}

// HangAfter sets the least time Check waits for a call to Do or Close
// before it declares the design hung (default DefaultHangAfter). The bound
// is derived from the calls themselves: a call counts as hung once it has
// been in flight for max(d, HangFactor × the slowest call the check has seen
// complete), so a slow machine or a loaded computer raises it on its own. Set
// d above the longest a single call of your machine can take when nothing
// else is running (a first call that warms a cache, an Apply that syncs a
// file): before any call has completed, d is the whole bound.
//
// A check that declares a hang fails with an error wrapping ErrHang, naming
// the call and the bound; the goroutine stuck in the design is left behind.
func HangAfter(d time.Duration) Option {
	return func(o *options) { o.hang = d }
}

// SearchBudget bounds the replay's search for an order of overlapping
// applies, in calls to the machine's Apply (default: 2n² + 100,000 for n
// recorded applies, which a history without overlaps never comes near).
// Past it the check fails with an error wrapping ErrInconclusive that says
// how far the search got; the exclusion and answer checks run in full
// regardless.
func SearchBudget(applies int) Option {
	return func(o *options) { o.budget = applies }
}

// NoVariants runs each registry design once, with store.Config's defaults.
// Check otherwise also runs each owner design with a queue of one (callers
// then wait for the owner almost always) and each sharded design with two
// shards (most multi-shard commands cross shards): the paths a default
// configuration rarely reaches.
func NoVariants() Option {
	return func(o *options) { o.variants = false }
}

// kit is the options resolved against the machine's types.
type kit[C, R any] struct {
	o          *options
	newMachine func() store.Machine[C, R]
	gen        func(*rand.Rand) C
	readOnly   func(C) bool
	shards     func(C, int) (int, int)
	clone      func(store.Machine[C, R]) store.Machine[C, R]
	equal      func(a, b R) bool
	stores     []subject[C, R]
}

// subject is one design under test.
type subject[C, R any] struct {
	name string
	new  func(store.Machine[C, R]) (store.Store[C, R], error)
}

func newKit[C, R any](newMachine func() store.Machine[C, R], gen func(*rand.Rand) C, opts []Option) (*kit[C, R], error) {
	o := newOptions(opts)
	k := &kit[C, R]{o: o, newMachine: newMachine, gen: gen, equal: func(a, b R) bool { return reflect.DeepEqual(a, b) }}
	switch {
	case newMachine == nil:
		return nil, fmt.Errorf("storetest: newMachine is nil")
	case gen == nil:
		return nil, fmt.Errorf("storetest: gen is nil")
	case o.clients < 1 || o.calls < 1:
		return nil, fmt.Errorf("storetest: Calls(%d, %d): both must be at least 1", o.clients, o.calls)
	case o.cmds < 1:
		return nil, fmt.Errorf("storetest: BenchCommands(%d): must be at least 1", o.cmds)
	case o.hang <= 0:
		return nil, fmt.Errorf("storetest: HangAfter(%v): must be positive", o.hang)
	case o.budget < 0:
		return nil, fmt.Errorf("storetest: SearchBudget(%d): must not be negative", o.budget)
	}
	for _, p := range o.pars {
		if p < 1 {
			return nil, fmt.Errorf("storetest: Pars(%v): each must be at least 1", o.pars)
		}
	}
	if err := typed(o.readOnly, &k.readOnly, "ReadOnly"); err != nil {
		return nil, err
	}
	if err := typed(o.shards, &k.shards, "Shards"); err != nil {
		return nil, err
	}
	if err := typed(o.clone, &k.clone, "Clone"); err != nil {
		return nil, err
	}
	if o.equal != nil {
		if err := typed(o.equal, &k.equal, "Equal"); err != nil {
			return nil, err
		}
	}
	for _, s := range o.stores {
		var f func(store.Machine[C, R]) (store.Store[C, R], error)
		if err := typed(s.new, &f, "Store("+s.name+")"); err != nil {
			return nil, err
		}
		if f == nil {
			return nil, fmt.Errorf("storetest: Store(%q): constructor is nil", s.name)
		}
		k.stores = append(k.stores, subject[C, R]{s.name, f})
	}
	for _, name := range o.designs {
		if _, ok := store.LookupDesign(name); !ok {
			return nil, fmt.Errorf("storetest: Designs: unknown design %q (the registry has %v)", name, store.DesignNames())
		}
	}
	return k, nil
}

// typed stores v, an option's func, in *dst if it has dst's type.
func typed[F any](v any, dst *F, option string) error {
	if v == nil {
		return nil
	}
	f, ok := v.(F)
	if !ok {
		return fmt.Errorf("storetest: option %s is a %T, the machine needs a %T", option, v, *dst)
	}
	*dst = f
	return nil
}

// machine returns a fresh machine with the options' capabilities added.
func (k *kit[C, R]) machine() store.Machine[C, R] {
	m := k.newMachine()
	if k.readOnly == nil && k.shards == nil {
		return m
	}
	return &augmented[C, R]{m: m, readOnly: k.readOnly, shardsOf: k.shards}
}

// subjects lists the designs to run: registry rows that can host the
// machine (with their variants if asked), then the caller's own.
func (k *kit[C, R]) subjects(variants bool) ([]subject[C, R], error) {
	sample := k.machine()
	var out []subject[C, R]
	for _, d := range store.Designs() {
		named := len(k.o.designs) > 0
		if named && !contains(k.o.designs, d.Name) {
			continue
		}
		if err := store.Supports(d.Name, sample); err != nil {
			if named {
				return nil, fmt.Errorf("storetest: Designs: %w", err)
			}
			continue
		}
		out = append(out, registryRow[C, R](d.Name, d.Name, store.Config{}))
		if !variants {
			continue
		}
		if d.Owner {
			out = append(out, registryRow[C, R](d.Name+"/queue1", d.Name, store.Config{QueueSize: 1}))
		}
		if d.Needs&store.CapShards != 0 {
			out = append(out, registryRow[C, R](d.Name+"/shards2", d.Name, store.Config{Shards: 2}))
		}
	}
	out = append(out, k.stores...)
	if len(out) == 0 {
		return nil, fmt.Errorf("storetest: no design can host this machine (it has %v)", store.CapabilitiesOf(sample))
	}
	return out, nil
}

func registryRow[C, R any](name, design string, cfg store.Config) subject[C, R] {
	return subject[C, R]{name, func(m store.Machine[C, R]) (store.Store[C, R], error) { return store.New(design, m, cfg) }}
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// augmented adds the capabilities the options describe to a machine,
// forwarding those it has.
type augmented[C, R any] struct {
	m        store.Machine[C, R]
	readOnly func(C) bool
	shardsOf func(C, int) (int, int)
	n        int // from SetShards; written before the first Apply
}

func (a *augmented[C, R]) Capabilities() store.Capability {
	c := store.CapabilitiesOf(a.m)
	if a.readOnly != nil {
		c |= store.CapReads
	}
	if a.shardsOf != nil {
		c |= store.CapShards
	}
	return c
}

func (a *augmented[C, R]) Apply(cmd C) (R, error) { return a.m.Apply(cmd) }

func (a *augmented[C, R]) ReadOnly(cmd C) bool {
	if a.readOnly != nil {
		return a.readOnly(cmd)
	}
	return a.m.(store.ReadOnly[C]).ReadOnly(cmd)
}

func (a *augmented[C, R]) SetShards(n int) {
	a.n = n
	if s, ok := a.m.(store.Sharded[C]); ok {
		s.SetShards(n)
	}
}

func (a *augmented[C, R]) ShardsOf(cmd C) (int, int) {
	if a.shardsOf != nil {
		return a.shardsOf(cmd, a.n)
	}
	return a.m.(store.Sharded[C]).ShardsOf(cmd)
}

func (a *augmented[C, R]) ApplyAtomic(cmd C) (R, error) {
	return a.m.(store.Atomic[C, R]).ApplyAtomic(cmd)
}

func (a *augmented[C, R]) Commit() error { return a.m.(store.Committer).Commit() }
