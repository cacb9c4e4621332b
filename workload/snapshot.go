package workload

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
)

// Snapshots are each machine's whole state, for the write-ahead log's
// snapshots. They start with a format byte of their own, so that a machine
// whose state grows a field can still tell an old snapshot from a new one.
// Equal states give equal bytes (the map's keys are sorted), which tests use.
const snapshotFormat = 1

// Snapshot returns the counter's state.
func (c *Counter) Snapshot() []byte {
	return binary.AppendVarint([]byte{snapshotFormat}, c.value)
}

// Restore replaces the counter's state with one Snapshot returned.
func (c *Counter) Restore(state []byte) error {
	d := decoder{b: state}
	d.format()
	v := d.varint()
	if err := d.done(); err != nil {
		return err
	}
	c.value = v
	return nil
}

// Snapshot returns the bank's state: the sequence, and each account's
// balance and history, oldest transfer first.
func (b *Bank) Snapshot() []byte {
	out := []byte{snapshotFormat}
	out = binary.AppendUvarint(out, b.seq.Load())
	out = binary.AppendUvarint(out, uint64(len(b.accounts)))
	for i := range b.accounts {
		a := &b.accounts[i]
		out = binary.AppendVarint(out, a.balance)
		out = binary.AppendUvarint(out, uint64(len(a.history)))
		start := 0
		if len(a.history) == HistoryKept {
			start = a.next // the oldest of a full ring
		}
		for k := range a.history {
			t := a.history[(start+k)%len(a.history)]
			out = binary.AppendUvarint(out, t.Seq)
			out = binary.LittleEndian.AppendUint32(out, t.From)
			out = binary.LittleEndian.AppendUint32(out, t.To)
			out = binary.AppendVarint(out, t.Amount)
		}
	}
	return out
}

// Restore replaces the bank's state with one Snapshot returned.
func (b *Bank) Restore(state []byte) error {
	d := decoder{b: state}
	d.format()
	seq := d.uvarint()
	n := d.uvarint()
	if n < 1 || n > MaxAccounts {
		d.fail("%d accounts", n)
	}
	var accounts []account
	if d.err == nil {
		accounts = make([]account, n)
	}
	for i := range accounts {
		a := &accounts[i]
		a.balance = d.varint()
		h := d.uvarint()
		if h > HistoryKept {
			d.fail("account %d has %d transfers in its history", i+1, h)
		}
		for range h {
			a.record(Transfer{Seq: d.uvarint(), From: d.uint32(), To: d.uint32(), Amount: d.varint()})
		}
		if d.err != nil {
			break
		}
	}
	if err := d.done(); err != nil {
		return err
	}
	b.accounts = accounts
	b.seq.Store(seq)
	return nil
}

// replayTransfer applies a logged transfer with the sequence number it was
// given, leaving the bank's sequence at the largest number seen: with the
// sharded designs the log holds transfers out of sequence order (each
// account's own transfers are in order: they were logged under its lock).
func (b *Bank) replayTransfer(cmd BankCmd, seq uint64) error {
	if seq == 0 {
		return errBadSeq
	}
	saved := b.seq.Load()
	b.seq.Store(seq - 1) // transfer numbers it seq
	_, err := b.transfer(cmd.From, cmd.To, cmd.Amount)
	b.seq.Store(saved)
	if err == nil {
		b.seq.Store(max(saved, seq))
	}
	return err
}

var errBadSeq = fmt.Errorf("%w: a transfer with sequence number 0", ErrBadRecord)

// Snapshot returns the map's state, keys sorted, whatever the shards.
func (kv *KV) Snapshot() []byte {
	all := map[string]kvEntry{}
	for _, m := range kv.shards {
		maps.Copy(all, m)
	}
	out := []byte{snapshotFormat}
	out = binary.AppendUvarint(out, uint64(len(all)))
	for _, k := range slices.Sorted(maps.Keys(all)) {
		e := all[k]
		out = binary.AppendUvarint(out, uint64(len(k)))
		out = append(out, k...)
		out = binary.AppendUvarint(out, e.version)
		out = binary.AppendUvarint(out, uint64(len(e.value)))
		out = append(out, e.value...)
	}
	return out
}

// Restore replaces the map's state with one Snapshot returned, keeping the
// shard count.
func (kv *KV) Restore(state []byte) error {
	d := decoder{b: state}
	d.format()
	n := d.uvarint()
	m := make(map[string]kvEntry, min(n, uint64(len(state))))
	for range n {
		k := string(d.bytes(d.uvarint()))
		e := kvEntry{version: d.uvarint()}
		e.value = append([]byte(nil), d.bytes(d.uvarint())...)
		if d.err != nil {
			break
		}
		m[k] = e
	}
	if err := d.done(); err != nil {
		return err
	}
	for _, s := range kv.shards {
		clear(s)
	}
	for k, e := range m {
		kv.shards[kv.shardOf(k)][k] = e
	}
	return nil
}

// replayPut applies a logged Put and gives the key the version it had.
func (kv *KV) replayPut(cmd KVCmd, version uint64) error {
	if _, err := kv.Apply(cmd); err != nil {
		return err
	}
	m := kv.shards[kv.shardOf(cmd.Key)]
	e := m[cmd.Key]
	e.version = version
	m[cmd.Key] = e
	return nil
}

// format reads a snapshot's format byte.
func (d *decoder) format() {
	if f := d.byte(); d.err == nil && f != snapshotFormat {
		d.fail("snapshot format %d, want %d", f, snapshotFormat)
	}
}
