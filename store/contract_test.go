package store

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestContract runs the same cases, with the same expectations, against every
// design: the behaviour Store documents, which callers and the server rely on.
func TestContract(t *testing.T) {
	refusal := &testError{"machine: refused"}
	cancelled := func(*testing.T) context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	expired := func(t *testing.T) context.Context {
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		t.Cleanup(cancel)
		return ctx
	}
	tests := []struct {
		name    string
		setup   []testCmd // applied first, each must succeed
		close   bool      // close the store before the checked Do
		ctx     func(t *testing.T) context.Context
		cmd     testCmd
		want    int
		wantErr error // compared by identity
		wantLog []testCmd
	}{
		{name: "result passed through", cmd: testCmd{n: 4}, want: 4,
			wantLog: []testCmd{{n: 4}}},
		{name: "commands applied in order", setup: []testCmd{{n: 2}, {n: 3}}, cmd: testCmd{n: 4}, want: 9,
			wantLog: []testCmd{{n: 2}, {n: 3}, {n: 4}}},
		{name: "machine error unchanged", setup: []testCmd{{n: 2}}, cmd: testCmd{n: 5, err: refusal}, wantErr: refusal,
			wantLog: []testCmd{{n: 2}, {n: 5, err: refusal}}},
		{name: "ctx already cancelled is not applied", setup: []testCmd{{n: 2}}, ctx: cancelled, cmd: testCmd{n: 4},
			wantErr: context.Canceled, wantLog: []testCmd{{n: 2}}},
		{name: "ctx past its deadline is not applied", ctx: expired, cmd: testCmd{n: 4},
			wantErr: context.DeadlineExceeded, wantLog: nil},
		{name: "Do after Close is refused", setup: []testCmd{{n: 2}}, close: true, cmd: testCmd{n: 4},
			wantErr: ErrClosed, wantLog: []testCmd{{n: 2}}},
	}
	for _, d := range designsFor[testCmd, int](capableOf[testCmd, int](&recorder{})) {
		t.Run(d.name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					m := &recorder{}
					s := d.new(capableOf[testCmd, int](m))
					defer s.Close()
					ctx := context.Background()
					for _, c := range tt.setup {
						_, err := s.Do(ctx, c)
						require.NoError(t, err)
					}
					if tt.close {
						require.NoError(t, s.Close())
					}
					if tt.ctx != nil {
						ctx = tt.ctx(t)
					}

					got, err := s.Do(ctx, tt.cmd)
					require.NoError(t, s.Close())
					if tt.wantErr != nil {
						assert.True(t, err == tt.wantErr, "error %v, want exactly %v", err, tt.wantErr)
					} else {
						assert.NoError(t, err)
						assert.Equal(t, tt.want, got)
					}
					assert.Equal(t, tt.wantLog, m.log, "commands the machine applied")
				})
			}

			t.Run("ErrClosed is recognisable", func(t *testing.T) {
				s := d.new(capableOf[testCmd, int](&recorder{}))
				require.NoError(t, s.Close())
				_, err := s.Do(context.Background(), testCmd{n: 1})
				assert.ErrorIs(t, err, ErrClosed)
				assert.Equal(t, "store: closed", err.Error())
			})

			t.Run("Close twice", func(t *testing.T) {
				m := &recorder{}
				s := d.new(capableOf[testCmd, int](m))
				_, err := s.Do(context.Background(), testCmd{n: 1})
				require.NoError(t, err)
				assert.NoError(t, s.Close())
				assert.NoError(t, s.Close())
				_, err = s.Do(context.Background(), testCmd{n: 1})
				assert.ErrorIs(t, err, ErrClosed)
				assert.Equal(t, []testCmd{{n: 1}}, m.log)
			})

			t.Run("Close without any Do", func(t *testing.T) {
				s := d.new(capableOf[testCmd, int](&recorder{}))
				assert.NoError(t, s.Close())
			})

			t.Run("Close concurrently", func(t *testing.T) {
				m := &recorder{}
				s := d.new(capableOf[testCmd, int](m))
				_, err := s.Do(context.Background(), testCmd{n: 1})
				require.NoError(t, err)
				const closers = 8
				errs := make(chan error, closers)
				var start sync.WaitGroup
				start.Add(1)
				for range closers {
					go func() {
						start.Wait()
						errs <- s.Close()
					}()
				}
				start.Done()
				for range closers {
					assert.NoError(t, within(t, errs, "Close did not return"))
				}
				_, err = s.Do(context.Background(), testCmd{n: 1})
				assert.ErrorIs(t, err, ErrClosed)
				assert.Equal(t, []testCmd{{n: 1}}, m.log)
			})
		})
	}
}

// TestContractCloseWaitsForApply: Close returns only after the command being
// applied has finished, so that a caller may read or discard the machine once
// Close returns.
func TestContractCloseWaitsForApply(t *testing.T) {
	for _, d := range designsFor[int, int](newGate()) {
		t.Run(d.name, func(t *testing.T) {
			g := newGate()
			s := d.new(g)
			type result struct {
				r   int
				err error
			}
			res := make(chan result, 1)
			go func() {
				r, err := s.Do(context.Background(), 7)
				res <- result{r, err}
			}()
			assert.Equal(t, 7, within(t, g.entered, "Apply was not called"))

			closed := make(chan error, 1)
			go func() { closed <- s.Close() }()
			notYet(t, closed, "Close returned while Apply was still running")

			close(g.release)
			assert.NoError(t, within(t, closed, "Close did not return"))
			assert.Equal(t, result{70, nil}, within(t, res, "Do did not return"))
			assert.Equal(t, []int{7}, g.applied)
		})
	}
}

// TestContractApplyNeverConcurrent: Machine's promise to workloads, that Apply
// is never called by two goroutines at once.
func TestContractApplyNeverConcurrent(t *testing.T) {
	const callers, each = 32, 50
	run := func(t *testing.T, s Store[int, int]) {
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				for range each {
					if _, err := s.Do(context.Background(), 0); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		require.NoError(t, s.Close())
	}
	for _, d := range designsFor[int, int](&overlapDetector{}) {
		t.Run(d.name, func(t *testing.T) {
			m := &overlapDetector{}
			run(t, d.new(m))
			assert.Equal(t, int32(callers*each), m.applied.Load())
			assert.Zero(t, m.overlaps.Load(), "Apply calls overlapped")
		})
	}
	// The detector must be able to see a design that does not serialise.
	t.Run("unsynchronised (must overlap)", func(t *testing.T) {
		m := &overlapDetector{}
		run(t, unsynchronised[int, int]{m})
		assert.Positive(t, m.overlaps.Load(), "the detector missed overlapping Apply calls")
	})
}

// unsynchronised is a broken design: it calls Apply from every caller's
// goroutine at once. Tests use it to show their checks can fail.
type unsynchronised[C, R any] struct{ m Machine[C, R] }

func (u unsynchronised[C, R]) Do(_ context.Context, c C) (R, error) { return u.m.Apply(c) }
func (u unsynchronised[C, R]) Close() error                         { return nil }
