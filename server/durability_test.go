package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/store"
)

// TestDurableStateSurvivesRestart: with a WAL (and -work, and a snapshot
// every few records), what a server acknowledged is what a server started on
// the same directory serves, whatever bank its flags describe.
func TestDurableStateSurvivesRestart(t *testing.T) {
	for _, d := range store.Designs() {
		m, err := LookupMode(d.Name)
		require.NoError(t, err)
		if !d.Durable || m.CanServeOn(BackendMemory, DurabilityWAL) != nil {
			continue // db-rowlock keeps its state in a database
		}
		t.Run(d.Name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := Config{Mode: d.Name, Durability: DurabilityWAL, DataDir: dir, Work: time.Microsecond, SnapshotEvery: 5}
			ts := startServer(t, cfg)
			ts.reset(t, pb.Scenario_SCENARIO_B, 10, 100)
			var keys []string
			for i := range 20 {
				from := uint32(i%5)*2 + 1
				_, err := ts.bank.TransferMoney(t.Context(), &pb.TransferMoneyRequest{FromAccount: from, ToAccount: from + 1, Amount: int64(i + 1)})
				require.NoError(t, err)
				_, err = ts.bank.TransferMoney(t.Context(), &pb.TransferMoneyRequest{FromAccount: from + 1, ToAccount: from, Amount: 1000})
				requireCode(t, codes.FailedPrecondition, err, "refused: not logged")
				_, err = ts.counter.Increment(t.Context(), &pb.IncrementRequest{Delta: int64(i)})
				require.NoError(t, err)
				k := fmt.Sprint("key-", i%7)
				keys = append(keys, k)
				_, err = ts.kv.Put(t.Context(), &pb.PutRequest{Key: k, Value: []byte(fmt.Sprint("v", i))})
				require.NoError(t, err)
			}
			before := ts.state(t, keys...)
			st := ts.stats(t)
			assert.Equal(t, DurabilityWAL, st.GetDurability())
			assert.Equal(t, int64(time.Microsecond), st.GetWorkNs())
			assert.Equal(t, uint64(60), st.GetWalRecords(), "the window's records: 20 transfers, increments and puts; no refusal, no read")
			assert.Positive(t, st.GetWalSyncs())
			assert.LessOrEqual(t, st.GetWalSyncs(), uint64(60), "a sync with nothing to write is not a sync")
			ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
			defer cancel()
			ts.srv.Stop(ctx)

			cfg.Bank.Accounts = 3 // only seeds a new directory
			ts2 := startServer(t, cfg)
			requireSameState(t, before, ts2.state(t, keys...))
			st = ts2.stats(t)
			assert.Positive(t, st.GetRecoverySeconds())
			assert.Less(t, st.GetWalRecordsReplayed(), uint64(3*cfg.SnapshotEvery), "replay is bounded by the snapshots, one log per workload")
			assert.Zero(t, st.GetWalRecords(), "a new window: nothing written yet")
		})
	}
}

func TestDurabilityConfigRefused(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"wal without a directory", Config{Mode: "mutex", Durability: DurabilityWAL}, "needs a data directory"},
		{"unknown durability", Config{Mode: "mutex", Durability: "paper"}, `durability "paper"`},
		{"noop", Config{Mode: "noop", Durability: DurabilityWAL, DataDir: "x"}, "cannot be durable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotErrorIs(t, err, ErrDataDir, "a configuration error, not the directory's")
		})
	}
}
