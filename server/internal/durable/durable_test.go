package durable

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/work"
	"github.com/locklab/locklab/server/internal/wal"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workload"
)

func openBank(t *testing.T, dir string, cfg workload.BankConfig, opts wal.Options) (*Machine[workload.BankCmd, workload.BankResult], *workload.Bank, wal.RecoveryInfo) {
	t.Helper()
	b, err := workload.NewBank(cfg)
	require.NoError(t, err)
	d, info, err := Open(dir, b, workload.BankLog{B: b}, opts)
	require.NoError(t, err)
	return d, b, info
}

// TestBankSurvivesReopen: what was committed is there after a reopen, from
// the log alone (the second bank is made from other flags), and refused and
// read-only commands were not logged.
func TestBankSurvivesReopen(t *testing.T) {
	for _, every := range []int{-1, 7} { // no snapshots; a snapshot every 7 records
		t.Run(fmt.Sprint("snapshot every ", every), func(t *testing.T) {
			dir := t.TempDir()
			cfg := workload.BankConfig{Scenario: workload.ScenarioB, Accounts: 10, InitialBalance: 100}
			d, b, _ := openBank(t, dir, cfg, wal.Options{SnapshotEvery: every})
			rng := rand.New(rand.NewPCG(5, 6))
			changed := 0
			for range 300 {
				_, err := d.Apply(workload.BankCmd{Op: workload.BankTransfer, From: uint32(rng.IntN(10) + 1), To: uint32(rng.IntN(10) + 1), Amount: int64(rng.IntN(50) + 1)})
				if err == nil {
					changed++
				}
				_, err = d.Apply(workload.BankCmd{Op: workload.BankBalance, From: 1})
				require.NoError(t, err)
				require.NoError(t, d.Commit())
			}
			require.Greater(t, changed, 100)
			want := b.Snapshot()
			require.NoError(t, d.Close())
			require.NoError(t, d.Close(), "Close twice")

			d2, b2, info := openBank(t, dir, workload.BankConfig{Accounts: 1}, wal.Options{SnapshotEvery: every})
			defer d2.Close()
			assert.Equal(t, want, b2.Snapshot())
			if every < 0 {
				assert.Equal(t, int64(changed), info.Records, "only the commands that changed state are logged")
			} else {
				assert.Less(t, info.Records, int64(every), "replay is bounded by the snapshot interval")
			}
		})
	}
}

func TestCommitFailsOnceTheLogIsGone(t *testing.T) {
	d, _, _ := openBank(t, t.TempDir(), workload.BankConfig{}, wal.Options{})
	require.NoError(t, d.Close())
	_, err := d.Apply(workload.BankCmd{Op: workload.BankTransfer, From: 1, To: 2, Amount: 1})
	require.NoError(t, err)
	require.ErrorIs(t, d.Commit(), wal.ErrClosed, "an unlogged change is never acknowledged")
}

func TestOpenRefusesAnotherVersion(t *testing.T) {
	dir := t.TempDir()
	d, _, _ := openBank(t, dir, workload.BankConfig{}, wal.Options{})
	require.NoError(t, d.Close())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() == "LOCK" {
			continue
		}
		b, err := os.ReadFile(dir + "/" + e.Name())
		require.NoError(t, err)
		b[8]++ // the version: the header's checksum no longer matches either
		require.NoError(t, os.WriteFile(dir+"/"+e.Name(), b, 0o644))
	}
	bank, err := workload.NewBank(workload.BankConfig{})
	require.NoError(t, err)
	_, _, err = Open(dir, bank, workload.BankLog{B: bank}, wal.Options{})
	require.Error(t, err)
}

// shardedCounters is a sharded machine: counter i is shard i, and commands
// on different counters may apply concurrently, as under the sharded
// designs. Command: the counter's index; result: its new value.
type shardedCounters struct{ v []int64 }

func (s *shardedCounters) Apply(i int) (int64, error) { s.v[i]++; return s.v[i], nil }
func (s *shardedCounters) SetShards(int)              {}
func (s *shardedCounters) ShardsOf(i int) (int, int)  { return i, i }

// Encode, Replay, Snapshot, Restore: its codec.
func (s *shardedCounters) Encode(dst []byte, i int, v int64) ([]byte, bool) {
	return binary.AppendUvarint(binary.AppendUvarint(dst, uint64(i)), uint64(v)), true
}

func (s *shardedCounters) Replay(rec []byte) error {
	i, n := binary.Uvarint(rec)
	v, _ := binary.Uvarint(rec[n:])
	s.v[i] = int64(v)
	return nil
}

func (s *shardedCounters) Snapshot() []byte {
	var out []byte
	for _, v := range s.v {
		out = binary.AppendVarint(out, v)
	}
	return out
}

func (s *shardedCounters) Restore(state []byte) error {
	r := bytes.NewReader(state)
	for i := range s.v {
		v, err := binary.ReadVarint(r)
		if err != nil {
			return err
		}
		s.v[i] = v
	}
	return nil
}

// TestShardedApplyAndSnapshot: Apply and Commit from goroutines on disjoint
// shards, with snapshots every few records: under -race this checks that a
// snapshot never reads a counter an Apply is writing, and after reopen every
// committed increment is there.
func TestShardedApplyAndSnapshot(t *testing.T) {
	const shards, each = 4, 300
	dir := t.TempDir()
	m := &shardedCounters{v: make([]int64, shards)}
	d, _, err := Open[int, int64](dir, m, m, wal.Options{SnapshotEvery: 10})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for s := range shards {
		wg.Go(func() {
			for range each {
				_, err := d.Apply(s)
				assert.NoError(t, err)
				assert.NoError(t, d.Commit())
			}
		})
	}
	wg.Wait()
	require.NoError(t, d.Close())

	m2 := &shardedCounters{v: make([]int64, shards)}
	d2, info, err := Open[int, int64](dir, m2, m2, wal.Options{})
	require.NoError(t, err)
	defer d2.Close()
	for s := range shards {
		assert.Equal(t, int64(each), m2.v[s])
	}
	assert.NotZero(t, info.Snapshot)
}

// plain, reads and atomicM are test machines with no capability, read-only
// commands (cmd < 0), and a lock-free path.
type plain struct{}

func (plain) Apply(cmd int) (int, error) { return cmd, nil }

type reads struct{ plain }

func (reads) ReadOnly(cmd int) bool { return cmd < 0 }

type atomicM struct{ reads }

func (atomicM) ApplyAtomic(cmd int) (int, error) { return cmd, nil }

type shardedInt struct{ plain }

func (shardedInt) SetShards(int)               {}
func (shardedInt) ShardsOf(cmd int) (int, int) { return cmd, cmd }

type intCodec struct{}

func (intCodec) Encode(dst []byte, cmd, _ int) ([]byte, bool) { return dst, false }
func (intCodec) Replay([]byte) error                          { return nil }
func (intCodec) Snapshot() []byte                             { return nil }
func (intCodec) Restore([]byte) error                         { return nil }

// TestCapabilities: a durable machine reports the inner machine's
// capabilities but the lock-free path, and commit, through work decorators
// too.
func TestCapabilities(t *testing.T) {
	tests := []struct {
		name string
		m    store.Machine[int, int]
		caps store.Capability
	}{
		{"plain", plain{}, 0},
		{"reads", reads{}, store.CapReads},
		{"atomic", atomicM{}, store.CapReads},
		{"sharded", shardedInt{}, store.CapShards},
		{"work over sharded", work.New[int, int](shardedInt{}, work.Spinner{}), store.CapShards},
		{"work over reads", work.New[int, int](reads{}, work.Spinner{}), store.CapReads},
		{"work over atomic", work.New[int, int](atomicM{}, work.Spinner{}), store.CapReads},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, _, err := wal.Open(t.TempDir(), wal.Options{}, func([]byte) error { return nil }, func([]byte) error { return nil })
			require.NoError(t, err)
			d := New(tt.m, intCodec{}, log)
			defer d.Close()
			assert.Equal(t, tt.caps|store.CapCommit, d.Capabilities())
			assert.Equal(t, tt.caps|store.CapCommit, store.CapabilitiesOf[int, int](d))
			_, isAtomic := any(d).(store.Atomic[int, int])
			assert.False(t, isAtomic, "no lock-free path under durability")
			assert.Equal(t, tt.caps&store.CapReads != 0, d.ReadOnly(-1))
			assert.False(t, d.ReadOnly(1))
			a, _ := d.ShardsOf(3)
			if tt.caps&store.CapShards == 0 {
				assert.Equal(t, -1, a, "an unsharded machine is one shard: every shard")
			} else {
				assert.Equal(t, 3, a)
			}
		})
	}
}
