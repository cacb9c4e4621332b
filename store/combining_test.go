package store

import (
	"context"
	"runtime"
	"strings"
	"sync"
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

// parkedIn counts the goroutines blocked on a channel receive in fn itself
// (fn is their top frame), from a dump of every goroutine's stack.
func parkedIn(fn string) int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		lines := strings.SplitN(g, "\n", 3)
		if len(lines) > 1 && strings.Contains(lines[0], "[chan receive") && strings.Contains(lines[1], fn) {
			n++
		}
	}
	return n
}

// TestCombiningWaitersPark: while a combiner is stuck in a sync, the other
// callers of a committing machine park on their answer (they would starve
// the syncing combiner of CPU if they spun); with a machine that does not
// commit they spin, yielding, and none parks — the control, which shows the
// stack dump can tell the two apart.
func TestCombiningWaitersPark(t *testing.T) {
	const callers = 8
	const exec = "(*combiningEngine).exec"
	run := func(t *testing.T, m Machine[int, int], b *blocker, check func()) {
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
		check()
		close(b.release)
		go func() {
			for range b.entered { // later passes need no holding
			}
		}()
		wg.Wait()
		require.NoError(t, s.Close())
		close(b.entered)
	}
	t.Run("committing machine: waiters park", func(t *testing.T) {
		b := &blocker{entered: make(chan struct{}), release: make(chan struct{}), commits: true}
		run(t, committingBlocker{b}, b, func() {
			waitFor(t, func() bool { return parkedIn(exec) == callers-1 }, "%d waiters parked", callers-1)
		})
	})
	t.Run("control, plain machine: waiters spin", func(t *testing.T) {
		b := &blocker{entered: make(chan struct{}), release: make(chan struct{})}
		run(t, b, b, func() {
			time.Sleep(100 * time.Millisecond) // time enough to park, were they to
			assert.Zero(t, parkedIn(exec), "waiters parked")
		})
	})
}
