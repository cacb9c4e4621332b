package store

import (
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// Every design has one serial resource, the thing a second core cannot
// share: the lock (mutex, rwmutex), each shard's lock (sharded), the owner
// goroutine (inputQ, inputQ-batch, inputQ-spin), each shard's owner (sharded-inputQ), the
// combiner's role (combining); atomic has none. How busy that resource was,
// over how many commands, is the design's serial demand per command: by the
// utilization law no number of cores serves more than one command per unit
// of it. SerialStats measures it.
//
// What counts as busy is one rule for every design: the content of the
// serial work — Apply and, with a committing machine, Commit — done while
// the resource is held. How a command reaches the resource and its answer
// leaves it is not: a lock's acquire, release and hand-off between holders,
// an owner's receive from its queue and its answer to the caller, the
// combiner's taking of the published list and its answers. Those are the
// design's coordination cost, and they differ between designs in kind (a
// lock hand-off against a channel receive); counting one side's and not the
// other's would tilt every comparison of serial demands. Per design:
//
//   - Lock designs: from the moment the lock is held to the moment before
//     it is let go.
//   - rwmutex: the write lock's holds only. Readers share the lock with each
//     other, so they are no serial demand of their own; they do keep writers
//     out, so on a read-heavy workload the bound drawn from the write lock
//     alone is optimistic.
//   - sharded and sharded-inputQ: each shard separately. A command on two
//     shards (or on all of them) makes each of them busy for its content,
//     as the lock designs' holds do; a sharded-inputQ owner forwarding a
//     command and waiting for a later shard's owner to apply it is not
//     busy (its wait is the hand-off, as a lock's wait for its second lock
//     is). Stats.Max is the busiest shard, the one that binds.
//   - inputQ, inputQ-batch, inputQ-spin, sharded-inputQ: the owner
//     goroutine while it applies (and commits) a command; not while it
//     receives one, answers one, yields, parks, or (inputQ-spin) polls its
//     empty queue. inputQ-batch applies a batch at a time: the batch's
//     applies are the owner's busy time. With a committing machine it has
//     a second serial stage, the syncer: resource 1, busy while it
//     commits a batch (not while it answers it). The pipeline's bound is
//     its busier stage: Stats.Max.
//   - combining: the combiner's role while it applies and commits the
//     commands it took; not while it takes the published list or answers.
//   - atomic: no serial resource; SerialStats reports none.
//
// Cost and bias. A command's content is short, and a clock read costs
// about as much as a short critical section; so one command in SampleEvery
// (one lock hold, one owner's command, one combining pass, one syncer's
// commit), chosen at random before it starts, is timed and counts
// SampleEvery times. The choice is independent of the content's length,
// so the estimate is unbiased;
// its spread is that of a binomial sample (with 16, about
// 4/sqrt(holds) relative at one standard deviation). The interval timed
// holds one clock read, which is subtracted (the cost of back-to-back reads,
// measured once per store); a timed hold really is longer by about two
// clock reads, which the figure leaves out: what is reported is the demand
// without the measurement, and BenchmarkMeasuredStore in the server prices
// the difference. Busy time is added when a timed content ends: a command
// still inside Apply is not yet in it. What the rule costs: the hand-offs
// that the owner designs' figure held before are now in no serial figure —
// they show as the gap between a design's bound and what it reaches, and in
// its CPU per call — so an owner's serial demand is lower, and its ceiling
// 1/D_serial higher, than a figure that counted them.

// The same meter keeps the store's other two clocks, sampled by the same
// rule (one command in SampleEvery, chosen at random before it starts, the
// choice independent of the holds' and of the command's length):
//
//   - The wait: how long a command waited before the serial resource took
//     it — one quantity for every kind. A lock design's command, from the
//     moment before it asks for the lock (both locks, for a sharded
//     command on two shards; rwmutex's readers too, whom a writer keeps
//     out) to the moment it holds it: the lock wait. An owner design's
//     command, from the moment before it is put in the owner's queue to
//     the moment the owner that applies it takes it (sharded-inputQ: the
//     last owner, a forwarded command's whole way up): the mailbox age.
//     inputQ-batch: until its owner takes the batch (not the syncer);
//     combining: from before the command is published to the moment a
//     combiner takes the list it is on. Both ends are read on the same
//     clock (one origin per store), less one clock read. The waits go
//     into a histogram of fixed buckets, eight to each power of two, one
//     atomic add each: a quantile read from it is within 1/16 of its
//     value (WaitResolution). atomic has no serial resource and no wait;
//     db-rowlock's waits are the database's, not the process's: none.
//   - The batch: how many commands the serial resource took in one go.
//     inputQ-batch's group and combining's pass, recorded when the
//     group's content is timed (the same one in SampleEvery); for the
//     owners that take one command at a time (inputQ, inputQ-spin,
//     sharded-inputQ), the commands an owner took between two times it
//     found its queue empty — per wake-up — recorded, every one, when it
//     finds the queue empty (two atomic adds beside a yield or a park).
//     Lock designs take one command per hold: no batch.
//
// Nothing here takes a lock: a measured wait or batch is an atomic add on
// the meter, the caller's clock reading travels in the command (the
// owner's queue and the combiner's list publish it), and the designs that
// have no serial resource (atomic) have no meter.

// DefaultSerialSampleEvery is Config.SerialSampleEvery's default: one
// command's content in 16 is timed.
const DefaultSerialSampleEvery = 16

// SerialStats is how busy a store's serial resources were since the store
// was made.
type SerialStats struct {
	// Busy is each serial resource's busy time, in the design's order:
	// shard i for the sharded designs; inputQ-batch's owner, then its
	// syncer when the machine commits; the one lock, owner or combiner's
	// role otherwise. Empty for a design with none (atomic).
	Busy []time.Duration
	// SampleEvery is how many contents (lock holds, owners' commands,
	// combining passes, syncer commits) one timed one stands for (1: every
	// one). Waits and groups are sampled at the same rate, but not scaled:
	// their figures are a distribution and a mean.
	SampleEvery int
	// Wait is the sampled commands' waits for the serial resource: the
	// lock wait of a lock design, the mailbox age of an owner design.
	// Empty for a design with no serial resource.
	Wait Waits
	// Batches and BatchCommands are the batches seen (inputQ-batch's
	// groups and combining's passes: the sampled ones; one-at-a-time
	// owners' runs between two empty queues: every one) and the commands
	// they held. 0 for lock designs.
	Batches, BatchCommands int64
}

// MeanBatch is the commands per batch, BatchCommands over Batches; 0
// without a batch.
func (s SerialStats) MeanBatch() float64 {
	if s.Batches <= 0 {
		return 0
	}
	return float64(s.BatchCommands) / float64(s.Batches)
}

// Resources is the number of serial resources.
func (s SerialStats) Resources() int { return len(s.Busy) }

// Total is the busy time summed over the resources.
func (s SerialStats) Total() time.Duration {
	var t time.Duration
	for _, b := range s.Busy {
		t += b
	}
	return t
}

// Max is the busy time of the busiest resource, the one that bounds
// throughput; 0 without a resource.
func (s SerialStats) Max() time.Duration {
	var m time.Duration
	for _, b := range s.Busy {
		m = max(m, b)
	}
	return m
}

// Sub is what happened between an earlier reading s0 of the same store and
// s: the busy time of each resource in that window.
func (s SerialStats) Sub(s0 SerialStats) SerialStats {
	out := SerialStats{Busy: make([]time.Duration, len(s.Busy)), SampleEvery: s.SampleEvery, Wait: s.Wait.Sub(s0.Wait),
		Batches: max(s.Batches-s0.Batches, 0), BatchCommands: max(s.BatchCommands-s0.BatchCommands, 0)}
	for i, b := range s.Busy {
		if i < len(s0.Busy) {
			b -= s0.Busy[i]
		}
		out.Busy[i] = max(b, 0)
	}
	return out
}

// SerialReporter is implemented by every registry design's store.
// SerialStats reports ok false unless the store was made with
// Config.MeasureSerial.
type SerialReporter interface {
	SerialStats() (s SerialStats, ok bool)
}

// resource is one serial resource's busy time, written by its holders.
// Each sits on its own cache line: shards' owners write theirs side by side.
type resource struct {
	total atomic.Int64 // nanoseconds
	_     [56]byte
}

// serialMeter measures a design's serial resources. Its clock is time.Since
// a per-meter origin: one monotonic read, cheaper than time.Now's two.
type serialMeter struct {
	epoch       time.Time
	overhead    int64 // one clock read, as seen between two back-to-back reads
	mask        uint64
	sampleEvery int64
	res         []resource
	waits       waitClock
	_           [56]byte
	batches     atomic.Int64 // batches recorded
	batchCmds   atomic.Int64 // the commands in them
}

// newSerialMeter returns a meter of n resources, or nil if cfg does not ask
// for one or there is nothing to measure.
func newSerialMeter(n int, cfg Config) *serialMeter {
	if !cfg.MeasureSerial || n == 0 {
		return nil
	}
	every := cfg.SerialSampleEvery
	m := &serialMeter{epoch: time.Now(), sampleEvery: int64(every), mask: uint64(every) - 1, res: make([]resource, n)}
	// The smallest of a few gaps between back-to-back reads: a larger one was
	// interrupted.
	m.overhead = 1 << 62
	for range 32 {
		t0 := m.now()
		m.overhead = min(m.overhead, m.now()-t0)
	}
	return m
}

func (m *serialMeter) now() int64 { return int64(time.Since(m.epoch)) }

// sample reports whether the caller about to take a lock times its hold.
func (m *serialMeter) sample() bool { return m != nil && rand.Uint64()&m.mask == 0 }

// pick is a lock design's two choices for one command, from one random
// number: whether it times its hold (never a reader's), and its wait.
func (m *serialMeter) pick(read bool) (hold, wait bool) {
	if m == nil {
		return false, false
	}
	r := rand.Uint64()
	return !read && r&m.mask == 0, (r>>32)&m.mask == 0
}

// waitStart is the clock reading a command carries to an executor's serial
// resource if its wait is timed, -1 if not (or there is no meter).
func (m *serialMeter) waitStart() int64 {
	if m == nil || rand.Uint64()&m.mask != 0 {
		return -1
	}
	return m.now()
}

// waited records a wait from the clock reading w0 to the reading t1.
func (m *serialMeter) waited(w0, t1 int64) { m.waits.add(max(t1-w0-m.overhead, 0)) }

// took records x's wait, if it carries a timed one, as taken now.
func (m *serialMeter) took(x op) {
	if m == nil {
		return
	}
	if w0 := x.waitStart(); w0 >= 0 {
		m.waited(w0, m.now())
	}
}

// tookAll records the waits of a group taken at once, on one clock read.
func (m *serialMeter) tookAll(batch []op) {
	if m == nil {
		return
	}
	t1 := int64(-1)
	for _, x := range batch {
		if w0 := x.waitStart(); w0 >= 0 {
			if t1 < 0 {
				t1 = m.now()
			}
			m.waited(w0, t1)
		}
	}
}

// batch records a batch of n commands.
func (m *serialMeter) batch(n int) {
	if m != nil && n > 0 {
		m.batches.Add(1)
		m.batchCmds.Add(int64(n))
	}
}

// since is the time from the clock reading t0 to now, less the clock read
// inside that interval.
func (m *serialMeter) since(t0 int64) int64 { return max(m.now()-t0-m.overhead, 0) }

// held adds a sampled hold of d to the resources a touched: shards a and b,
// or every resource if a.a < 0.
func (m *serialMeter) held(a access, d int64) {
	d *= m.sampleEvery
	if a.a < 0 || len(m.res) == 1 {
		for i := range m.res {
			m.res[i].total.Add(d)
		}
		return
	}
	m.res[a.a].total.Add(d)
	if a.b != a.a {
		m.res[a.b].total.Add(d)
	}
}

// start is the clock reading at the start of a command's content if the
// meter times this one, -1 if not (or there is no meter).
func (m *serialMeter) start() int64 {
	if !m.sample() {
		return -1
	}
	return m.now()
}

// stop adds the content timed from t0 (start's reading) to resource i; a
// t0 of -1 adds nothing.
func (m *serialMeter) stop(t0 int64, i int) {
	if t0 >= 0 {
		m.res[i].total.Add(m.since(t0) * m.sampleEvery)
	}
}

// stopOn adds the content timed from t0 to the resources a touched (shards
// a and b, or every resource if a.a < 0).
func (m *serialMeter) stopOn(t0 int64, a access) {
	if t0 >= 0 {
		m.held(a, m.since(t0))
	}
}

// stats reads every resource.
func (m *serialMeter) stats() SerialStats {
	s := SerialStats{Busy: make([]time.Duration, len(m.res)), SampleEvery: int(m.sampleEvery), Wait: m.waits.read(),
		Batches: m.batches.Load(), BatchCommands: m.batchCmds.Load()}
	for i := range m.res {
		s.Busy[i] = time.Duration(m.res[i].total.Load())
	}
	return s
}
