// Package cmdgen turns arbitrary bytes into sequences of workload commands,
// valid or not, for the fuzz targets of the workload machines and of the
// store designs. Every byte string decodes to some sequence (a short input
// to a short one), so the fuzzer's mutations all reach the machines, and the
// decoding leans towards the edges where refusals live: zero and negative
// amounts, int64 limits, accounts 0 and N+1, empty and oversize keys.
package cmdgen

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/locklab/locklab/workload"
)

// MaxCommands bounds a decoded sequence, so that one input stays fast.
const MaxCommands = 256

// reader hands out the input's bytes; past the end it returns zeros.
type reader struct{ b []byte }

func (r *reader) more() bool { return len(r.b) > 0 }

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) bytes(n int) []byte {
	n = min(n, len(r.b))
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

// int64 picks, by a selector byte, a small signed value, any int64, or a
// value near an int64 limit.
func (r *reader) int64() int64 {
	switch sel := r.byte(); sel % 4 {
	case 0:
		return int64(int8(r.byte()))
	case 1:
		var b [8]byte
		copy(b[:], r.bytes(8))
		return int64(binary.LittleEndian.Uint64(b[:]))
	case 2:
		return math.MaxInt64 - int64(r.byte())
	default:
		return math.MinInt64 + int64(r.byte())
	}
}

// account is an account id of a bank with n accounts: mostly 1..n, sometimes
// 0, n+1 or a large id.
func (r *reader) account(n uint32) uint32 {
	switch sel := r.byte(); {
	case sel < 240:
		return 1 + uint32(sel)%max(n, 1)
	case sel < 248:
		return 0
	case sel < 252:
		return n + 1
	default:
		return math.MaxUint32 - uint32(sel-252)
	}
}

// Counter decodes a counter command sequence.
func Counter(data []byte) []workload.CounterCmd {
	r := &reader{b: data}
	var out []workload.CounterCmd
	for r.more() && len(out) < MaxCommands {
		// Op 0 and 4..: unknown ops, refused.
		out = append(out, workload.CounterCmd{Op: workload.CounterOp(r.byte() % 5), Delta: r.int64()})
	}
	return out
}

// SmallBank is the bank Bank's sequences start from: few accounts, so that
// transfers meet, and small balances, so that refusals for funds happen.
var SmallBank = workload.BankConfig{Scenario: workload.ScenarioB, Accounts: 8, InitialBalance: 100}

// Bank decodes a bank command sequence for a bank that starts as SmallBank.
// Its resets keep at most 64 accounts (or ask for too many, refused).
func Bank(data []byte) []workload.BankCmd {
	r := &reader{b: data}
	n := SmallBank.Accounts // accounts now, as far as the decoder can tell
	var out []workload.BankCmd
	for r.more() && len(out) < MaxCommands {
		cmd := workload.BankCmd{Op: workload.BankOp(r.byte() % 7)} // 0 and 6: unknown
		switch cmd.Op {
		case workload.BankTransfer:
			cmd.From, cmd.To = r.account(n), r.account(n)
			cmd.Amount = r.int64()
			if sel := r.byte(); sel < 192 { // mostly amounts that may fit a balance
				cmd.Amount = int64(int8(sel))
			}
		case workload.BankBalance:
			cmd.From = r.account(n)
		case workload.BankHistory:
			cmd.From = r.account(n)
			cmd.Limit = uint32(r.byte())
			if r.byte()%8 == 0 {
				cmd.Limit = workload.MaxHistoryLimit + uint32(r.byte())%2 // the edge: accepted, refused
			}
		case workload.BankReset:
			cmd.Config.Scenario = workload.Scenario(r.byte() % 5) // 0 = A, 4 refused
			switch a := r.byte(); {
			case a < 250:
				cmd.Config.Accounts = 1 + uint32(a)%64
			case a < 253:
				cmd.Config.Accounts = workload.MaxAccounts + 1 // refused before any allocation
			}
			cmd.Config.InitialBalance = r.int64()
			if sel := r.byte(); sel < 200 {
				cmd.Config.InitialBalance = int64(int8(sel))
			}
			if cmd.Config.Accounts != 0 && cmd.Config.Accounts <= workload.MaxAccounts {
				// The decoder guesses: if the reset is refused the bank keeps
				// its size, and ids drift off; the machines cope either way.
				n = cmd.Config.Accounts
			}
		}
		out = append(out, cmd)
	}
	return out
}

// KV decodes a key-value command sequence. Keys come from a small set so that
// puts and gets meet, with the empty key and keys of MaxKeyLen and one more.
func KV(data []byte) []workload.KVCmd {
	r := &reader{b: data}
	var out []workload.KVCmd
	for r.more() && len(out) < MaxCommands {
		cmd := workload.KVCmd{Op: workload.KVOp(r.byte() % 6)} // 0 and 5: unknown
		switch k := r.byte(); {
		case k < 240:
			cmd.Key = string(rune('a' + k%8))
		case k < 244:
			cmd.Key = ""
		case k < 248:
			cmd.Key = strings.Repeat("k", workload.MaxKeyLen)
		case k < 252:
			cmd.Key = strings.Repeat("k", workload.MaxKeyLen+1)
		default:
			cmd.Key = string(r.bytes(int(r.byte()) % 8)) // any bytes, not UTF-8 necessarily
		}
		if cmd.Op == workload.KVPut {
			switch v := r.byte(); {
			case v < 250:
				cmd.Value = r.bytes(int(v) % 16)
			case v < 253:
				cmd.Value = make([]byte, workload.MaxValueLen)
			default:
				cmd.Value = make([]byte, workload.MaxValueLen+1)
			}
		}
		out = append(out, cmd)
	}
	return out
}
