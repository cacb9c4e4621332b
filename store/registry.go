package store

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrUnsupported is returned (wrapped, naming the design and what the machine
// lacks) by New and Supports for a machine a design cannot serve with its
// full contract.
var ErrUnsupported = errors.New("store: design does not support this machine")

// Defaults of Config's zero fields.
const (
	// DefaultQueueSize is the capacity of an owner's queue. It is large
	// enough that the 1000 concurrent callers of the load tests enqueue
	// without blocking, and small enough that a stalled owner pushes back
	// on callers instead of buffering without bound.
	DefaultQueueSize = 1024
	// DefaultBatchLimit is how many queued commands inputQ-batch applies per
	// wake-up (and covers with one Commit). 64 amortises the wake-up and the
	// sync over many commands while keeping a batch's answers from waiting
	// long behind each other.
	DefaultBatchLimit = 64
	// DefaultShards is the shard count of the sharded designs: a few times
	// the cores of the machines we measure on, so that two random accounts
	// rarely share a shard, and few enough that a command touching every
	// shard (a bank summary) stays cheap.
	DefaultShards = 16
	// DefaultSpinBudget is how long inputQ-spin's owner polls its empty
	// queue before it parks (and a caller polls for its answer before it
	// blocks). A park costs a wake-up when the next command comes — a trip
	// through the scheduler, often a futex call, which the lab's attribution
	// finds on the owner's commands as scheduler latency — and spinning about
	// as long as a block costs is the classic rule for a waiter that cannot
	// know how long it will wait: it never spends more than twice what the
	// better choice would have. 50 µs is of the order of such a wake-up on
	// the machines we measure, long enough to keep the owner awake across the
	// gaps of a busy load, and short enough that an idle store goes quiet
	// within a fraction of a millisecond.
	DefaultSpinBudget = 50 * time.Microsecond
	// SpinForever, as Config.SpinBudget, keeps inputQ-spin's owner polling
	// however long its queue stays empty: a budget that never runs out.
	SpinForever = time.Duration(math.MaxInt64)
)

// Config holds every design's options; each design reads the ones it uses.
// Its zero value gives the defaults.
type Config struct {
	QueueSize  int // owner designs: queue capacity; 0 means DefaultQueueSize
	BatchLimit int // inputQ-batch: commands per batch; 0 means DefaultBatchLimit
	Shards     int // sharded designs: shard count; 0 means DefaultShards
	// MeasureSerial keeps the store's clocks (SerialStats): the serial
	// resources' busy time, the commands' waits for them and the batches
	// they took; off, SerialStats reports nothing and Do pays nothing for
	// it.
	MeasureSerial bool
	// SerialSampleEvery: with MeasureSerial, every design times one
	// content (a lock hold, an owner's command, a combining pass) and one
	// command's wait in this many, chosen at random (a power of two; 1
	// times every one); 0 means DefaultSerialSampleEvery.
	SerialSampleEvery int
	// RejectWhenFull: owner designs answer ErrOverloaded at once when the
	// owner's queue is full, instead of waiting for room. Other designs
	// have no queue and ignore it.
	RejectWhenFull bool
	// SpinBudget: inputQ-spin's owner polls its empty queue this long
	// before it parks, and a caller polls for its answer this long before
	// it blocks; 0 means DefaultSpinBudget, SpinForever never parks. Ignored
	// with one P (GOMAXPROCS 1), where nothing else can run while a
	// goroutine spins.
	SpinBudget time.Duration
}

func (c Config) withDefaults() (Config, error) {
	switch {
	case c.QueueSize < 0:
		return c, fmt.Errorf("store: queue size %d < 0", c.QueueSize)
	case c.BatchLimit < 0:
		return c, fmt.Errorf("store: batch limit %d < 0", c.BatchLimit)
	case c.Shards < 0:
		return c, fmt.Errorf("store: shard count %d < 0", c.Shards)
	case c.SpinBudget < 0:
		return c, fmt.Errorf("store: spin budget %v < 0", c.SpinBudget)
	case c.SerialSampleEvery < 0 || c.SerialSampleEvery&(c.SerialSampleEvery-1) != 0:
		return c, fmt.Errorf("store: serial sample every %d: want 0 or a power of two", c.SerialSampleEvery)
	}
	if c.QueueSize == 0 {
		c.QueueSize = DefaultQueueSize
	}
	if c.BatchLimit == 0 {
		c.BatchLimit = DefaultBatchLimit
	}
	if c.Shards == 0 {
		c.Shards = DefaultShards
	}
	if c.SerialSampleEvery == 0 {
		c.SerialSampleEvery = DefaultSerialSampleEvery
	}
	if c.SpinBudget == 0 {
		c.SpinBudget = DefaultSpinBudget
	}
	return c, nil
}

// Design is one row of the registry: a concurrency design that makes any
// machine with the capabilities it needs safe to call from many goroutines.
type Design struct {
	Name  string     // as -mode names it
	Doc   string     // one line
	Needs Capability // what the machine must be able to do
	// Owner: one or more goroutines own the machine and callers hand them
	// commands (the store reports its queue).
	Owner bool
	// Durable: the design serves a Committer machine, calling Commit
	// before it answers.
	Durable bool
	// GroupCommit: one Commit covers many commands.
	GroupCommit bool

	new func(mi machineInfo, cfg Config) engine
}

// registry is the one list of designs. Everything that lists designs — the
// server's modes, its -help, the tests, the benchmarks, make e2e and the
// runner — ranges over it. A design is one file and one row here.
var registry = []Design{
	{Name: "mutex", Doc: "a sync.Mutex around every Apply", Durable: true, new: newMutexEngine},
	{Name: "rwmutex", Doc: "reads share an RLock, writes take the lock alone", Needs: CapReads, Durable: true, new: newRWMutexEngine},
	{Name: "sharded", Doc: "striped locks over a sharded state; a two-shard command locks both in order", Needs: CapShards, Durable: true, new: newShardedEngine},
	{Name: "atomic", Doc: "lock-free: the machine's own atomic Apply, no lock and no goroutine", Needs: CapAtomic, new: newAtomicEngine},
	{Name: "inputQ", Doc: "one owner goroutine applies commands from a bounded channel, one per hand-off", Owner: true, Durable: true, new: newInputQEngine},
	{Name: "inputQ-batch", Doc: "one owner goroutine drains many queued commands per wake-up, applies, commits once, answers them", Owner: true, Durable: true, GroupCommit: true, new: newInputQBatchEngine},
	{Name: "inputQ-spin", Doc: "one owner goroutine on a thread of its own polls a lock-free queue, spinning a bounded time before it parks", Owner: true, Durable: true, new: newInputQSpinEngine},
	{Name: "sharded-inputQ", Doc: "one owner goroutine per shard; a two-shard command travels up the owners in shard order", Needs: CapShards, Owner: true, Durable: true, new: newShardedInputQEngine},
	{Name: "combining", Doc: "flat combining: callers publish commands, whoever takes the lock applies them all", Durable: true, GroupCommit: true, new: newCombiningEngine},
	{Name: "db-rowlock", Doc: "no lock in the process: every command is a database transaction of its own, ordered by the database's row locks", Needs: CapTx, Durable: true, new: newRowLockEngine},
	{Name: "routed-owner", Doc: "one owner goroutine per replica serves the keys routed to it from memory, written through to the database under a fencing epoch", Needs: CapOwned, Owner: true, Durable: true, new: newInputQEngine},
}

// Designs returns the registry in its order.
func Designs() []Design { return append([]Design(nil), registry...) }

// DesignNames returns the names of Designs in order.
func DesignNames() []string {
	names := make([]string, len(registry))
	for i, d := range registry {
		names[i] = d.Name
	}
	return names
}

// LookupDesign finds a design by its exact name.
func LookupDesign(name string) (Design, bool) {
	for _, d := range registry {
		if d.Name == name {
			return d, true
		}
	}
	return Design{}, false
}

// Supports reports whether New(design, m, …) would succeed: nil, or an error
// wrapping ErrUnsupported that names the design and what m lacks.
func Supports[C, R any](design string, m Machine[C, R]) error {
	d, ok := LookupDesign(design)
	if !ok {
		return fmt.Errorf("store: unknown design %q", design)
	}
	return d.Supports(CapabilitiesOf(m))
}

// Supports reports whether the design can serve a machine with the
// capabilities has (CapabilitiesOf): nil, or an error wrapping ErrUnsupported
// that names the design and what the machine lacks.
func (d Design) Supports(has Capability) error {
	if miss := d.Needs &^ has; miss != 0 {
		return fmt.Errorf("%w: %s needs a machine with %s", ErrUnsupported, d.Name, miss)
	}
	if has&CapCommit != 0 && !d.Durable {
		return fmt.Errorf("%w: %s cannot make commands durable", ErrUnsupported, d.Name)
	}
	return nil
}

// New wraps m in the named design: LookupDesign, then Wrap. The caller must
// not use m directly afterwards, and must Close the store.
func New[C, R any](design string, m Machine[C, R], cfg Config) (Store[C, R], error) {
	d, ok := LookupDesign(design)
	if !ok {
		return nil, fmt.Errorf("store: unknown design %q", design)
	}
	return Wrap(d, m, cfg)
}

// Wrap wraps m in design d, a row of Designs already looked up (a server
// resolves its design once and wraps every workload's machine in it). The
// caller must not use m directly afterwards, and must Close the store.
func Wrap[C, R any](d Design, m Machine[C, R], cfg Config) (Store[C, R], error) {
	if d.new == nil {
		return nil, fmt.Errorf("store: design %q is not a row of the registry", d.Name)
	}
	caps := CapabilitiesOf(m)
	if err := d.Supports(caps); err != nil {
		return nil, err
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return newFacade(d, m, caps, cfg), nil
}
