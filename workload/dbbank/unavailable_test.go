package dbbank

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workload"
)

// TestDatabaseKilledUnderLoad: the database is killed (SIGKILL) while
// transfers run. Every call then fails with ErrUnavailable (UNAVAILABLE to
// a client), none answers wrongly; once the database is back the bank
// serves again without being reopened, and every transfer acknowledged
// before the kill is in it, the money conserved. A serialising design, a
// group-committing one and db-rowlock.
func TestDatabaseKilledUnderLoad(t *testing.T) {
	for _, name := range []string{"mutex", "inputQ-batch", "db-rowlock"} {
		t.Run(name, func(t *testing.T) {
			d, ok := store.LookupDesign(name)
			require.True(t, ok)
			b := open(t, true)
			s, err := store.Wrap[workload.BankCmd, workload.BankResult](d, b, store.Config{})
			require.NoError(t, err)
			defer s.Close()
			ctx := t.Context()
			transfer := func(from uint32) (workload.BankResult, error) {
				return s.Do(ctx, workload.BankCmd{Op: workload.BankTransfer, From: from, To: from%testAccounts + 1, Amount: 1})
			}

			var mu sync.Mutex // guards acked
			var acked []uint64
			killed := make(chan struct{})
			var wg sync.WaitGroup
			for c := range uint32(4) {
				wg.Go(func() {
					sawDown := false
					for !sawDown {
						r, err := transfer(1 + c)
						switch {
						case err == nil:
							mu.Lock()
							acked = append(acked, r.Seq)
							if len(acked) == 40 {
								close(killed)
							}
							mu.Unlock()
						case errors.Is(err, workload.ErrUnavailable):
							sawDown = true
						default:
							t.Errorf("a transfer failed otherwise than unavailable: %v", err)
							return
						}
					}
				})
			}
			<-killed
			require.NoError(t, testDB.Kill())
			wg.Wait()
			_, err = s.Do(ctx, workload.BankCmd{Op: workload.BankSummary})
			assert.ErrorIs(t, err, workload.ErrUnavailable, "a read fails too")

			require.NoError(t, testDB.Restart(ctx))
			// Each pooled connection died with the server; each may fail
			// one call before the pool dials anew.
			var served bool
			for range DefaultPool + 2 {
				if _, err := transfer(1); err == nil {
					served = true
					break
				} else {
					require.ErrorIs(t, err, workload.ErrUnavailable)
				}
			}
			require.True(t, served, "the bank serves again once the database is back")

			sum, err := b.summary()
			require.NoError(t, err)
			assert.Equal(t, int64(testAccounts*testBalance), sum.Total, "money conserved")
			mu.Lock()
			defer mu.Unlock()
			for _, seq := range acked {
				var n int
				require.NoError(t, b.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM transfers WHERE seq = ?", seq).Scan(&n))
				assert.Equal(t, 1, n, "acknowledged transfer %d kept", seq)
			}
		})
	}
}
