package server

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/locklab/locklab/proto/locklab/v1"
)

// storeModes are the modes that keep state and serve every workload; every
// end-to-end expectation of docs/design.md §api holds for each of them alike.
// They come from the registry: a new design is tested here without an edit.
var storeModes = func() []string {
	var names []string
	for _, m := range Modes() {
		if m.StoreBacked() && allServed(m) {
			names = append(names, m.Name)
		}
	}
	return names
}()

func allServed(m Mode) bool {
	for _, wl := range Workloads() {
		if !m.Serves(wl) {
			return false
		}
	}
	return true
}

// rpcTimeout bounds every test RPC that has no deadline of its own, so that a
// hung server fails a test instead of the whole run. The machine is small and
// shared: it is generous on purpose.
const rpcTimeout = 30 * time.Second

// stopTimeout bounds how long a cleanup waits for Stop and Serve.
const stopTimeout = 20 * time.Second

// testServer is a real server on a loopback port with a real client.
type testServer struct {
	srv  *Server
	addr string
	conn *grpc.ClientConn

	counter pb.CounterServiceClient
	bank    pb.BankServiceClient
	kv      pb.KVServiceClient
	admin   pb.AdminServiceClient
}

// startServer serves cfg on 127.0.0.1:0 and connects a client to it. The
// cleanup closes the client, stops the server (a second Stop if the test
// stopped it already: it must be harmless) and waits for Serve to return nil.
func startServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	srv, err := New(cfg)
	require.NoError(t, err)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Stop(context.Background())
		require.NoError(t, err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()

	ts := &testServer{srv: srv, addr: lis.Addr().String()}
	ts.conn = dial(t, ts.addr)
	ts.counter = pb.NewCounterServiceClient(ts.conn)
	ts.bank = pb.NewBankServiceClient(ts.conn)
	ts.kv = pb.NewKVServiceClient(ts.conn)
	ts.admin = pb.NewAdminServiceClient(ts.conn)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		srv.Stop(ctx)
		select {
		case err := <-served:
			assert.NoError(t, err, "Serve after Stop")
		case <-time.After(stopTimeout):
			t.Errorf("Serve did not return %v after Stop", stopTimeout)
		}
	})
	return ts
}

// dial connects a new client to addr; the cleanup closes it. Cleanups run
// last-in first-out, so a client dialled after startServer is closed before
// that server stops.
func dial(t testing.TB, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	opts = append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(withDefaultTimeout),
	}, opts...)
	conn, err := grpc.NewClient(addr, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// withDefaultTimeout gives a call rpcTimeout unless its context ends sooner.
func withDefaultTimeout(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	return invoker(ctx, method, req, reply, cc, opts...)
}

// requireCode fails unless err is a gRPC status with code want.
func requireCode(t *testing.T, want codes.Code, err error, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	st, ok := status.FromError(err)
	require.True(t, ok, "not a gRPC status: %v", err)
	require.Equal(t, want, st.Code(), "%v", err)
}

// stats calls GetStats.
func (ts *testServer) stats(t *testing.T) *pb.GetStatsResponse {
	t.Helper()
	s, err := ts.admin.GetStats(t.Context(), &pb.GetStatsRequest{})
	require.NoError(t, err)
	return s
}

// reset calls Reset.
func (ts *testServer) reset(t *testing.T, sc pb.Scenario, accounts uint32, balance int64) {
	t.Helper()
	_, err := ts.admin.Reset(t.Context(), &pb.ResetRequest{Scenario: sc, Accounts: accounts, InitialBalance: balance})
	require.NoError(t, err)
}

// balances reads every account's balance.
func (ts *testServer) balances(t *testing.T) []int64 {
	t.Helper()
	n := ts.stats(t).GetAccounts()
	out := make([]int64, n)
	for id := uint32(1); id <= n; id++ {
		r, err := ts.bank.GetBalance(t.Context(), &pb.GetBalanceRequest{Account: id})
		require.NoError(t, err)
		out[id-1] = r.GetBalance()
	}
	return out
}

// state is everything a refused command must leave alone, read through the
// API: the whole bank, the counter and the map (its size and the keys the
// tests put).
type state struct {
	totalBalance, minBalance, counter int64
	accounts                          uint32
	transfers, kvKeys                 uint64
	balances                          []int64
	history                           []*pb.Transfer // account 1's, as Transfer values
	kv                                map[string]string
}

func (ts *testServer) state(t *testing.T, keys ...string) state {
	t.Helper()
	s := ts.stats(t)
	st := state{
		totalBalance: s.GetTotalBalance(), minBalance: s.GetMinBalance(), counter: s.GetCounterValue(),
		accounts: s.GetAccounts(), transfers: s.GetTransfers(), kvKeys: s.GetKvKeys(),
		balances: ts.balances(t), kv: map[string]string{},
	}
	v, err := ts.counter.GetValue(t.Context(), &pb.GetValueRequest{})
	require.NoError(t, err)
	require.Equal(t, st.counter, v.GetValue(), "GetValue and GetStats agree")
	h, err := ts.bank.GetHistory(t.Context(), &pb.GetHistoryRequest{Account: 1, Limit: 1000})
	require.NoError(t, err)
	st.history = h.GetTransfers()
	for _, k := range keys {
		r, err := ts.kv.Get(t.Context(), &pb.GetRequest{Key: k})
		if status.Code(err) == codes.NotFound {
			continue
		}
		require.NoError(t, err)
		st.kv[k] = fmt.Sprintf("%q@%d", r.GetValue(), r.GetVersion())
	}
	return st
}

func requireSameState(t *testing.T, before, after state) {
	t.Helper()
	assert.Equal(t, before.totalBalance, after.totalBalance, "total balance")
	assert.Equal(t, before.minBalance, after.minBalance, "min balance")
	assert.Equal(t, before.counter, after.counter, "counter")
	assert.Equal(t, before.accounts, after.accounts, "accounts")
	assert.Equal(t, before.transfers, after.transfers, "transfers")
	assert.Equal(t, before.kvKeys, after.kvKeys, "kv keys")
	assert.Equal(t, before.balances, after.balances, "balances")
	require.Equal(t, len(before.history), len(after.history), "history of account 1")
	for i := range before.history {
		assert.Equal(t, before.history[i].GetSeq(), after.history[i].GetSeq(), "history of account 1")
	}
	assert.Equal(t, before.kv, after.kv, "kv values")
}

// dataOf is the named workload's store as srv's data RPCs use it.
func dataOf[C, R any](t *testing.T, srv *Server, name string) *data[C, R] {
	t.Helper()
	for wl, w := range workloads {
		if w.Name() == name {
			in, ok := srv.st.ms.wls[wl].(*inst[C, R])
			require.True(t, ok, "workload %s's command types", name)
			return in.data
		}
	}
	t.Fatalf("no workload %s", name)
	return nil
}
