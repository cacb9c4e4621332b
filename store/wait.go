package store

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// The waits' histogram: fixed buckets, exact below 16 ns, then eight to
// each power of two up to 2^40 ns (about 18 minutes; longer waits count in
// the last bucket). Recording one is an atomic add on its bucket and one on
// the sum, so that any number of goroutines record at once without a lock.
const (
	waitSubBits = 3 // 2^3 buckets to a power of two
	waitMaxExp  = 40
	waitBuckets = (waitMaxExp-waitSubBits)<<waitSubBits + 2<<waitSubBits
)

// WaitResolution is how far a quantile read from Waits can be from the
// wait it stands for, relative to it: half a bucket, eight buckets to a
// power of two.
const WaitResolution = 1.0 / 16

// waitBucket is the bucket of a wait of v ns (v >= 0).
func waitBucket(v int64) int {
	if v < 2<<waitSubBits {
		return int(v)
	}
	e := bits.Len64(uint64(v)) - 1 // 2^e <= v
	if e > waitMaxExp {
		return waitBuckets - 1
	}
	shift := e - waitSubBits
	return shift<<waitSubBits + int(v>>shift)
}

// waitBounds are bucket i's bounds in ns: lo <= v < hi.
func waitBounds(i int) (lo, hi int64) {
	if i < 2<<waitSubBits {
		return int64(i), int64(i) + 1
	}
	shift := i>>waitSubBits - 1
	top := int64(i&(1<<waitSubBits-1) + 1<<waitSubBits)
	return top << shift, (top + 1) << shift
}

// waitClock is a meter's histogram of waits.
type waitClock struct {
	sum    atomic.Int64 // ns
	counts [waitBuckets]atomic.Uint64
}

func (w *waitClock) add(ns int64) {
	w.counts[waitBucket(ns)].Add(1)
	w.sum.Add(ns)
}

func (w *waitClock) read() Waits {
	out := Waits{Counts: make([]uint64, waitBuckets), Sum: time.Duration(w.sum.Load())}
	for i := range w.counts {
		out.Counts[i] = w.counts[i].Load()
	}
	return out
}

// Waits is a distribution of sampled waits (SerialStats.Wait).
type Waits struct {
	// Counts is the waits per bucket of the store's fixed buckets; nil
	// without a meter.
	Counts []uint64
	Sum    time.Duration // of every wait counted
}

// Count is the number of waits.
func (w Waits) Count() uint64 {
	var n uint64
	for _, c := range w.Counts {
		n += c
	}
	return n
}

// Mean is the mean wait; 0 without one.
func (w Waits) Mean() time.Duration {
	n := w.Count()
	if n == 0 {
		return 0
	}
	return w.Sum / time.Duration(n)
}

// Quantile is the wait at quantile q (0 < q <= 1): the middle of the
// bucket that holds it, within WaitResolution of it; 0 without a wait.
func (w Waits) Quantile(q float64) time.Duration {
	n := w.Count()
	if n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(n)))
	rank = min(max(rank, 1), n)
	var seen uint64
	for i, c := range w.Counts {
		if seen += c; seen >= rank {
			lo, hi := waitBounds(i)
			if hi-lo == 1 {
				return time.Duration(lo)
			}
			return time.Duration((lo + hi) / 2)
		}
	}
	return 0 // not reached
}

// Below is the number of waits shorter than d, exact where d is a power of
// two nanoseconds (a bound of the buckets): the buckets that end at or
// below d.
func (w Waits) Below(d time.Duration) uint64 {
	var n uint64
	for i, c := range w.Counts {
		if _, hi := waitBounds(i); hi > int64(d) {
			break
		}
		n += c
	}
	return n
}

// Sub is what was recorded between an earlier reading w0 of the same store
// and w.
func (w Waits) Sub(w0 Waits) Waits {
	if w.Counts == nil {
		return Waits{}
	}
	out := Waits{Counts: make([]uint64, len(w.Counts)), Sum: max(w.Sum-w0.Sum, 0)}
	for i, c := range w.Counts {
		if i < len(w0.Counts) {
			c -= min(w0.Counts[i], c)
		}
		out.Counts[i] = c
	}
	return out
}
