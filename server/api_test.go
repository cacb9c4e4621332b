package server

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/workload"
)

// TestAPI calls every RPC of docs/design.md §api with valid input and checks
// the values it returns, the same way for every store-backed mode. The subtests
// share one server and run in order: stats checks what the others did.
func TestAPI(t *testing.T) {
	for _, mode := range storeModes {
		t.Run(mode, func(t *testing.T) {
			ts := startServer(t, Config{Mode: mode})
			ctx := t.Context()

			t.Run("counter", func(t *testing.T) {
				v, err := ts.counter.GetValue(ctx, &pb.GetValueRequest{})
				require.NoError(t, err)
				assert.Equal(t, int64(0), v.GetValue())
				for _, step := range []struct{ delta, want int64 }{{5, 5}, {0, 5}, {7, 12}} {
					r, err := ts.counter.Increment(ctx, &pb.IncrementRequest{Delta: step.delta})
					require.NoError(t, err)
					assert.Equal(t, step.want, r.GetValue(), "Increment(%d) returns the new value", step.delta)
				}
				v, err = ts.counter.GetValue(ctx, &pb.GetValueRequest{})
				require.NoError(t, err)
				assert.Equal(t, int64(12), v.GetValue())
			})

			t.Run("bank", func(t *testing.T) {
				const initial = workload.DefaultInitialBalance
				r, err := ts.bank.TransferMoney(ctx, &pb.TransferMoneyRequest{FromAccount: 1, ToAccount: 2, Amount: 1000})
				require.NoError(t, err)
				assert.Equal(t, uint64(1), r.GetSeq())
				assert.Equal(t, int64(initial-1000), r.GetFromBalance())
				assert.Equal(t, int64(initial+1000), r.GetToBalance())
				for id, want := range map[uint32]int64{1: initial - 1000, 2: initial + 1000, 3: initial, 1000: initial} {
					b, err := ts.bank.GetBalance(ctx, &pb.GetBalanceRequest{Account: id})
					require.NoError(t, err)
					assert.Equal(t, want, b.GetBalance(), "balance of %d", id)
				}

				// Transfers 2..25 from account 1 to 3, amount = seq.
				for seq := uint64(2); seq <= 25; seq++ {
					r, err := ts.bank.TransferMoney(ctx, &pb.TransferMoneyRequest{FromAccount: 1, ToAccount: 3, Amount: int64(seq)})
					require.NoError(t, err)
					require.Equal(t, seq, r.GetSeq())
				}
				history := func(account, limit uint32) []*pb.Transfer {
					h, err := ts.bank.GetHistory(ctx, &pb.GetHistoryRequest{Account: account, Limit: limit})
					require.NoError(t, err)
					return h.GetTransfers()
				}
				seqs := func(ts []*pb.Transfer) []uint64 {
					var out []uint64
					for _, t := range ts {
						out = append(out, t.GetSeq())
					}
					return out
				}
				h := history(1, 0)
				assert.Equal(t, seqsDown(25, 6), seqs(h), "limit 0 means 20, newest first")
				assert.Equal(t, &pb.Transfer{Seq: 25, FromAccount: 1, ToAccount: 3, Amount: 25}, stripped(h[0]))
				assert.Equal(t, seqsDown(25, 23), seqs(history(1, 3)))
				assert.Equal(t, seqsDown(25, 1), seqs(history(1, 1000)), "every transfer of account 1")
				h = history(2, 0)
				require.Len(t, h, 1)
				assert.Equal(t, &pb.Transfer{Seq: 1, FromAccount: 1, ToAccount: 2, Amount: 1000}, stripped(h[0]), "the receiver's history too")
				assert.Empty(t, history(4, 0))

				// 80 more: account 1 has 105 transfers, of which 100 are kept.
				for range 80 {
					_, err := ts.bank.TransferMoney(ctx, &pb.TransferMoneyRequest{FromAccount: 4, ToAccount: 1, Amount: 1})
					require.NoError(t, err)
				}
				assert.Equal(t, seqsDown(105, 6), seqs(history(1, 1000)), "the last 100 are kept")
				assert.Equal(t, seqsDown(25, 2), seqs(history(3, 1000)), "account 3 received 2..25")
			})

			t.Run("kv", func(t *testing.T) {
				for i, want := range []uint64{1, 2} {
					r, err := ts.kv.Put(ctx, &pb.PutRequest{Key: "k", Value: []byte{'v', byte('1' + i)}})
					require.NoError(t, err)
					assert.Equal(t, want, r.GetVersion())
				}
				g, err := ts.kv.Get(ctx, &pb.GetRequest{Key: "k"})
				require.NoError(t, err)
				assert.Equal(t, "v2", string(g.GetValue()))
				assert.Equal(t, uint64(2), g.GetVersion())

				// The largest valid key and value.
				key := strings.Repeat("k", workload.MaxKeyLen)
				value := bytes.Repeat([]byte{0xa5}, workload.MaxValueLen)
				p, err := ts.kv.Put(ctx, &pb.PutRequest{Key: key, Value: value})
				require.NoError(t, err)
				assert.Equal(t, uint64(1), p.GetVersion())
				g, err = ts.kv.Get(ctx, &pb.GetRequest{Key: key})
				require.NoError(t, err)
				assert.True(t, bytes.Equal(value, g.GetValue()), "1 MiB value comes back intact")

				_, err = ts.kv.Put(ctx, &pb.PutRequest{Key: "empty"})
				require.NoError(t, err)
				g, err = ts.kv.Get(ctx, &pb.GetRequest{Key: "empty"})
				require.NoError(t, err)
				assert.Empty(t, g.GetValue())
				assert.Equal(t, uint64(1), g.GetVersion())
			})

			t.Run("stats", func(t *testing.T) {
				s := ts.stats(t)
				assert.Equal(t, mode, s.GetMode())
				assert.True(t, s.GetStoreBacked())
				assert.Equal(t, int64(workload.DefaultAccounts*workload.DefaultInitialBalance), s.GetTotalBalance(), "money conserved")
				// Account 1 sent 1000 and 2+3+...+25, and received 80 × 1.
				assert.Equal(t, int64(workload.DefaultInitialBalance-1000-(2+25)*24/2+80), s.GetMinBalance())
				assert.Equal(t, int64(12), s.GetCounterValue())
				assert.Equal(t, uint32(workload.DefaultAccounts), s.GetAccounts())
				assert.Equal(t, uint64(105), s.GetTransfers())
				assert.Equal(t, uint64(3), s.GetKvKeys())
				assert.Equal(t, uint32(DefaultSampleEvery), s.GetLatencySampleEvery())
			})

			t.Run("reset", func(t *testing.T) {
				tests := []struct {
					name     string
					scenario pb.Scenario
					accounts uint32
					balance  int64
					want     []int64
				}{
					{"A", pb.Scenario_SCENARIO_A, 5, 300, []int64{300, 300, 300, 300, 300}},
					{"B funds the odd accounts", pb.Scenario_SCENARIO_B, 5, 300, []int64{300, 0, 300, 0, 300}},
					{"C funds none", pb.Scenario_SCENARIO_C, 4, 300, []int64{0, 0, 0, 0}},
					{"unspecified is A", pb.Scenario_SCENARIO_UNSPECIFIED, 3, 7, []int64{7, 7, 7}},
				}
				for _, tt := range tests {
					t.Run(tt.name, func(t *testing.T) {
						// Something to reset.
						_, err := ts.counter.Increment(ctx, &pb.IncrementRequest{Delta: 3})
						require.NoError(t, err)
						_, err = ts.kv.Put(ctx, &pb.PutRequest{Key: "k", Value: []byte("v")})
						require.NoError(t, err)

						ts.reset(t, tt.scenario, tt.accounts, tt.balance)
						var total int64
						for _, b := range tt.want {
							total += b
						}
						s := ts.stats(t)
						assert.Equal(t, tt.accounts, s.GetAccounts())
						assert.Equal(t, total, s.GetTotalBalance())
						assert.Equal(t, slicesMin(tt.want), s.GetMinBalance())
						assert.Zero(t, s.GetCounterValue())
						assert.Zero(t, s.GetTransfers())
						assert.Zero(t, s.GetKvKeys())
						assert.Equal(t, tt.want, ts.balances(t))
						_, err = ts.bank.GetBalance(ctx, &pb.GetBalanceRequest{Account: tt.accounts + 1})
						requireCode(t, codes.NotFound, err, "account N+1 after the reset")
						_, err = ts.kv.Get(ctx, &pb.GetRequest{Key: "k"})
						requireCode(t, codes.NotFound, err, "the map is empty")
						h, err := ts.bank.GetHistory(ctx, &pb.GetHistoryRequest{Account: 1})
						require.NoError(t, err)
						assert.Empty(t, h.GetTransfers(), "history starts over")

						// The first funded account pays the first unfunded
						// one if there is one, and an unfunded one cannot pay.
						for i, b := range tt.want {
							from := uint32(i + 1)
							to := from%tt.accounts + 1
							_, err := ts.bank.TransferMoney(ctx, &pb.TransferMoneyRequest{FromAccount: from, ToAccount: to, Amount: 1})
							if b == 0 {
								requireCode(t, codes.FailedPrecondition, err, "account %d starts at 0", from)
								continue
							}
							require.NoError(t, err)
							break
						}
					})
				}

				t.Run("defaults", func(t *testing.T) {
					ts.reset(t, pb.Scenario_SCENARIO_UNSPECIFIED, 0, 0)
					s := ts.stats(t)
					assert.Equal(t, uint32(workload.DefaultAccounts), s.GetAccounts())
					assert.Equal(t, int64(workload.DefaultAccounts*workload.DefaultInitialBalance), s.GetTotalBalance())
					assert.Equal(t, int64(workload.DefaultInitialBalance), s.GetMinBalance())
				})
			})
		})
	}
}

func seqsDown(from, to uint64) []uint64 {
	var out []uint64
	for s := from; s >= to; s-- {
		out = append(out, s)
	}
	return out
}

// stripped copies a Transfer's fields into a fresh message, so that
// assert.Equal compares values, not protobuf internals.
func stripped(t *pb.Transfer) *pb.Transfer {
	return &pb.Transfer{Seq: t.GetSeq(), FromAccount: t.GetFromAccount(), ToAccount: t.GetToAccount(), Amount: t.GetAmount()}
}

func slicesMin(s []int64) int64 {
	m := int64(math.MaxInt64)
	for _, v := range s {
		m = min(m, v)
	}
	return m
}

// smallBank keeps the tests that read every balance quick.
var smallBank = workload.BankConfig{Accounts: 10}

// refusalAccounts etc. describe the bank TestRefusals starts with: scenario
// B, so even accounts start at 0.
const (
	refusalAccounts = 10
	refusalBalance  = 1000
)

// TestRefusals sends every kind of bad request of
// docs/design.md §status-codes to each store-backed mode, checks its status
// code, that nothing changed, and that the server counted the answer under
// that code.
func TestRefusals(t *testing.T) {
	const n = refusalAccounts
	tooLongKey := strings.Repeat("k", workload.MaxKeyLen+1)
	tests := []struct {
		name   string
		method string
		call   func(context.Context, *testServer) error
		want   codes.Code
	}{
		{"negative delta", "/locklab.v1.CounterService/Increment", func(ctx context.Context, ts *testServer) error {
			_, err := ts.counter.Increment(ctx, &pb.IncrementRequest{Delta: -1})
			return err
		}, codes.InvalidArgument},
		{"min int64 delta", "/locklab.v1.CounterService/Increment", func(ctx context.Context, ts *testServer) error {
			_, err := ts.counter.Increment(ctx, &pb.IncrementRequest{Delta: math.MinInt64})
			return err
		}, codes.InvalidArgument},
		{"counter overflow", "/locklab.v1.CounterService/Increment", func(ctx context.Context, ts *testServer) error {
			_, err := ts.counter.Increment(ctx, &pb.IncrementRequest{Delta: math.MaxInt64})
			return err
		}, codes.OutOfRange},
		{"zero amount", "/locklab.v1.BankService/TransferMoney", transfer(1, 3, 0), codes.InvalidArgument},
		{"negative amount", "/locklab.v1.BankService/TransferMoney", transfer(1, 3, -5), codes.InvalidArgument},
		{"from == to", "/locklab.v1.BankService/TransferMoney", transfer(1, 1, 1), codes.InvalidArgument},
		{"malformed before unknown", "/locklab.v1.BankService/TransferMoney", transfer(0, n+1, 0), codes.InvalidArgument},
		{"from account 0", "/locklab.v1.BankService/TransferMoney", transfer(0, 1, 1), codes.NotFound},
		{"to account 0", "/locklab.v1.BankService/TransferMoney", transfer(1, 0, 1), codes.NotFound},
		{"from account N+1", "/locklab.v1.BankService/TransferMoney", transfer(n+1, 1, 1), codes.NotFound},
		{"to account N+1", "/locklab.v1.BankService/TransferMoney", transfer(1, n+1, 1), codes.NotFound},
		{"unknown before funds", "/locklab.v1.BankService/TransferMoney", transfer(2, n+1, 1), codes.NotFound},
		{"more than the balance", "/locklab.v1.BankService/TransferMoney", transfer(1, 3, refusalBalance-100+1), codes.FailedPrecondition},
		{"from an even account in B", "/locklab.v1.BankService/TransferMoney", transfer(4, 3, 1), codes.FailedPrecondition},
		{"balance of 0", "/locklab.v1.BankService/GetBalance", balance(0), codes.NotFound},
		{"balance of N+1", "/locklab.v1.BankService/GetBalance", balance(n + 1), codes.NotFound},
		{"history of 0", "/locklab.v1.BankService/GetHistory", history(0, 0), codes.NotFound},
		{"history of N+1", "/locklab.v1.BankService/GetHistory", history(n+1, 0), codes.NotFound},
		{"history limit 1001", "/locklab.v1.BankService/GetHistory", history(1, workload.MaxHistoryLimit+1), codes.InvalidArgument},
		{"put empty key", "/locklab.v1.KVService/Put", put("", []byte("v")), codes.InvalidArgument},
		{"put 257-byte key", "/locklab.v1.KVService/Put", put(tooLongKey, []byte("v")), codes.InvalidArgument},
		{"put 1 MiB + 1 value", "/locklab.v1.KVService/Put", put("k", make([]byte, workload.MaxValueLen+1)), codes.InvalidArgument},
		{"get empty key", "/locklab.v1.KVService/Get", get(""), codes.InvalidArgument},
		{"get 257-byte key", "/locklab.v1.KVService/Get", get(tooLongKey), codes.InvalidArgument},
		{"get missing key", "/locklab.v1.KVService/Get", get("missing"), codes.NotFound},
		{"reset too many accounts", "/locklab.v1.AdminService/Reset", reset(1, workload.MaxAccounts+1, 1), codes.InvalidArgument},
		{"reset negative balance", "/locklab.v1.AdminService/Reset", reset(1, 10, -1), codes.InvalidArgument},
		{"reset total overflows", "/locklab.v1.AdminService/Reset", reset(1, 10, math.MaxInt64/5), codes.InvalidArgument},
		{"reset scenario 9", "/locklab.v1.AdminService/Reset", reset(9, 10, 1), codes.InvalidArgument},
		{"reset scenario -1", "/locklab.v1.AdminService/Reset", reset(-1, 10, 1), codes.InvalidArgument},
		// 256 and 257 are A's and B's numbers modulo 256: an enum value is
		// checked before it is narrowed.
		{"reset scenario 256", "/locklab.v1.AdminService/Reset", reset(256, 10, 1), codes.InvalidArgument},
		{"reset scenario 257", "/locklab.v1.AdminService/Reset", reset(257, 10, 1), codes.InvalidArgument},
	}
	for _, mode := range storeModes {
		t.Run(mode, func(t *testing.T) {
			ts := startServer(t, Config{Mode: mode, Bank: workload.BankConfig{Scenario: workload.ScenarioB, Accounts: n, InitialBalance: refusalBalance}})
			ctx := t.Context()
			// A state with something in every part: counter 1, one key,
			// one transfer (1 → 2: account 1 holds 900).
			_, err := ts.counter.Increment(ctx, &pb.IncrementRequest{Delta: 1})
			require.NoError(t, err)
			_, err = ts.kv.Put(ctx, &pb.PutRequest{Key: "k", Value: []byte("v")})
			require.NoError(t, err)
			_, err = ts.bank.TransferMoney(ctx, &pb.TransferMoneyRequest{FromAccount: 1, ToAccount: 2, Amount: 100})
			require.NoError(t, err)

			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					before := ts.state(t, "k", "missing")
					statsBefore := ts.stats(t)
					requireCode(t, tt.want, tt.call(ctx, ts))
					statsAfter := ts.stats(t)
					requireSameState(t, before, ts.state(t, "k", "missing"))

					assert.Greater(t, statsAfter.GetRequests(), statsBefore.GetRequests(), "a refusal does not start a new window")
					assert.Equal(t, countOf(statsBefore, tt.method, tt.want)+1, countOf(statsAfter, tt.method, tt.want),
						"rpc_counts[%s][%s]", tt.method, tt.want)
				})
			}
		})
	}
}

func transfer(from, to uint32, amount int64) func(context.Context, *testServer) error {
	return func(ctx context.Context, ts *testServer) error {
		_, err := ts.bank.TransferMoney(ctx, &pb.TransferMoneyRequest{FromAccount: from, ToAccount: to, Amount: amount})
		return err
	}
}

func balance(account uint32) func(context.Context, *testServer) error {
	return func(ctx context.Context, ts *testServer) error {
		_, err := ts.bank.GetBalance(ctx, &pb.GetBalanceRequest{Account: account})
		return err
	}
}

func history(account, limit uint32) func(context.Context, *testServer) error {
	return func(ctx context.Context, ts *testServer) error {
		_, err := ts.bank.GetHistory(ctx, &pb.GetHistoryRequest{Account: account, Limit: limit})
		return err
	}
}

func put(key string, value []byte) func(context.Context, *testServer) error {
	return func(ctx context.Context, ts *testServer) error {
		_, err := ts.kv.Put(ctx, &pb.PutRequest{Key: key, Value: value})
		return err
	}
}

func get(key string) func(context.Context, *testServer) error {
	return func(ctx context.Context, ts *testServer) error {
		_, err := ts.kv.Get(ctx, &pb.GetRequest{Key: key})
		return err
	}
}

func reset(sc pb.Scenario, accounts uint32, balance int64) func(context.Context, *testServer) error {
	return func(ctx context.Context, ts *testServer) error {
		_, err := ts.admin.Reset(ctx, &pb.ResetRequest{Scenario: sc, Accounts: accounts, InitialBalance: balance})
		return err
	}
}

// countOf is GetStats' count of method's answers with code c.
func countOf(s *pb.GetStatsResponse, method string, c codes.Code) uint64 {
	return s.GetRpcCounts()[method].GetCodes()[c.String()]
}

// TestResourceExhausted sends a Put over the server's receive limit: gRPC
// refuses it before any handler, nothing changes, and the server goes on
// answering on that connection and on a new one.
func TestResourceExhausted(t *testing.T) {
	for _, mode := range storeModes {
		t.Run(mode, func(t *testing.T) {
			ts := startServer(t, Config{Mode: mode, Bank: smallBank})
			ctx := t.Context()
			_, err := ts.kv.Put(ctx, &pb.PutRequest{Key: "k", Value: []byte("v")})
			require.NoError(t, err)
			before := ts.state(t, "k", "big")

			big := make([]byte, 5<<20)
			require.Greater(t, len(big), MaxRecvMsgSize)
			_, err = ts.kv.Put(ctx, &pb.PutRequest{Key: "big", Value: big}, grpc.MaxCallSendMsgSize(16<<20))
			requireCode(t, codes.ResourceExhausted, err)

			requireSameState(t, before, ts.state(t, "k", "big"))
			_, err = ts.counter.Increment(ctx, &pb.IncrementRequest{Delta: 1})
			require.NoError(t, err, "the same connection still works")
			other := pb.NewCounterServiceClient(dial(t, ts.addr))
			v, err := other.GetValue(ctx, &pb.GetValueRequest{})
			require.NoError(t, err, "a new connection works")
			assert.Equal(t, int64(1), v.GetValue())
			// Refused before a handler ran: not counted (docs/decisions.md).
			assert.Equal(t, uint64(1), ts.stats(t).GetRpcCounts()["/locklab.v1.KVService/Put"].GetTotal(), "only the valid Put is counted")
		})
	}
}

// rawCodec sends and receives messages as the bytes they are, so that a test
// can put anything on the wire. It calls itself "proto" so that the server
// decodes the bytes with its protobuf codec.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *v.(*[]byte), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*v.(*[]byte) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

// TestUndecodableRequest sends bytes that are not protobuf to TransferMoney:
// gRPC refuses them (INTERNAL) before any handler runs, nothing changes and
// the server carries on.
func TestUndecodableRequest(t *testing.T) {
	const method = "/locklab.v1.BankService/TransferMoney"
	for _, mode := range storeModes {
		t.Run(mode, func(t *testing.T) {
			ts := startServer(t, Config{Mode: mode, Bank: smallBank})
			ctx := t.Context()

			// The codec itself works: a well-formed request goes through.
			in, err := proto.Marshal(&pb.TransferMoneyRequest{FromAccount: 1, ToAccount: 2, Amount: 5})
			require.NoError(t, err)
			var out []byte
			require.NoError(t, ts.conn.Invoke(ctx, method, &in, &out, grpc.ForceCodec(rawCodec{})))
			var resp pb.TransferMoneyResponse
			require.NoError(t, proto.Unmarshal(out, &resp))
			assert.Equal(t, uint64(1), resp.GetSeq())
			assert.Equal(t, int64(workload.DefaultInitialBalance+5), resp.GetToBalance())

			before := ts.state(t)
			garbage := bytes.Repeat([]byte{0xff}, 16)
			err = ts.conn.Invoke(ctx, method, &garbage, &out, grpc.ForceCodec(rawCodec{}))
			requireCode(t, codes.Internal, err)
			assert.Contains(t, err.Error(), "unmarshal")
			requireSameState(t, before, ts.state(t))

			r, err := ts.bank.TransferMoney(ctx, &pb.TransferMoneyRequest{FromAccount: 2, ToAccount: 1, Amount: 5})
			require.NoError(t, err, "the connection still works")
			assert.Equal(t, uint64(2), r.GetSeq())
			assert.Equal(t, map[string]uint64{"OK": 2}, ts.stats(t).GetRpcCounts()[method].GetCodes(),
				"refused before a handler ran: not counted")
		})
	}
}

// TestContextCodes: a caller whose context has ended gets CANCELED or
// DEADLINE_EXCEEDED, from the client and from the server's handlers, and
// nothing is applied.
func TestContextCodes(t *testing.T) {
	for _, mode := range storeModes {
		t.Run(mode, func(t *testing.T) {
			ts := startServer(t, Config{Mode: mode, Bank: smallBank})
			cancelled, cancel := context.WithCancel(t.Context())
			cancel()
			expired, cancel2 := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
			defer cancel2()
			before := ts.state(t)

			_, err := ts.counter.Increment(cancelled, &pb.IncrementRequest{Delta: 1})
			requireCode(t, codes.Canceled, err, "client, cancelled")
			_, err = ts.counter.Increment(expired, &pb.IncrementRequest{Delta: 1})
			requireCode(t, codes.DeadlineExceeded, err, "client, expired")

			// The handlers themselves, as gRPC calls them with the caller's
			// context: the store refuses the ended context and toStatus maps it.
			cs := &counterService{d: dataOf[workload.CounterCmd, int64](t, ts.srv, "counter")}
			_, err = cs.Increment(cancelled, &pb.IncrementRequest{Delta: 1})
			requireCode(t, codes.Canceled, err, "handler, cancelled")
			_, err = cs.Increment(expired, &pb.IncrementRequest{Delta: 1})
			requireCode(t, codes.DeadlineExceeded, err, "handler, expired")
			bs := &bankService{d: dataOf[workload.BankCmd, workload.BankResult](t, ts.srv, "bank")}
			_, err = bs.TransferMoney(expired, &pb.TransferMoneyRequest{FromAccount: 1, ToAccount: 2, Amount: 1})
			requireCode(t, codes.DeadlineExceeded, err, "handler, expired")
			ks := &kvService{d: dataOf[workload.KVCmd, workload.KVResult](t, ts.srv, "kv")}
			_, err = ks.Put(cancelled, &pb.PutRequest{Key: "k", Value: []byte("v")})
			requireCode(t, codes.Canceled, err, "handler, cancelled")

			requireSameState(t, before, ts.state(t, "k"))
		})
	}
}

// TestUnavailableAfterStop: once Stop has closed the stores, the handlers
// answer UNAVAILABLE, and a client gets UNAVAILABLE from the stopped server.
func TestUnavailableAfterStop(t *testing.T) {
	for _, mode := range storeModes {
		t.Run(mode, func(t *testing.T) {
			ts := startServer(t, Config{Mode: mode})
			ctx := t.Context()
			_, err := ts.counter.Increment(ctx, &pb.IncrementRequest{Delta: 1})
			require.NoError(t, err)

			stopCtx, cancel := context.WithTimeout(ctx, stopTimeout)
			defer cancel()
			ts.srv.Stop(stopCtx)

			st := ts.srv.st
			counter := &counterService{d: dataOf[workload.CounterCmd, int64](t, ts.srv, "counter")}
			bank := &bankService{d: dataOf[workload.BankCmd, workload.BankResult](t, ts.srv, "bank")}
			kv := &kvService{d: dataOf[workload.KVCmd, workload.KVResult](t, ts.srv, "kv")}
			calls := map[string]func() error{
				"Increment": func() error {
					_, err := counter.Increment(ctx, &pb.IncrementRequest{Delta: 1})
					return err
				},
				"GetValue": func() error {
					_, err := counter.GetValue(ctx, &pb.GetValueRequest{})
					return err
				},
				"TransferMoney": func() error {
					_, err := bank.TransferMoney(ctx, &pb.TransferMoneyRequest{FromAccount: 1, ToAccount: 2, Amount: 1})
					return err
				},
				"GetBalance": func() error {
					_, err := bank.GetBalance(ctx, &pb.GetBalanceRequest{Account: 1})
					return err
				},
				"GetHistory": func() error {
					_, err := bank.GetHistory(ctx, &pb.GetHistoryRequest{Account: 1})
					return err
				},
				"Put": func() error {
					_, err := kv.Put(ctx, &pb.PutRequest{Key: "k"})
					return err
				},
				"Get": func() error {
					_, err := kv.Get(ctx, &pb.GetRequest{Key: "k"})
					return err
				},
				"Reset": func() error {
					_, err := (&adminService{mode: ts.srv.mode, st: st, m: newMetrics(nil, 1)}).Reset(ctx, &pb.ResetRequest{})
					return err
				},
				"GetStats": func() error {
					_, err := (&adminService{mode: ts.srv.mode, st: st, m: newMetrics(nil, 1)}).GetStats(ctx, &pb.GetStatsRequest{})
					return err
				},
			}
			for name, call := range calls {
				requireCode(t, codes.Unavailable, call(), name)
			}

			_, err = ts.counter.GetValue(ctx, &pb.GetValueRequest{})
			requireCode(t, codes.Unavailable, err, "a client of the stopped server")
		})
	}
}

// TestNoop: the noop mode answers every data RPC with an empty OK, whatever
// the input, and still refuses a Reset the other modes refuse.
func TestNoop(t *testing.T) {
	ts := startServer(t, Config{Mode: "noop"})
	ctx := t.Context()

	inc, err := ts.counter.Increment(ctx, &pb.IncrementRequest{Delta: -1})
	require.NoError(t, err)
	assert.True(t, proto.Equal(&pb.IncrementResponse{}, inc))
	inc, err = ts.counter.Increment(ctx, &pb.IncrementRequest{Delta: 5})
	require.NoError(t, err)
	assert.True(t, proto.Equal(&pb.IncrementResponse{}, inc), "no state: Increment returns 0")
	v, err := ts.counter.GetValue(ctx, &pb.GetValueRequest{})
	require.NoError(t, err)
	assert.True(t, proto.Equal(&pb.GetValueResponse{}, v))
	for _, req := range []*pb.TransferMoneyRequest{
		{FromAccount: 1, ToAccount: 2, Amount: 1}, {FromAccount: 1, ToAccount: 1, Amount: 1},
		{FromAccount: 0, ToAccount: 5000, Amount: -1}, {FromAccount: 1, ToAccount: 2, Amount: math.MaxInt64},
	} {
		r, err := ts.bank.TransferMoney(ctx, req)
		require.NoError(t, err)
		assert.True(t, proto.Equal(&pb.TransferMoneyResponse{}, r), "%v", req)
	}
	b, err := ts.bank.GetBalance(ctx, &pb.GetBalanceRequest{Account: 0})
	require.NoError(t, err)
	assert.True(t, proto.Equal(&pb.GetBalanceResponse{}, b))
	h, err := ts.bank.GetHistory(ctx, &pb.GetHistoryRequest{Account: 1, Limit: 5000})
	require.NoError(t, err)
	assert.True(t, proto.Equal(&pb.GetHistoryResponse{}, h))
	p, err := ts.kv.Put(ctx, &pb.PutRequest{Key: "", Value: make([]byte, workload.MaxValueLen+1)})
	require.NoError(t, err)
	assert.True(t, proto.Equal(&pb.PutResponse{}, p))
	g, err := ts.kv.Get(ctx, &pb.GetRequest{Key: "missing"})
	require.NoError(t, err)
	assert.True(t, proto.Equal(&pb.GetResponse{}, g))

	s := ts.stats(t)
	assert.Equal(t, "noop", s.GetMode())
	assert.False(t, s.GetStoreBacked())
	assert.Zero(t, s.GetTotalBalance())
	assert.Zero(t, s.GetCounterValue())
	assert.Zero(t, s.GetQueueHighWater())
	assert.Empty(t, s.GetStoreLatency(), "no store, no store time")
	assert.Equal(t, uint64(4), s.GetRpcCounts()["/locklab.v1.BankService/TransferMoney"].GetCodes()["OK"])

	for _, req := range []*pb.ResetRequest{
		{Accounts: workload.MaxAccounts + 1}, {InitialBalance: -1}, {Scenario: 9}, {Scenario: 257},
		{Accounts: 10, InitialBalance: math.MaxInt64 / 5},
	} {
		_, err := ts.admin.Reset(ctx, req)
		requireCode(t, codes.InvalidArgument, err, "%v", req)
	}
	_, err = ts.admin.Reset(ctx, &pb.ResetRequest{Scenario: pb.Scenario_SCENARIO_C, Accounts: 3, InitialBalance: 1})
	require.NoError(t, err)
	assert.Equal(t, uint64(1), ts.stats(t).GetRequests(), "Reset started a new window, counting itself")
}

// TestNew: New refuses what the server must not start with, and a server
// that never served stops without leaking its stores' goroutines.
func TestNew(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no mode", Config{}, "no mode given; modes: " + ModeNames()},
		{"unknown mode", Config{Mode: "Mutex"}, `unknown mode "Mutex"; modes: ` + ModeNames()},
		{"sampling not a power of two", Config{Mode: "mutex", SampleEvery: 3}, "power of two"},
		{"bad bank, inputQ", Config{Mode: "inputQ", Bank: workload.BankConfig{Accounts: workload.MaxAccounts + 1}}, "accounts"},
		{"bad bank, noop", Config{Mode: "noop", Bank: workload.BankConfig{Scenario: 4}}, "scenario"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := New(tt.cfg)
			require.Error(t, err)
			assert.Nil(t, srv)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	for _, m := range Modes() {
		t.Run("stop without serve/"+m.Name, func(t *testing.T) {
			srv, err := New(Config{Mode: m.Name})
			require.NoError(t, err)
			assert.Equal(t, m.Name, srv.Mode().Name)
			assert.Equal(t, m.Name != "noop", srv.Mode().StoreBacked())
			srv.Stop(t.Context())
			srv.Stop(t.Context()) // twice is harmless
		})
	}
}

// TestModeNew: a mode looked up once builds its server without reading
// cfg.Mode again (its design's row is what every store is wrapped in), and a
// Mode made by hand, which has no row, is refused rather than served as noop.
func TestModeNew(t *testing.T) {
	for _, m := range Modes() {
		t.Run(m.Name, func(t *testing.T) {
			srv, err := m.New(Config{Mode: "not read"})
			require.NoError(t, err)
			defer srv.Stop(t.Context())
			assert.Equal(t, m, srv.Mode())
		})
	}
	srv, err := Mode{Name: "mutex", Doc: "made by hand"}.New(Config{})
	assert.Nil(t, srv)
	assert.ErrorContains(t, err, `mode "mutex" is not one of Modes`)
}

// TestUnservedWorkloadsAreUnimplemented: for every store-backed mode and every
// workload its design does not serve (from the registry, never a list kept
// here), each data RPC answers UNIMPLEMENTED naming the design and the
// workload, and the served workloads still work. A mode that serves
// everything shows nothing here; atomic (a counter only) shows bank and kv.
func TestUnservedWorkloadsAreUnimplemented(t *testing.T) {
	seen := 0
	for _, m := range Modes() {
		if !m.StoreBacked() || allServed(m) {
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			ts := startServer(t, Config{Mode: m.Name})
			ctx := context.Background()
			calls := map[string][]func() error{
				"counter": {
					func() error { _, err := ts.counter.Increment(ctx, &pb.IncrementRequest{Delta: 1}); return err },
					func() error { _, err := ts.counter.GetValue(ctx, &pb.GetValueRequest{}); return err },
				},
				"bank": {
					func() error {
						_, err := ts.bank.TransferMoney(ctx, &pb.TransferMoneyRequest{FromAccount: 1, ToAccount: 2, Amount: 1})
						return err
					},
					func() error { _, err := ts.bank.GetBalance(ctx, &pb.GetBalanceRequest{Account: 1}); return err },
					func() error { _, err := ts.bank.GetHistory(ctx, &pb.GetHistoryRequest{Account: 1}); return err },
				},
				"kv": {
					func() error { _, err := ts.kv.Put(ctx, &pb.PutRequest{Key: "k", Value: []byte("v")}); return err },
					func() error { _, err := ts.kv.Get(ctx, &pb.GetRequest{Key: "k"}); return err },
				},
			}
			require.Len(t, calls, len(Workloads()))
			for _, name := range Workloads() {
				for _, call := range calls[name] {
					err := call()
					if m.Serves(name) {
						assert.NoError(t, err, name)
						continue
					}
					seen++
					assert.Equal(t, codes.Unimplemented, status.Code(err), name)
					assert.Contains(t, status.Convert(err).Message(), "mode "+m.Name+" does not serve workload "+name)
				}
			}
			ts.reset(t, pb.Scenario_SCENARIO_A, 0, 0) // Reset and GetStats work whatever is served
			st := ts.stats(t)
			assert.Equal(t, m.Name, st.GetMode())
		})
	}
	if !t.Failed() {
		assert.Positive(t, seen, "no mode refused a workload: the test would pass without the refusal")
	}
}

// TestGetStatsWindowOnly: GetStats with WindowOnly reads the window's
// figures without the state's summary, so it answers even when the stores
// can no longer be reached (closed by Stop here; behind a busy design or
// database pool in a run); the control, a full GetStats, needs the stores
// and is UNAVAILABLE.
func TestGetStatsWindowOnly(t *testing.T) {
	ts := startServer(t, Config{Mode: "mutex"})
	ctx := t.Context()
	_, err := ts.counter.Increment(ctx, &pb.IncrementRequest{Delta: 1})
	require.NoError(t, err)
	full := ts.stats(t)
	require.Positive(t, full.GetAccounts(), "the full answer has the bank's summary")

	stopCtx, cancel := context.WithTimeout(ctx, stopTimeout)
	defer cancel()
	ts.srv.Stop(stopCtx)
	admin := &adminService{mode: ts.srv.mode, st: ts.srv.st, m: newMetrics(nil, 1)}
	got, err := admin.GetStats(ctx, &pb.GetStatsRequest{WindowOnly: true})
	require.NoError(t, err)
	assert.True(t, got.GetStoreBacked())
	assert.Zero(t, got.GetAccounts(), "no summary")
	_, err = admin.GetStats(ctx, &pb.GetStatsRequest{})
	requireCode(t, codes.Unavailable, err, "the control: the summary needs the stores")
}
