package workload

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrBadRecord: a log record or snapshot that does not decode, or a record
// that does not apply to the state it is replayed on. It only arises while
// recovering a log, never from a request, so it wraps none of the kinds the
// server maps to status codes.
var ErrBadRecord = errors.New("workload: bad log record")

// The log codecs turn each state-changing command into a record, after it
// was applied (so a record can carry what Apply decided, like a transfer's
// sequence number), and replay records on a machine during recovery.
// Read-only and refused commands have no record: a refused command changed
// nothing. A record starts with its op code, then the op's fields, fixed
// width for ids and varints for amounts and lengths; nothing else is needed
// to replay it, and decoding never panics on any input (FuzzDecode…).

// CounterLog is a Counter's log codec.
type CounterLog struct{ C *Counter }

// Encode appends the record of cmd, applied with no error, to dst; ok is
// false for a command that changes nothing.
func (CounterLog) Encode(dst []byte, cmd CounterCmd, _ int64) (rec []byte, ok bool) {
	switch cmd.Op {
	case CounterIncrement:
		return binary.AppendVarint(append(dst, byte(CounterIncrement)), cmd.Delta), true
	case CounterReset:
		return append(dst, byte(CounterReset)), true
	}
	return dst, false
}

// DecodeCounter decodes a record Encode made.
func DecodeCounter(rec []byte) (CounterCmd, error) {
	d := decoder{b: rec}
	cmd := CounterCmd{Op: CounterOp(d.byte())}
	switch cmd.Op {
	case CounterIncrement:
		cmd.Delta = d.varint()
	case CounterReset:
	default:
		d.fail("unknown counter op %d", cmd.Op)
	}
	return cmd, d.done()
}

// Replay applies a record.
func (l CounterLog) Replay(rec []byte) error {
	cmd, err := DecodeCounter(rec)
	if err != nil {
		return err
	}
	if _, err := l.C.Apply(cmd); err != nil {
		return fmt.Errorf("%w: %v", ErrBadRecord, err)
	}
	return nil
}

// Snapshot returns the counter's state.
func (l CounterLog) Snapshot() []byte { return l.C.Snapshot() }

// Restore replaces the counter's state with a snapshot's.
func (l CounterLog) Restore(state []byte) error { return l.C.Restore(state) }

// BankLog is a Bank's log codec. A transfer's record carries the sequence
// number Apply gave it: with the sharded designs disjoint transfers apply
// concurrently and reach the log in another order than their numbers, and
// replay must restore the numbers callers were told, not renumber.
type BankLog struct{ B *Bank }

// Encode appends the record of cmd, applied with result r and no error.
func (BankLog) Encode(dst []byte, cmd BankCmd, r BankResult) (rec []byte, ok bool) {
	switch cmd.Op {
	case BankTransfer:
		dst = binary.LittleEndian.AppendUint32(append(dst, byte(BankTransfer)), cmd.From)
		dst = binary.LittleEndian.AppendUint32(dst, cmd.To)
		dst = binary.AppendVarint(dst, cmd.Amount)
		return binary.AppendUvarint(dst, r.Seq), true
	case BankReset:
		dst = append(dst, byte(BankReset), byte(cmd.Config.Scenario))
		dst = binary.LittleEndian.AppendUint32(dst, cmd.Config.Accounts)
		return binary.AppendVarint(dst, cmd.Config.InitialBalance), true
	}
	return dst, false
}

// DecodeBank decodes a record Encode made: the command, and for a transfer
// its sequence number.
func DecodeBank(rec []byte) (BankCmd, uint64, error) {
	d := decoder{b: rec}
	cmd := BankCmd{Op: BankOp(d.byte())}
	var seq uint64
	switch cmd.Op {
	case BankTransfer:
		cmd.From, cmd.To = d.uint32(), d.uint32()
		cmd.Amount = d.varint()
		seq = d.uvarint()
	case BankReset:
		cmd.Config.Scenario = Scenario(d.byte())
		cmd.Config.Accounts = d.uint32()
		cmd.Config.InitialBalance = d.varint()
	default:
		d.fail("unknown bank op %d", cmd.Op)
	}
	return cmd, seq, d.done()
}

// Replay applies a record, a transfer with the sequence number it had.
func (l BankLog) Replay(rec []byte) error {
	cmd, seq, err := DecodeBank(rec)
	if err != nil {
		return err
	}
	if cmd.Op == BankTransfer {
		err = l.B.replayTransfer(cmd, seq)
	} else {
		_, err = l.B.Apply(cmd)
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadRecord, err)
	}
	return nil
}

// Snapshot returns the bank's state.
func (l BankLog) Snapshot() []byte { return l.B.Snapshot() }

// Restore replaces the bank's state with a snapshot's.
func (l BankLog) Restore(state []byte) error { return l.B.Restore(state) }

// KVLog is a KV's log codec. A Put's record carries the version Apply gave
// it, and replay sets that version.
type KVLog struct{ KV *KV }

// Encode appends the record of cmd, applied with result r and no error.
func (KVLog) Encode(dst []byte, cmd KVCmd, r KVResult) (rec []byte, ok bool) {
	switch cmd.Op {
	case KVPut:
		dst = binary.AppendUvarint(append(dst, byte(KVPut)), r.Version)
		dst = binary.AppendUvarint(dst, uint64(len(cmd.Key)))
		dst = append(dst, cmd.Key...)
		return append(dst, cmd.Value...), true // the value runs to the end
	case KVReset:
		return append(dst, byte(KVReset)), true
	}
	return dst, false
}

// DecodeKV decodes a record Encode made: the command, and for a Put the
// version it made. Value aliases rec.
func DecodeKV(rec []byte) (KVCmd, uint64, error) {
	d := decoder{b: rec}
	cmd := KVCmd{Op: KVOp(d.byte())}
	var version uint64
	switch cmd.Op {
	case KVPut:
		version = d.uvarint()
		cmd.Key = string(d.bytes(d.uvarint()))
		cmd.Value = d.rest()
	case KVReset:
	default:
		d.fail("unknown kv op %d", cmd.Op)
	}
	return cmd, version, d.done()
}

// Replay applies a record.
func (l KVLog) Replay(rec []byte) error {
	cmd, version, err := DecodeKV(rec)
	if err != nil {
		return err
	}
	if cmd.Op == KVPut {
		err = l.KV.replayPut(cmd, version)
	} else {
		_, err = l.KV.Apply(cmd)
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadRecord, err)
	}
	return nil
}

// Snapshot returns the map's state.
func (l KVLog) Snapshot() []byte { return l.KV.Snapshot() }

// Restore replaces the map's state with a snapshot's.
func (l KVLog) Restore(state []byte) error { return l.KV.Restore(state) }

// decoder reads a record; the first error sticks and later reads return
// zeros, so decoding code reads straight through and checks once.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrBadRecord}, a...)...)
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail("short record")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uint32() uint32 {
	if len(d.b) < 4 {
		d.fail("short record")
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b)
	d.b = d.b[4:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n uint64) []byte {
	if n > uint64(len(d.b)) {
		d.fail("short record")
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) rest() []byte {
	v := d.b
	d.b = nil
	return v
}

// done returns the first error, or one for bytes left over.
func (d *decoder) done() error {
	if d.err == nil && len(d.b) > 0 {
		d.fail("%d bytes left over", len(d.b))
	}
	return d.err
}
