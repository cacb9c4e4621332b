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
	// one).
	SampleEvery int
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
	out := SerialStats{Busy: make([]time.Duration, len(s.Busy)), SampleEvery: s.SampleEvery}
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
	s := SerialStats{Busy: make([]time.Duration, len(m.res)), SampleEvery: int(m.sampleEvery)}
	for i := range m.res {
		s.Busy[i] = time.Duration(m.res[i].total.Load())
	}
	return s
}
