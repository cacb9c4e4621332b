package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/cmdgen"
	"github.com/locklab/locklab/workload"
)

// The design fuzz targets apply a sequence of commands, valid or not and
// decoded from the input by internal/cmdgen, through every registry design
// that serves the workload (designsFor: with its queue-of-one and two-shard
// variants) and directly to a fresh machine, and require the same result or
// the same refusal at every step. A design must be invisible to a single
// caller. `make fuzz` runs them; `go test` runs their seeds.

// fuzzDesigns runs cmds through every design of designsFor(newMachine()).
func fuzzDesigns[C, R any](t *testing.T, newMachine func() Machine[C, R], cmds []C, final []C) {
	for _, d := range designsFor(newMachine()) {
		s := d.new(newMachine())
		sameAsMachine(t, d.name, s, newMachine(), append(cmds, final...))
		require.NoError(t, s.Close(), d.name)
	}
}

// sameAsMachine applies cmds through s and to ref, one at a time, and
// requires the same answers.
func sameAsMachine[C, R any](t require.TestingT, name string, s Store[C, R], ref Machine[C, R], cmds []C) {
	ctx := context.Background()
	for i, cmd := range cmds {
		want, wantErr := ref.Apply(cmd)
		got, err := s.Do(ctx, cmd)
		if wantErr != nil {
			require.ErrorIs(t, err, wantErr, "%s, step %d, %+v", name, i, cmd)
		} else {
			require.NoError(t, err, "%s, step %d, %+v", name, i, cmd)
		}
		require.Equal(t, fmt.Sprintf("%+v", want), fmt.Sprintf("%+v", got), "%s, step %d, %+v", name, i, cmd)
	}
}

// lossy drops every third command: a broken design for the control.
type lossy[C, R any] struct {
	Store[C, R]
	n int
}

func (l *lossy[C, R]) Do(ctx context.Context, cmd C) (R, error) {
	if l.n++; l.n%3 == 0 {
		var zero R
		return zero, nil
	}
	return l.Store.Do(ctx, cmd)
}

// failed records whether a check failed; FailNow stops the check.
type failed struct{ msgs []string }

type stopped struct{}

func (f *failed) Errorf(format string, args ...any) {
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}
func (f *failed) FailNow() { panic(stopped{}) }

// TestSameAsMachineCatches is the control: the check the design fuzz
// targets make fails for a store that loses commands, and passes for the
// same store unbroken.
func TestSameAsMachineCatches(t *testing.T) {
	cmds := cmdgen.Counter([]byte{1, 0, 5, 1, 0, 5, 1, 0, 5, 2, 0})
	check := func(s Store[workload.CounterCmd, int64]) (f *failed) {
		f = &failed{}
		defer func() {
			if r := recover(); r != nil && r != (stopped{}) {
				panic(r)
			}
		}()
		sameAsMachine(f, "under test", s, Machine[workload.CounterCmd, int64](workload.NewCounter()), cmds)
		return f
	}
	for _, d := range designsFor(Machine[workload.CounterCmd, int64](workload.NewCounter())) {
		t.Run(d.name, func(t *testing.T) {
			good := d.new(workload.NewCounter())
			defer good.Close()
			require.Empty(t, check(good).msgs)
			bad := d.new(workload.NewCounter())
			defer bad.Close()
			require.NotEmpty(t, check(&lossy[workload.CounterCmd, int64]{Store: bad}).msgs, "a lost command must be caught")
		})
	}
}

func FuzzDesignsCounter(f *testing.F) {
	f.Add([]byte{1, 0, 5, 2, 0})
	f.Add([]byte{1, 2, 0, 1, 0, 1, 3, 0, 2, 0}) // overflow, reset, get
	f.Add([]byte{1, 0, 0xff, 4, 0})             // negative delta, unknown op
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzDesigns(t, func() Machine[workload.CounterCmd, int64] { return workload.NewCounter() },
			cmdgen.Counter(data), []workload.CounterCmd{{Op: workload.CounterGet}})
	})
}

func FuzzDesignsBank(f *testing.F) {
	f.Add([]byte{1, 0, 1, 0, 10, 2, 0, 3, 0, 0, 0, 5, 0})
	f.Add([]byte{1, 1, 0, 0, 101, 1, 245, 1, 0, 10}) // insufficient funds; account 0
	f.Add([]byte{4, 1, 2, 0, 0, 5, 1, 0, 1, 0, 3})   // reset to 2 accounts, then a transfer
	f.Add([]byte{3, 0, 0, 0, 3, 0, 232, 3, 6, 0})    // history limits; unknown op
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzDesigns(t, func() Machine[workload.BankCmd, workload.BankResult] {
			b, err := workload.NewBank(cmdgen.SmallBank)
			if err != nil {
				panic(err)
			}
			return b
		}, cmdgen.Bank(data), []workload.BankCmd{{Op: workload.BankSummary}})
	})
}

func FuzzDesignsKV(f *testing.F) {
	f.Add([]byte{1, 0, 3, 'a', 'b', 'c', 2, 0, 4, 0})
	f.Add([]byte{2, 1, 1, 240, 0, 1, 248, 0, 3, 0, 4, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzDesigns(t, func() Machine[workload.KVCmd, workload.KVResult] { return workload.NewKV() },
			cmdgen.KV(data), []workload.KVCmd{{Op: workload.KVLen}})
	})
}
