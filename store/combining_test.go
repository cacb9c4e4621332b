package store

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blocker holds whoever applies (or commits) until release is closed.
type blocker struct {
	entered chan struct{} // one token per Apply (or Commit) that started
	release chan struct{}
	commits bool // block in Commit, not in Apply
}

func (b *blocker) Apply(cmd int) (int, error) {
	if !b.commits {
		b.entered <- struct{}{}
		<-b.release
	}
	return cmd, nil
}

// committingBlocker is a blocker that is a Committer.
type committingBlocker struct{ *blocker }

func (b committingBlocker) Commit() error {
	b.entered <- struct{}{}
	<-b.release
	return nil
}

func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestCombiningWaitersPark: while a combiner is stuck in a sync, the other
// callers of a committing machine park (they would starve the syncing
// combiner of CPU if they spun); with a machine that does not commit they
// spin, yielding — the control, which shows the measure can tell the two
// apart. The bounds are far apart: a parked process uses next to no CPU, a
// spinning one uses whole cores.
func TestCombiningWaitersPark(t *testing.T) {
	const callers = 8
	const hold = 300 * time.Millisecond
	run := func(t *testing.T, m Machine[int, int], b *blocker) time.Duration {
		s, err := New("combining", m, Config{})
		require.NoError(t, err)
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				_, err := s.Do(context.Background(), i)
				assert.NoError(t, err)
			})
		}
		<-b.entered // a combiner is stuck
		time.Sleep(50 * time.Millisecond) // let the others publish and settle
		start := cpuTime(t)
		time.Sleep(hold)
		used := cpuTime(t) - start
		close(b.release)
		go func() {
			for range b.entered { // later passes need no holding
			}
		}()
		wg.Wait()
		require.NoError(t, s.Close())
		close(b.entered)
		return used
	}
	t.Run("committing machine: waiters park", func(t *testing.T) {
		b := &blocker{entered: make(chan struct{}), release: make(chan struct{}), commits: true}
		used := run(t, committingBlocker{b}, b)
		assert.Less(t, used, hold/5, "CPU used while the combiner synced")
	})
	t.Run("control, plain machine: waiters spin", func(t *testing.T) {
		b := &blocker{entered: make(chan struct{}), release: make(chan struct{})}
		used := run(t, b, b)
		assert.Greater(t, used, hold/4, "CPU used while the combiner applied")
	})
}
