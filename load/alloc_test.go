package load

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	pb "github.com/locklab/locklab/proto/locklab/v1"
)

// wireConn is a connection without a transport: Invoke encodes the request
// with the driver's codec and decodes a canned answer of the method's with
// it, so that what a call costs the driver itself can be counted apart
// from what grpc-go costs.
type wireConn struct {
	codec   codec
	answers map[string]mem.BufferSlice
	// decodeToo also decodes each answer into a new generated message, as
	// the generated stubs do: the allocation test's control.
	decodeToo map[string]func() proto.Message
}

func newWireConn(t *testing.T, decodeToo bool) *wireConn {
	t.Helper()
	w := &wireConn{codec: newCodec(), answers: map[string]mem.BufferSlice{}, decodeToo: map[string]func() proto.Message{}}
	add := func(method string, m proto.Message) {
		b, err := proto.Marshal(m)
		require.NoError(t, err)
		w.answers[method] = mem.BufferSlice{mem.SliceBuffer(b)}
		if decodeToo {
			w.decodeToo[method] = func() proto.Message { return m.ProtoReflect().New().Interface() }
		}
	}
	add(pb.AdminService_GetStats_FullMethodName, &pb.GetStatsResponse{StoreBacked: true, Accounts: 1000})
	add(pb.AdminService_Reset_FullMethodName, &pb.ResetResponse{})
	add(pb.CounterService_Increment_FullMethodName, &pb.IncrementResponse{Value: 1})
	add(pb.BankService_TransferMoney_FullMethodName, &pb.TransferMoneyResponse{Seq: 1, FromBalance: 5, ToBalance: 5000})
	add(pb.BankService_GetBalance_FullMethodName, &pb.GetBalanceResponse{Balance: 5})
	add(pb.BankService_GetHistory_FullMethodName, &pb.GetHistoryResponse{Transfers: []*pb.Transfer{
		{Seq: 3, FromAccount: 1, ToAccount: 2}, {Seq: 2, FromAccount: 2, ToAccount: 1}, {Seq: 1, FromAccount: 1, ToAccount: 3},
	}})
	add(pb.KVService_Put_FullMethodName, &pb.PutResponse{Version: 1})
	add(pb.KVService_Get_FullMethodName, &pb.GetResponse{Value: make([]byte, 581), Version: 1})
	return w
}

func (w *wireConn) Invoke(_ context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	if _, err := w.codec.Marshal(args); err != nil {
		return err
	}
	ans, ok := w.answers[method]
	if !ok {
		return errors.New("wireConn: no answer for " + method)
	}
	if m := w.decodeToo[method]; m != nil {
		if err := w.codec.Unmarshal(ans, m()); err != nil {
			return err
		}
	}
	return w.codec.Unmarshal(ans, reply)
}

func (*wireConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, errors.New("wireConn: no streams")
}

// callAllocs is the allocations of one of the driver's calls, without the
// transport's: the call through a wireConn, its check and its record.
func callAllocs(t *testing.T, workload string, skew float64, decodeToo bool) float64 {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Addr, cfg.Workload, cfg.Skew, cfg.Callers, cfg.Timeline = "wire", workload, skew, 1, time.Second
	require.NoError(t, cfg.Validate())
	w := newWireConn(t, decodeToo)
	cl := clients{conn: w, counter: pb.NewCounterServiceClient(w), bank: pb.NewBankServiceClient(w),
		kv: pb.NewKVServiceClient(w), admin: pb.NewAdminServiceClient(w)}
	ctx := t.Context()
	p, err := setup(ctx, cfg, Workloads(), cl)
	require.NoError(t, err)
	rec := newRecorder(len(p.cases), 1)
	start := time.Now()
	rec.timeline(start, cfg.Timeline)
	c, err := newCaller(0, p, cl, rec.shard(0))
	require.NoError(t, err)
	return testing.AllocsPerRun(500, func() {
		res := p.calls.call(c, ctx)
		c.rec.record(res, start, time.Millisecond, 0)
	})
}

// TestCallsAllocateNothing: past grpc-go, a call allocates nothing of the
// driver's: not its request, its answer, its check or its record, in
// every workload (kv with its own keys and with shared ones).
func TestCallsAllocateNothing(t *testing.T) {
	for _, wl := range WorkloadNames() {
		for _, skew := range []float64{0, 0.9} {
			assert.Zero(t, callAllocs(t, wl, skew, false), "%s, skew %v", wl, skew)
		}
	}
}

// The control: decoding each answer into a new generated message as well,
// as the generated stubs do, shows in the same count.
func TestCallsAllocateNothingCanFail(t *testing.T) {
	for _, wl := range WorkloadNames() {
		assert.GreaterOrEqual(t, callAllocs(t, wl, 0, true), 1.0, wl)
	}
}
