package workload_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/workload"
)

func TestCounterCodecRoundTrip(t *testing.T) {
	tests := []struct {
		cmd    workload.CounterCmd
		logged bool
	}{
		{workload.CounterCmd{Op: workload.CounterIncrement, Delta: 0}, true},
		{workload.CounterCmd{Op: workload.CounterIncrement, Delta: 1}, true},
		{workload.CounterCmd{Op: workload.CounterIncrement, Delta: math.MaxInt64}, true},
		{workload.CounterCmd{Op: workload.CounterReset}, true},
		{workload.CounterCmd{Op: workload.CounterGet}, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%+v", tt.cmd), func(t *testing.T) {
			prefix := []byte("prefix")
			rec, ok := workload.CounterLog{}.Encode(bytes.Clone(prefix), tt.cmd, 0)
			require.Equal(t, tt.logged, ok)
			require.True(t, bytes.HasPrefix(rec, prefix), "Encode appends")
			if !ok {
				assert.Equal(t, prefix, rec)
				return
			}
			got, err := workload.DecodeCounter(rec[len(prefix):])
			require.NoError(t, err)
			assert.Equal(t, tt.cmd, got)
		})
	}
}

func TestBankCodecRoundTrip(t *testing.T) {
	tests := []struct {
		cmd    workload.BankCmd
		seq    uint64
		logged bool
	}{
		{workload.BankCmd{Op: workload.BankTransfer, From: 1, To: math.MaxUint32, Amount: 1000}, 7, true},
		{workload.BankCmd{Op: workload.BankTransfer, From: 3, To: 2, Amount: math.MaxInt64}, math.MaxUint64, true},
		{workload.BankCmd{Op: workload.BankReset, Config: workload.BankConfig{Scenario: workload.ScenarioB, Accounts: 10, InitialBalance: 5}}, 0, true},
		{workload.BankCmd{Op: workload.BankReset}, 0, true},
		{workload.BankCmd{Op: workload.BankBalance, From: 1}, 0, false},
		{workload.BankCmd{Op: workload.BankHistory, From: 1, Limit: 5}, 0, false},
		{workload.BankCmd{Op: workload.BankSummary}, 0, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%+v", tt.cmd), func(t *testing.T) {
			rec, ok := workload.BankLog{}.Encode(nil, tt.cmd, workload.BankResult{Seq: tt.seq})
			require.Equal(t, tt.logged, ok)
			if !ok {
				assert.Empty(t, rec)
				return
			}
			got, seq, err := workload.DecodeBank(rec)
			require.NoError(t, err)
			assert.Equal(t, tt.cmd, got)
			assert.Equal(t, tt.seq, seq)
		})
	}
}

func TestKVCodecRoundTrip(t *testing.T) {
	tests := []struct {
		cmd     workload.KVCmd
		version uint64
		logged  bool
	}{
		{workload.KVCmd{Op: workload.KVPut, Key: "k", Value: []byte("v")}, 1, true},
		{workload.KVCmd{Op: workload.KVPut, Key: string(bytes.Repeat([]byte("k"), workload.MaxKeyLen)), Value: bytes.Repeat([]byte{0, 1}, 300)}, 1 << 40, true},
		{workload.KVCmd{Op: workload.KVPut, Key: "empty value"}, 2, true},
		{workload.KVCmd{Op: workload.KVReset}, 0, true},
		{workload.KVCmd{Op: workload.KVGet, Key: "k"}, 0, false},
		{workload.KVCmd{Op: workload.KVLen}, 0, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v %q", tt.cmd.Op, tt.cmd.Key), func(t *testing.T) {
			rec, ok := workload.KVLog{}.Encode(nil, tt.cmd, workload.KVResult{Version: tt.version})
			require.Equal(t, tt.logged, ok)
			if !ok {
				return
			}
			got, version, err := workload.DecodeKV(rec)
			require.NoError(t, err)
			assert.Equal(t, tt.cmd.Op, got.Op)
			assert.Equal(t, tt.cmd.Key, got.Key)
			assert.True(t, bytes.Equal(tt.cmd.Value, got.Value))
			assert.Equal(t, tt.version, version)
		})
	}
}

func TestDecodeRefusesBadRecords(t *testing.T) {
	good, _ := workload.BankLog{}.Encode(nil, workload.BankCmd{Op: workload.BankTransfer, From: 1, To: 2, Amount: 3}, workload.BankResult{Seq: 4})
	tests := []struct {
		name   string
		decode func() error
	}{
		{"empty counter record", func() error { _, err := workload.DecodeCounter(nil); return err }},
		{"counter read op", func() error { _, err := workload.DecodeCounter([]byte{byte(workload.CounterGet)}); return err }},
		{"counter bytes left over", func() error { _, err := workload.DecodeCounter([]byte{byte(workload.CounterReset), 0}); return err }},
		{"bank transfer cut short", func() error { _, _, err := workload.DecodeBank(good[:len(good)-1]); return err }},
		{"bank transfer with extra", func() error { _, _, err := workload.DecodeBank(append(bytes.Clone(good), 1)); return err }},
		{"bank unknown op", func() error { _, _, err := workload.DecodeBank([]byte{99}); return err }},
		{"kv key longer than the record", func() error { _, _, err := workload.DecodeKV([]byte{byte(workload.KVPut), 1, 50, 'k'}); return err }},
		{"kv unknown op", func() error { _, _, err := workload.DecodeKV([]byte{0}); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, tt.decode(), workload.ErrBadRecord)
		})
	}
}

// logger is what the write-ahead log does with a machine: apply, and log what
// changed state.
type logger[C, R any] struct {
	apply   func(C) (R, error)
	encode  func([]byte, C, R) ([]byte, bool)
	records [][]byte
}

func (l *logger[C, R]) do(cmd C) {
	r, err := l.apply(cmd)
	if err != nil {
		return
	}
	if rec, ok := l.encode(nil, cmd, r); ok {
		l.records = append(l.records, rec)
	}
}

// TestBankReplay: a bank rebuilt from its records (and from a snapshot plus
// the records after it) is the bank that wrote them, refused transfers,
// resets and all.
func TestBankReplay(t *testing.T) {
	cfg := workload.BankConfig{Scenario: workload.ScenarioB, Accounts: 8, InitialBalance: 1000}
	orig := newBank(t, cfg)
	lg := &logger[workload.BankCmd, workload.BankResult]{apply: orig.Apply, encode: workload.BankLog{}.Encode}
	rng := rand.New(rand.NewPCG(1, 2))
	var snap []byte
	var afterSnap int
	for i := range 2000 {
		switch {
		case i == 700:
			lg.do(workload.BankCmd{Op: workload.BankReset, Config: workload.BankConfig{Scenario: workload.ScenarioA, Accounts: 6, InitialBalance: 500}})
		case i == 1500:
			snap, afterSnap = orig.Snapshot(), len(lg.records)
		case i%10 == 0:
			lg.do(workload.BankCmd{Op: workload.BankBalance, From: uint32(rng.IntN(6) + 1)})
		}
		lg.do(workload.BankCmd{Op: workload.BankTransfer, From: uint32(rng.IntN(8) + 1), To: uint32(rng.IntN(8) + 1), Amount: int64(rng.IntN(300) + 1)})
	}
	require.Greater(t, len(lg.records), 500, "most transfers go through")

	fromLog := newBank(t, cfg)
	for _, rec := range lg.records {
		require.NoError(t, workload.BankLog{B: fromLog}.Replay(rec))
	}
	assert.Equal(t, snapshotBank(t, orig), snapshotBank(t, fromLog))
	assert.Equal(t, orig.Snapshot(), fromLog.Snapshot())

	fromSnap := newBank(t, workload.BankConfig{Accounts: 1})
	require.NoError(t, workload.BankLog{B: fromSnap}.Restore(snap))
	for _, rec := range lg.records[afterSnap:] {
		require.NoError(t, workload.BankLog{B: fromSnap}.Replay(rec))
	}
	assert.Equal(t, snapshotBank(t, orig), snapshotBank(t, fromSnap))
}

// TestBankReplayOutOfSequence: under the sharded designs disjoint transfers
// reach the log out of sequence order; replay keeps the numbers callers
// were told. The control replays the same records as plain commands and
// gets other numbers: the check can fail.
func TestBankReplayOutOfSequence(t *testing.T) {
	cfg := workload.BankConfig{Accounts: 4, InitialBalance: 100}
	orig := newBank(t, cfg)
	lg := &logger[workload.BankCmd, workload.BankResult]{apply: orig.Apply, encode: workload.BankLog{}.Encode}
	lg.do(workload.BankCmd{Op: workload.BankTransfer, From: 1, To: 2, Amount: 10}) // seq 1
	lg.do(workload.BankCmd{Op: workload.BankTransfer, From: 3, To: 4, Amount: 20}) // seq 2
	lg.do(workload.BankCmd{Op: workload.BankTransfer, From: 2, To: 1, Amount: 5})  // seq 3
	// Shard {3,4} logged seq 2 before shard {1,2} logged seq 1 and 3.
	swapped := [][]byte{lg.records[1], lg.records[0], lg.records[2]}

	replayed := newBank(t, cfg)
	for _, rec := range swapped {
		require.NoError(t, workload.BankLog{B: replayed}.Replay(rec))
	}
	assert.Equal(t, snapshotBank(t, orig), snapshotBank(t, replayed))
	next := transfer(t, replayed, 1, 3, 1)
	assert.Equal(t, uint64(4), next.Seq, "numbering goes on after the largest seen")

	control := newBank(t, cfg)
	for _, rec := range swapped {
		cmd, _, err := workload.DecodeBank(rec)
		require.NoError(t, err)
		_, err = control.Apply(cmd)
		require.NoError(t, err)
	}
	assert.NotEqual(t, snapshotBank(t, orig), snapshotBank(t, control), "renumbering on replay would change history")
}

func TestBankReplayRefusesWhatCannotApply(t *testing.T) {
	b := newBank(t, workload.BankConfig{Scenario: workload.ScenarioC, Accounts: 2})
	rec, _ := workload.BankLog{}.Encode(nil, workload.BankCmd{Op: workload.BankTransfer, From: 1, To: 2, Amount: 1}, workload.BankResult{Seq: 1})
	before := b.Snapshot()
	require.ErrorIs(t, workload.BankLog{B: b}.Replay(rec), workload.ErrBadRecord, "no funds: this log is not this bank's")
	assert.Equal(t, before, b.Snapshot())
	rec, _ = workload.BankLog{}.Encode(nil, workload.BankCmd{Op: workload.BankTransfer, From: 1, To: 2, Amount: 1}, workload.BankResult{Seq: 0})
	require.ErrorIs(t, workload.BankLog{B: b}.Replay(rec), workload.ErrBadRecord)
}

func TestCounterReplayAndSnapshot(t *testing.T) {
	orig := workload.NewCounter()
	lg := &logger[workload.CounterCmd, int64]{apply: orig.Apply, encode: workload.CounterLog{}.Encode}
	for i := range 100 {
		lg.do(workload.CounterCmd{Op: workload.CounterIncrement, Delta: int64(i)})
		lg.do(workload.CounterCmd{Op: workload.CounterGet})
		if i == 50 {
			lg.do(workload.CounterCmd{Op: workload.CounterReset})
		}
	}
	lg.do(workload.CounterCmd{Op: workload.CounterIncrement, Delta: -1}) // refused: not logged
	assert.Len(t, lg.records, 101)
	replayed := workload.NewCounter()
	for _, rec := range lg.records {
		require.NoError(t, workload.CounterLog{C: replayed}.Replay(rec))
	}
	assert.Equal(t, counterValue(t, orig), counterValue(t, replayed))

	restored := workload.NewCounter()
	require.NoError(t, workload.CounterLog{C: restored}.Restore(orig.Snapshot()))
	assert.Equal(t, counterValue(t, orig), counterValue(t, restored))
}

func TestKVReplayAndSnapshot(t *testing.T) {
	orig := workload.NewKV()
	lg := &logger[workload.KVCmd, workload.KVResult]{apply: orig.Apply, encode: workload.KVLog{}.Encode}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 500 {
		key := fmt.Sprint("key-", rng.IntN(40))
		lg.do(workload.KVCmd{Op: workload.KVPut, Key: key, Value: []byte(fmt.Sprint("value-", i))})
		lg.do(workload.KVCmd{Op: workload.KVGet, Key: key})
		if i == 200 {
			lg.do(workload.KVCmd{Op: workload.KVReset})
		}
	}
	replayed := workload.NewKV()
	for _, rec := range lg.records {
		require.NoError(t, workload.KVLog{KV: replayed}.Replay(rec))
	}
	assert.Equal(t, orig.Snapshot(), replayed.Snapshot())
	r, err := replayed.Apply(workload.KVCmd{Op: workload.KVGet, Key: "key-1"})
	require.NoError(t, err)
	o, err := orig.Apply(workload.KVCmd{Op: workload.KVGet, Key: "key-1"})
	require.NoError(t, err)
	assert.Equal(t, o, r)

	restored := workload.NewKV()
	require.NoError(t, workload.KVLog{KV: restored}.Restore(orig.Snapshot()))
	assert.Equal(t, orig.Snapshot(), restored.Snapshot())
}

// TestRestoreRefusesGarbage: a bad snapshot is refused and the machine keeps
// its state.
func TestRestoreRefusesGarbage(t *testing.T) {
	b := smallBank(t)
	kv := workload.NewKV()
	_, err := kv.Apply(workload.KVCmd{Op: workload.KVPut, Key: "k", Value: []byte("v")})
	require.NoError(t, err)
	c := counterAt(t, 5)
	tests := []struct {
		name    string
		restore func([]byte) error
		state   func() []byte
		good    []byte
	}{
		{"bank", b.Restore, b.Snapshot, b.Snapshot()},
		{"kv", kv.Restore, kv.Snapshot, kv.Snapshot()},
		{"counter", c.Restore, c.Snapshot, c.Snapshot()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, bad := range [][]byte{nil, {2}, tt.good[:len(tt.good)-1], append(bytes.Clone(tt.good), 0)} {
				require.ErrorIs(t, tt.restore(bad), workload.ErrBadRecord, "%x", bad)
				assert.Equal(t, tt.good, tt.state(), "state unchanged")
			}
		})
	}
}

func FuzzDecodeBank(f *testing.F) {
	for _, cmd := range []workload.BankCmd{
		{Op: workload.BankTransfer, From: 1, To: 2, Amount: 3},
		{Op: workload.BankReset, Config: workload.BankConfig{Scenario: workload.ScenarioC, Accounts: 3}},
	} {
		rec, _ := workload.BankLog{}.Encode(nil, cmd, workload.BankResult{Seq: 9})
		f.Add(rec)
	}
	f.Fuzz(func(t *testing.T, rec []byte) {
		cmd, seq, err := workload.DecodeBank(rec)
		if err != nil {
			return
		}
		again, ok := workload.BankLog{}.Encode(nil, cmd, workload.BankResult{Seq: seq})
		require.True(t, ok)
		cmd2, seq2, err := workload.DecodeBank(again)
		require.NoError(t, err)
		assert.Equal(t, cmd, cmd2)
		assert.Equal(t, seq, seq2)
	})
}

func FuzzDecodeKV(f *testing.F) {
	rec, _ := workload.KVLog{}.Encode(nil, workload.KVCmd{Op: workload.KVPut, Key: "k", Value: []byte("v")}, workload.KVResult{Version: 3})
	f.Add(rec)
	f.Add([]byte{byte(workload.KVReset)})
	f.Fuzz(func(t *testing.T, rec []byte) {
		cmd, version, err := workload.DecodeKV(rec)
		if err != nil {
			return
		}
		again, ok := workload.KVLog{}.Encode(nil, cmd, workload.KVResult{Version: version})
		require.True(t, ok)
		cmd2, version2, err := workload.DecodeKV(again)
		require.NoError(t, err)
		assert.Equal(t, cmd.Key, cmd2.Key)
		assert.True(t, bytes.Equal(cmd.Value, cmd2.Value))
		assert.Equal(t, version, version2)
	})
}

func FuzzDecodeCounter(f *testing.F) {
	rec, _ := workload.CounterLog{}.Encode(nil, workload.CounterCmd{Op: workload.CounterIncrement, Delta: 5}, 0)
	f.Add(rec)
	f.Fuzz(func(t *testing.T, rec []byte) {
		cmd, err := workload.DecodeCounter(rec)
		if err != nil {
			return
		}
		again, ok := workload.CounterLog{}.Encode(nil, cmd, 0)
		require.True(t, ok)
		cmd2, err := workload.DecodeCounter(again)
		require.NoError(t, err)
		assert.Equal(t, cmd, cmd2)
	})
}

// FuzzRestoreBank: any bytes either restore a bank whose snapshot restores
// to itself, or are refused; never a panic.
func FuzzRestoreBank(f *testing.F) {
	b, err := workload.NewBank(workload.BankConfig{Accounts: 3, InitialBalance: 10})
	require.NoError(f, err)
	_, err = b.Apply(workload.BankCmd{Op: workload.BankTransfer, From: 1, To: 2, Amount: 4})
	require.NoError(f, err)
	f.Add(b.Snapshot())
	f.Fuzz(func(t *testing.T, state []byte) {
		b, err := workload.NewBank(workload.BankConfig{Accounts: 1})
		require.NoError(t, err)
		if b.Restore(state) != nil {
			return
		}
		again := b.Snapshot()
		require.NoError(t, b.Restore(again))
		assert.Equal(t, again, b.Snapshot())
	})
}
