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
// What counts as busy, per design:
//
//   - Lock designs: the critical section's content, from the moment the lock
//     is held to the moment before it is let go (Apply and, with a
//     committing machine, Commit). The lock's own acquire, release and
//     hand-off between holders are not in it: they are the coordination
//     cost, the gap between the bound and what the design reaches.
//   - rwmutex: the write lock's holds only. Readers share the lock with each
//     other, so they are no serial demand of their own; they do keep writers
//     out, so on a read-heavy workload the bound drawn from the write lock
//     alone is optimistic.
//   - sharded and sharded-inputQ: each shard separately. A command on two
//     shards (or on all of them) makes each of them busy for its whole
//     length; a sharded-inputQ owner waiting for a later shard's owner to
//     apply a command it forwarded is busy too, since its shard is held.
//     Stats.Max is the busiest shard, the one that binds.
//   - inputQ, inputQ-batch, inputQ-spin, sharded-inputQ: the owner
//     goroutine from taking a command after an idle spell to finding its
//     queue empty, which includes the hand-offs it does (receiving,
//     answering) and leaves out the time it yields or waits for commands —
//     for inputQ-spin, the time it polls its empty queue too: that CPU is
//     the design's cost, counted where a process's CPU is, not demand. inputQ-batch with a
//     committing machine has a second serial stage, the syncer (commits a
//     batch, answers it): resource 1, busy from taking a batch to having
//     answered it. An owner waiting for the syncer to free a batch buffer is
//     not busy. The pipeline's bound is its busier stage: Stats.Max.
//   - combining: the combiner's role, from taking the lock to letting it go.
//   - atomic: no serial resource; SerialStats reports none.
//
// Cost and bias. Owners are timed on every busy period: a busy period
// serves many commands under load, and the owner's clock reads are its own.
// A lock's hold (and a combiner's session) is one command's worth under
// light load, and a clock read costs about as much as a short critical
// section; so one hold in SampleEvery, chosen at random by the caller
// before it takes the lock, is timed and counts SampleEvery times. The
// choice is independent of the hold's length, so the estimate is unbiased;
// its spread is that of a binomial sample (with 16, about
// 4/sqrt(holds) relative at one standard deviation). The interval timed
// holds one clock read, which is subtracted (the cost of back-to-back reads,
// measured once per store); a timed hold really is longer by about two
// clock reads, which the figure leaves out: what is reported is the demand
// without the measurement, and BenchmarkMeasuredStore in the server prices
// the difference. Busy time is added when a hold or a combining session
// ends, and an owner's open busy period is read up to now, so a saturated
// owner that never idles is seen while it runs.

// DefaultSerialSampleEvery is Config.SerialSampleEvery's default: one lock
// hold or combining session in 16 is timed.
const DefaultSerialSampleEvery = 16

// SerialStats is how busy a store's serial resources were since the store
// was made.
type SerialStats struct {
	// Busy is each serial resource's busy time, in the design's order:
	// shard i for the sharded designs; inputQ-batch's owner, then its
	// syncer when the machine commits; the one lock, owner or combiner's
	// role otherwise. Empty for a design with none (atomic).
	Busy []time.Duration
	// SampleEvery is how many lock holds or combining sessions one timed
	// one stands for (1: every one). Owner busy periods are always all
	// timed.
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

// resource is one serial resource's busy time. total is written by the
// resource's holder; since is the start of its open busy period (-1: none),
// published so that a reader can count a period that has not ended. Each
// sits on its own cache line: shards' owners write theirs side by side.
type resource struct {
	total atomic.Int64 // nanoseconds
	since atomic.Int64 // clock reading, or -1
	_     [48]byte
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
// for one or there is nothing to measure. sampled: the design's holds are
// sampled (lock designs, combining), not all timed (owners).
func newSerialMeter(n int, cfg Config, sampled bool) *serialMeter {
	if !cfg.MeasureSerial || n == 0 {
		return nil
	}
	every := 1
	if sampled {
		every = cfg.SerialSampleEvery
	}
	m := &serialMeter{epoch: time.Now(), sampleEvery: int64(every), mask: uint64(every) - 1, res: make([]resource, n)}
	for i := range m.res {
		m.res[i].since.Store(-1)
	}
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

// begin opens resource i's busy period unless one is open; its holder
// calls it.
func (m *serialMeter) begin(i int) {
	if m != nil && m.res[i].since.Load() < 0 {
		m.res[i].since.Store(m.now())
	}
}

// end closes resource i's busy period, if one is open.
func (m *serialMeter) end(i int) {
	if m == nil {
		return
	}
	r := &m.res[i]
	if t0 := r.since.Load(); t0 >= 0 {
		r.total.Add(m.since(t0))
		r.since.Store(-1)
	}
}

// stats reads every resource, an open busy period up to now. A period that
// ends while it is read is read again: end adds to total before it clears
// since, so seeing since unchanged around the total means neither or both.
func (m *serialMeter) stats() SerialStats {
	s := SerialStats{Busy: make([]time.Duration, len(m.res)), SampleEvery: int(m.sampleEvery)}
	for i := range m.res {
		r := &m.res[i]
		for {
			t0 := r.since.Load()
			total := r.total.Load()
			if r.since.Load() != t0 {
				continue
			}
			if t0 >= 0 {
				total += max(m.now()-t0, 0)
			}
			s.Busy[i] = time.Duration(total)
			break
		}
	}
	return s
}
