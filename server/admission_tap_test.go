package server

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/locklab/locklab/proto/locklab/v1"
)

const incrementMethod = "/locklab.v1.CounterService/Increment"

// holdCall opens an Increment whose request is not sent yet: the server has
// admitted it (its headers went out on conn before any later call's) and its
// handler waits for the request. answer sends the request and reads the
// answer.
func holdCall(t *testing.T, conn *grpc.ClientConn, delta int64) (answer func() error) {
	t.Helper()
	cs, err := conn.NewStream(t.Context(), &grpc.StreamDesc{}, incrementMethod)
	require.NoError(t, err)
	return func() error {
		if err := cs.SendMsg(&pb.IncrementRequest{Delta: delta}); err != nil {
			return err
		}
		if err := cs.CloseSend(); err != nil {
			return err
		}
		return cs.RecvMsg(&pb.IncrementResponse{})
	}
}

// TestMaxCallsRefusesBeforeDecoding: with -max-calls 1 and one call held in
// the server, another data call is refused RESOURCE_EXHAUSTED, even one whose
// request cannot be decoded — the refusal comes before the decoding — and is
// never applied, while the admin service still answers; once the held call
// is answered, the place is free. The control: the same undecodable bytes,
// admitted, get the decoder's INTERNAL, so the first answer was not the
// decoder's. For a lock design and an owner design alike.
func TestMaxCallsRefusesBeforeDecoding(t *testing.T) {
	garbage := []byte{0xff, 0xff, 0xff} // no valid protobuf field
	for _, mode := range []string{"mutex", "inputQ"} {
		t.Run(mode, func(t *testing.T) {
			ts := startServer(t, Config{Mode: mode, MaxCalls: 1})
			answer := holdCall(t, ts.conn, 5)

			var out []byte
			err := ts.conn.Invoke(t.Context(), incrementMethod, &garbage, &out, grpc.ForceCodec(rawCodec{}))
			require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
			assert.Contains(t, status.Convert(err).Message(), "-max-calls 1")
			_, err = ts.counter.Increment(t.Context(), &pb.IncrementRequest{Delta: 100})
			require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
			assert.Equal(t, int64(0), ts.stats(t).GetCounterValue(), "the admin service is not bounded; nothing applied yet")

			require.NoError(t, answer(), "the held call is served")
			_, err = ts.counter.Increment(t.Context(), &pb.IncrementRequest{Delta: 1})
			require.NoError(t, err, "the place is free again")
			// Last: a call that fails its decoding never reaches the
			// handler's release, so it gives its place back when its
			// stream ends, just after its status went out, and a call
			// right behind it may still find the place taken.
			err = ts.conn.Invoke(t.Context(), incrementMethod, &garbage, &out, grpc.ForceCodec(rawCodec{}))
			assert.Equal(t, codes.Internal, status.Code(err), "the control: admitted, the same bytes reach the decoder: %v", err)

			s := ts.stats(t)
			assert.Equal(t, int64(6), s.GetCounterValue(), "the held call and the last applied; the refused one never")
			assert.Equal(t, uint64(2), s.GetRpcCounts()[incrementMethod].GetCodes()[codes.ResourceExhausted.String()], "the refusals are counted though no handler ran")
		})
	}
}

// TestMaxCallsDoesNotLeak: a held call whose caller goes away (its
// connection closed) gives its place back, though no handler ever
// returned; the control is that while it is held, the place is taken.
func TestMaxCallsDoesNotLeak(t *testing.T) {
	ts := startServer(t, Config{Mode: "inputQ", MaxCalls: 1})
	gone := dial(t, ts.addr)
	holdCall(t, gone, 1)
	// A call on gone after the held one is refused: the place is taken.
	_, err := pb.NewCounterServiceClient(gone).Increment(t.Context(), &pb.IncrementRequest{Delta: 1})
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	require.NoError(t, gone.Close())
	// The server learns of the closed connection on its own time: poll.
	require.Eventually(t, func() bool {
		_, err := ts.counter.Increment(context.Background(), &pb.IncrementRequest{Delta: 1})
		return err == nil
	}, rpcTimeout, time.Millisecond, "the held call's place was never given back")
	assert.Equal(t, int64(1), ts.stats(t).GetCounterValue(), "only the call admitted after the leak check applied")
}

func TestMaxCallsRefused(t *testing.T) {
	_, err := New(Config{Mode: "mutex", MaxCalls: -1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "max calls -1")
}
