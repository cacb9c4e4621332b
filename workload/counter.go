package workload

import "math"

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
