package server

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/workload"
)

// clientLog is what one client goroutine saw.
type clientLog struct {
	codes     map[string]map[string]uint64 // method → code name → count
	delta     int64                        // sum of the acknowledged increments
	seqs      []uint64                     // of the acknowledged transfers
	puts      map[string]uint64            // key → acknowledged Puts
	lastVer   map[string]uint64            // key → highest version acknowledged
	negatives int                          // balances seen below 0
}

func (l *clientLog) record(method string, err error) {
	if l.codes[method] == nil {
		l.codes[method] = map[string]uint64{}
	}
	l.codes[method][status.Code(err).String()]++
}

// TestConcurrentClients drives each store-backed mode with 64 gRPC clients
// doing a mix of valid and refused commands, then checks the invariants
// through the API, and that the server counted exactly the answers the
// clients received, method by method and code by code.
func TestConcurrentClients(t *testing.T) {
	const (
		clients  = 64
		ops      = 40 // per client
		accounts = 16
		initial  = 100 // small, so that many transfers overdraw
		conns    = 4
		keys     = 8
	)
	for _, mode := range storeModes {
		t.Run(mode, func(t *testing.T) {
			ts := startServer(t, Config{Mode: mode, Bank: workload.BankConfig{Scenario: workload.ScenarioA, Accounts: accounts, InitialBalance: initial}})
			var cs []*testServer
			for range conns {
				c := *ts
				conn := dial(t, ts.addr)
				c.conn = conn
				c.counter, c.bank, c.kv = pb.NewCounterServiceClient(conn), pb.NewBankServiceClient(conn), pb.NewKVServiceClient(conn)
				cs = append(cs, &c)
			}

			logs := make([]clientLog, clients)
			var wg sync.WaitGroup
			for i := range clients {
				wg.Go(func() {
					c, ctx := cs[i%conns], t.Context()
					r := rand.New(rand.NewPCG(uint64(i), 42))
					l := &clientLog{codes: map[string]map[string]uint64{}, puts: map[string]uint64{}, lastVer: map[string]uint64{}}
					defer func() { logs[i] = *l }()
					for range ops {
						switch p := r.IntN(100); {
						case p < 40: // accounts 0 and N+1 do not exist; from may equal to
							from, to := uint32(r.IntN(accounts+2)), uint32(r.IntN(accounts+2))
							amount := int64(r.IntN(150)) // 0 is invalid, > balance overdraws
							resp, err := c.bank.TransferMoney(ctx, &pb.TransferMoneyRequest{FromAccount: from, ToAccount: to, Amount: amount})
							l.record("/locklab.v1.BankService/TransferMoney", err)
							if err == nil {
								l.seqs = append(l.seqs, resp.GetSeq())
								if resp.GetFromBalance() < 0 || resp.GetToBalance() < 0 {
									l.negatives++
								}
							}
						case p < 70:
							delta := int64(r.IntN(10))
							_, err := c.counter.Increment(ctx, &pb.IncrementRequest{Delta: delta})
							l.record("/locklab.v1.CounterService/Increment", err)
							if err == nil {
								l.delta += delta
							}
						case p < 80:
							_, err := c.counter.Increment(ctx, &pb.IncrementRequest{Delta: -1 - int64(r.IntN(5))})
							l.record("/locklab.v1.CounterService/Increment", err)
						case p < 90:
							resp, err := c.bank.GetBalance(ctx, &pb.GetBalanceRequest{Account: uint32(1 + r.IntN(accounts))})
							l.record("/locklab.v1.BankService/GetBalance", err)
							if err == nil && resp.GetBalance() < 0 {
								l.negatives++
							}
						default:
							key := fmt.Sprintf("k%d", r.IntN(keys))
							resp, err := c.kv.Put(ctx, &pb.PutRequest{Key: key, Value: []byte{byte(i)}})
							l.record("/locklab.v1.KVService/Put", err)
							if err == nil {
								l.puts[key]++
								l.lastVer[key] = max(l.lastVer[key], resp.GetVersion())
							}
						}
					}
				})
			}
			wg.Wait()

			want := map[string]map[string]uint64{}
			var delta int64
			var seqs []uint64
			puts, lastVer := map[string]uint64{}, map[string]uint64{}
			for _, l := range logs {
				for method, byCode := range l.codes {
					if want[method] == nil {
						want[method] = map[string]uint64{}
					}
					for code, n := range byCode {
						want[method][code] += n
					}
				}
				delta += l.delta
				seqs = append(seqs, l.seqs...)
				for k, n := range l.puts {
					puts[k] += n
				}
				for k, v := range l.lastVer {
					lastVer[k] = max(lastVer[k], v)
				}
				assert.Zero(t, l.negatives, "no client saw a negative balance")
			}
			// The mix must have produced every kind of answer, or the
			// test checks less than it claims.
			tr := want["/locklab.v1.BankService/TransferMoney"]
			for _, c := range []codes.Code{codes.OK, codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition} {
				require.NotZero(t, tr[c.String()], "transfers answered %s", c)
			}
			require.NotZero(t, want["/locklab.v1.CounterService/Increment"][codes.InvalidArgument.String()])

			s := ts.stats(t) // the first GetStats: it is not in its own counts
			got := map[string]map[string]uint64{}
			var total uint64
			for method, c := range s.GetRpcCounts() {
				if len(c.GetCodes()) > 0 {
					got[method] = c.GetCodes()
				}
				total += c.GetTotal()
			}
			assert.Equal(t, want, got, "rpc_counts match what the clients saw")
			assert.Equal(t, uint64(clients*ops), total)
			assert.Equal(t, uint64(clients*ops), s.GetRequests())

			assert.Equal(t, int64(accounts*initial), s.GetTotalBalance(), "money conserved")
			assert.GreaterOrEqual(t, s.GetMinBalance(), int64(0))
			assert.Equal(t, delta, s.GetCounterValue(), "counter = sum of acknowledged deltas")
			assert.Equal(t, uint64(len(seqs)), s.GetTransfers(), "transfers applied = transfers acknowledged")
			assert.Equal(t, uint64(len(puts)), s.GetKvKeys())
			assert.ElementsMatch(t, seqsDown(uint64(len(seqs)), 1), seqs, "every acknowledged transfer has its own seq")
			assert.Equal(t, puts, lastVer, "each key's last version = its acknowledged Puts")

			var sum int64
			for id, b := range ts.balances(t) {
				assert.GreaterOrEqual(t, b, int64(0), "account %d", id+1)
				sum += b
			}
			assert.Equal(t, int64(accounts*initial), sum, "balances add up")
			v, err := ts.counter.GetValue(t.Context(), &pb.GetValueRequest{})
			require.NoError(t, err)
			assert.Equal(t, delta, v.GetValue())
		})
	}
}
