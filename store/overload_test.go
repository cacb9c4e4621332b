package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRejectWhenFull: with the owner held inside Apply and its queue full,
// an owner design made with RejectWhenFull answers the next command
// ErrOverloaded at once, and never applies it; every accepted command is
// still applied and answered. The control, without the option: the same
// command waits for room (until its context ends).
func TestRejectWhenFull(t *testing.T) {
	const size = 2
	for _, d := range Designs() {
		if !d.Owner {
			continue
		}
		for _, reject := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/reject=%v", d.Name, reject), func(t *testing.T) {
				g := newGate()
				s, err := New(d.Name, Machine[int, int](capableOf[int, int](g)), Config{QueueSize: size, RejectWhenFull: reject})
				require.NoError(t, err)
				out := make(chan error, size+1)
				do := func(cmd int) {
					go func() { // reports on out, drained below
						_, err := s.Do(context.Background(), cmd)
						out <- err
					}()
				}
				do(0)
				require.Equal(t, 0, within(t, g.entered, "the owner did not take the command"))
				for cmd := 1; cmd <= size; cmd++ {
					do(cmd)
				}
				waitFor(t, func() bool { return s.(QueueReporter).QueueLen() == size }, "queue full")

				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				defer cancel()
				start := time.Now()
				_, err = s.Do(ctx, 99)
				if reject {
					require.ErrorIs(t, err, ErrOverloaded)
					assert.Less(t, time.Since(start), 40*time.Millisecond, "rejected at once, not after waiting")
				} else {
					require.ErrorIs(t, err, context.DeadlineExceeded, "without the option a full queue makes callers wait")
				}

				close(g.release)
				for range size + 1 {
					assert.NoError(t, within(t, out, "an accepted command was not answered"))
				}
				require.NoError(t, s.Close())
				assert.ElementsMatch(t, []int{0, 1, 2}, g.applied, "every accepted command applied, the refused one never")
			})
		}
	}
}

// TestRejectWhenFullRoomLeft: with room in the queue nothing is refused.
func TestRejectWhenFullRoomLeft(t *testing.T) {
	for _, d := range Designs() {
		if !d.Owner {
			continue
		}
		t.Run(d.Name, func(t *testing.T) {
			r := &recorder{}
			s, err := New(d.Name, Machine[testCmd, int](capableOf[testCmd, int](r)), Config{RejectWhenFull: true})
			require.NoError(t, err)
			for range 100 {
				_, err := s.Do(context.Background(), testCmd{n: 1})
				require.NoError(t, err)
			}
			require.NoError(t, s.Close())
			assert.Equal(t, 100, r.total)
		})
	}
}
