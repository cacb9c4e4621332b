package workload

import (
	"math"
	"sync/atomic"
)

// CounterOp selects what a CounterCmd does.
type CounterOp uint8

const (
	// CounterIncrement adds Delta (>= 0) and returns the new value.
	CounterIncrement CounterOp = iota + 1
	// CounterGet returns the value.
	CounterGet
	// CounterReset sets the value to 0 and returns 0.
	CounterReset
)

// CounterCmd is a command for Counter.
type CounterCmd struct {
	Op    CounterOp
	Delta int64
}

// Counter is one int64, the workload of the inputQ-vs-mutex seed.
type Counter struct {
	value int64
}

// NewCounter returns a counter at 0.
func NewCounter() *Counter { return &Counter{} }

// Apply runs cmd.
func (c *Counter) Apply(cmd CounterCmd) (int64, error) {
	switch cmd.Op {
	case CounterIncrement:
		if cmd.Delta < 0 {
			return 0, ErrNegativeDelta
		}
		if c.value > math.MaxInt64-cmd.Delta {
			return 0, ErrCounterOverflow
		}
		c.value += cmd.Delta
		return c.value, nil
	case CounterGet:
		return c.value, nil
	case CounterReset:
		c.value = 0
		return 0, nil
	default:
		return 0, ErrUnknownOp
	}
}

// ReadOnly reports whether cmd only reads (store.ReadOnly).
func (c *Counter) ReadOnly(cmd CounterCmd) bool { return cmd.Op == CounterGet }

// ApplyAtomic is Apply without a lock (store.Atomic): safe to call from any
// number of goroutines at once, each command linearizable at its successful
// compare-and-swap (or load). An increment that would overflow is refused
// and changes nothing, as with Apply. A counter is driven through Apply or
// through ApplyAtomic, never both at once.
func (c *Counter) ApplyAtomic(cmd CounterCmd) (int64, error) {
	switch cmd.Op {
	case CounterIncrement:
		if cmd.Delta < 0 {
			return 0, ErrNegativeDelta
		}
		for {
			old := atomic.LoadInt64(&c.value)
			if old > math.MaxInt64-cmd.Delta {
				return 0, ErrCounterOverflow
			}
			if atomic.CompareAndSwapInt64(&c.value, old, old+cmd.Delta) {
				return old + cmd.Delta, nil
			}
		}
	case CounterGet:
		return atomic.LoadInt64(&c.value), nil
	case CounterReset:
		atomic.StoreInt64(&c.value, 0)
		return 0, nil
	default:
		return 0, ErrUnknownOp
	}
}

// SetShards does nothing: a counter is one shard (store.Sharded), so the
// sharded designs serve it as one lock or one owner.
func (c *Counter) SetShards(int) {}

// ShardsOf puts every command on shard 0 (store.Sharded).
func (c *Counter) ShardsOf(CounterCmd) (int, int) { return 0, 0 }
