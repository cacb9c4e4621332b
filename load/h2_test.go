package load

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/locklab/locklab/proto/locklab/v1"
)

// The driver's own connections against grpc-go's server: what a method of
// h2Server's answers, the driver must read as grpc-go's client would.

const (
	mOK        = "/t.T/OK"        // IncrementResponse{Value: 7}
	mRefused   = "/t.T/Refused"   // FAILED_PRECONDITION, with a message to escape
	mBig       = "/t.T/Big"       // GetResponse with the request's value length in bytes, sent back
	mEcho      = "/t.T/Echo"      // GetResponse{Value: the request's value}
	mHang      = "/t.T/Hang"      // no answer until the call is cancelled
	mNoMessage = "/t.T/NoMessage" // OK without a message
	mLong      = "/t.T/Long"      // FAILED_PRECONDITION with a message longer than a frame
	mSlow      = "/t.T/Slow"      // IncrementResponse{Value: 7} after 300 ms
)

// longMessage is mLong's: its trailers take a HEADERS frame and a
// CONTINUATION (HPACK's Huffman code spends 11 and 13 bits on these two).
var longMessage = strings.Repeat("~|", 10000)

type h2Server struct {
	addr      string
	srv       *grpc.Server
	cancelled atomic.Int64 // mHang calls whose context ended
	calls     atomic.Int64
}

func startH2Server(t *testing.T, lis net.Listener, opts ...grpc.ServerOption) *h2Server {
	t.Helper()
	if lis == nil {
		var err error
		lis, err = net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
	}
	s := &h2Server{addr: lis.Addr().String()}
	s.srv = grpc.NewServer(append(opts, grpc.UnknownServiceHandler(s.handle))...)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = s.srv.Serve(lis)
	}()
	t.Cleanup(func() {
		s.srv.Stop()
		<-served
	})
	return s
}

func (s *h2Server) handle(_ any, st grpc.ServerStream) error {
	s.calls.Add(1)
	method, _ := grpc.MethodFromServerStream(st)
	var req pb.PutRequest
	if err := st.RecvMsg(&req); err != nil {
		return err
	}
	switch method {
	case mOK:
		return st.SendMsg(&pb.IncrementResponse{Value: 7})
	case mRefused:
		return status.Error(codes.FailedPrecondition, "refused: 100% über")
	case mBig:
		return st.SendMsg(&pb.GetResponse{Value: make([]byte, len(req.GetValue())), Version: 3})
	case mEcho:
		return st.SendMsg(&pb.GetResponse{Value: req.GetValue(), Version: 4})
	case mHang:
		<-st.Context().Done()
		s.cancelled.Add(1)
		return st.Context().Err()
	case mNoMessage:
		return nil
	case mLong:
		return status.Error(codes.FailedPrecondition, longMessage)
	case mSlow:
		time.Sleep(300 * time.Millisecond)
		return st.SendMsg(&pb.IncrementResponse{Value: 7})
	}
	return status.Error(codes.Unimplemented, method)
}

// countingConn is grpc-go's connection, counting the calls that fell back
// to it.
type countingConn struct {
	*grpc.ClientConn
	n atomic.Int64
}

func (c *countingConn) Invoke(ctx context.Context, method string, req, reply any, opts ...grpc.CallOption) error {
	c.n.Add(1)
	return c.ClientConn.Invoke(ctx, method, req, reply, opts...)
}

func newH2TestClient(t *testing.T, addr string, connWindow uint32) (*h2Client, *countingConn) {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(newCodec())))
	require.NoError(t, err)
	fb := &countingConn{ClientConn: cc}
	c := &h2Client{addr: addr, timeout: time.Minute, fallback: fb, connWindow: connWindow}
	_, err = c.conn(t.Context())
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = c.Close()
		_ = cc.Close()
	})
	return c, fb
}

func valueFrame(t *testing.T, n int) *frame {
	t.Helper()
	f, err := encodeFrame(&pb.PutRequest{Key: "k", Value: make([]byte, n)})
	require.NoError(t, err)
	return f
}

func TestH2Answers(t *testing.T) {
	s := startH2Server(t, nil)
	c, fb := newH2TestClient(t, s.addr, h2ConnWindow)
	ctx := t.Context()
	req := valueFrame(t, 10)

	var inc incrementAnswer
	require.NoError(t, c.Invoke(ctx, mOK, req, &inc))
	assert.Equal(t, int64(7), inc.value)

	err := c.Invoke(ctx, mRefused, req, &inc)
	assert.Equal(t, codes.FailedPrecondition, status.Code(err))
	assert.Equal(t, "refused: 100% über", status.Convert(err).Message(), "grpc-message is percent-decoded")

	err = c.Invoke(ctx, mNoMessage, req, &inc)
	assert.Equal(t, codes.Internal, status.Code(err), "a unary call's OK without its message")

	err = c.Invoke(ctx, "/t.T/Missing", req, &inc)
	assert.Equal(t, codes.Unimplemented, status.Code(err))

	err = c.Invoke(ctx, mLong, req, &inc)
	assert.Equal(t, codes.FailedPrecondition, status.Code(err))
	assert.Equal(t, longMessage, status.Convert(err).Message(), "trailers ended by a CONTINUATION are read whole")

	// An answer of many frames, gathered; and one of the request's own
	// bytes, so that a request is sent as it is.
	var get getAnswer
	require.NoError(t, c.Invoke(ctx, mBig, valueFrame(t, 300<<10), &get), "a request over one frame, through grpc-go")
	assert.Equal(t, 300<<10, get.valueLen)
	assert.Equal(t, uint64(3), get.version)
	assert.Equal(t, int64(1), fb.n.Load(), "only the request too large for one frame fell back")

	big := make([]byte, 16000)
	for i := range big {
		big[i] = byte(i)
	}
	f, err := encodeFrame(&pb.PutRequest{Key: "k", Value: big})
	require.NoError(t, err)
	var echo pb.GetResponse
	require.NoError(t, c.Invoke(ctx, mEcho, f, &protoAnswer{&echo}))
	assert.Equal(t, big, echo.GetValue())
	assert.Equal(t, int64(1), fb.n.Load(), "a request of one frame did not fall back")
}

// protoAnswer decodes into a generated message (tests).
type protoAnswer struct{ m proto.Message }

func (a *protoAnswer) decode(b []byte) error { return proto.Unmarshal(b, a.m) }

// TestH2Cancel: a call whose context ends returns its code at once, the
// server's handler is cancelled, and the connection goes on.
func TestH2Cancel(t *testing.T) {
	s := startH2Server(t, nil)
	c, _ := newH2TestClient(t, s.addr, h2ConnWindow)
	req := valueFrame(t, 10)
	var inc incrementAnswer

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	err := c.Invoke(ctx, mHang, req, &inc)
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err))
	assert.Less(t, time.Since(t0), 5*time.Second)
	require.Eventually(t, func() bool { return s.cancelled.Load() == 1 }, 5*time.Second, time.Millisecond,
		"the server's handler sees the call's end")

	ctx, cancel = context.WithCancel(t.Context())
	time.AfterFunc(20*time.Millisecond, cancel)
	assert.Equal(t, codes.Canceled, status.Code(c.Invoke(ctx, mHang, req, &inc)))

	require.NoError(t, c.Invoke(t.Context(), mOK, req, &inc), "the connection goes on")
	assert.Equal(t, int64(7), inc.value)
}

// TestH2Windows: answers that add up to many times the connection's window
// come only if the driver tops it up; many callers' requests add up to
// many times the server's.
func TestH2Windows(t *testing.T) {
	s := startH2Server(t, nil)
	c, _ := newH2TestClient(t, s.addr, 256<<10)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range 8 {
		wg.Go(func() {
			req := valueFrame(t, 12<<10)
			var get getAnswer
			for range 100 { // 8 × 100 × 12 kB each way: 9.6 MB
				if err := c.Invoke(ctx, mBig, req, &get); err != nil || get.valueLen != 12<<10 {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	assert.Zero(t, failed.Load())
}

// The control: a connection that never tops its window up stalls once
// the window is spent.
func TestH2WindowsCanFail(t *testing.T) {
	s := startH2Server(t, nil)
	c, _ := newH2TestClient(t, s.addr, 256<<10)
	cc, err := c.conn(t.Context())
	require.NoError(t, err)
	cc.topUpAt = 1 << 31 // never
	req := valueFrame(t, 12<<10)
	var get getAnswer
	var last error
	for range 40 { // 480 kB of answers
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		last = c.Invoke(ctx, mBig, req, &get)
		cancel()
		if last != nil {
			break
		}
	}
	assert.Equal(t, codes.DeadlineExceeded, status.Code(last))
}

// TestH2ServerGone: a server that goes ends the calls in flight with
// UNAVAILABLE, and the next call dials again.
func TestH2ServerGone(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := startH2Server(t, lis)
	c, _ := newH2TestClient(t, s.addr, h2ConnWindow)
	req := valueFrame(t, 10)
	var inc incrementAnswer

	done := make(chan error, 1)
	go func() { done <- c.Invoke(t.Context(), mHang, req, &inc) }()
	require.Eventually(t, func() bool { return s.calls.Load() == 1 }, 5*time.Second, time.Millisecond)
	s.srv.Stop()
	select {
	case err := <-done:
		assert.Equal(t, codes.Unavailable, status.Code(err))
	case <-time.After(5 * time.Second):
		t.Fatal("the call in flight outlived its server")
	}
	err = c.Invoke(t.Context(), mOK, req, &inc)
	assert.Equal(t, codes.Unavailable, status.Code(err), "no server: the dial fails")

	lis2, err := net.Listen("tcp", s.addr)
	require.NoError(t, err)
	startH2Server(t, lis2)
	require.NoError(t, c.Invoke(t.Context(), mOK, req, &inc), "a server again: the next call dials it")
	assert.Equal(t, int64(7), inc.value)
}

func TestGRPCTimeout(t *testing.T) {
	for d, want := range map[time.Duration]string{
		10 * time.Second: "10000000u", time.Minute: "60000000u", 500 * time.Millisecond: "500000u",
		100 * time.Hour: "360000S", 7 * time.Nanosecond: "7n",
	} {
		assert.Equal(t, want, grpcTimeout(d), d)
		assert.LessOrEqual(t, len(strings.TrimRight(want, "nuSmMH")), 8)
	}
}

// TestH2StreamLimit: past the server's limit on open streams a call waits
// for one to close, where the server would refuse it.
func TestH2StreamLimit(t *testing.T) {
	s := startH2Server(t, nil, grpc.MaxConcurrentStreams(2))
	c, _ := newH2TestClient(t, s.addr, h2ConnWindow)
	req := valueFrame(t, 10)
	hang, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			var inc incrementAnswer
			assert.Equal(t, codes.Canceled, status.Code(c.Invoke(hang, mHang, req, &inc)))
		})
	}
	require.Eventually(t, func() bool { return s.calls.Load() == 2 }, 5*time.Second, time.Millisecond)
	time.AfterFunc(100*time.Millisecond, cancel)
	var inc incrementAnswer
	t0 := time.Now()
	require.NoError(t, c.Invoke(t.Context(), mOK, req, &inc), "the third call waits for a stream")
	assert.GreaterOrEqual(t, time.Since(t0), 90*time.Millisecond)
	wg.Wait()
}

// TestH2GoingAway: a server that stops gracefully finishes the calls it
// took on the connection it is leaving, while the next call dials a new
// one.
func TestH2GoingAway(t *testing.T) {
	s := startH2Server(t, nil)
	c, _ := newH2TestClient(t, s.addr, h2ConnWindow)
	req := valueFrame(t, 10)
	cc, err := c.conn(t.Context())
	require.NoError(t, err)
	slow := make(chan error, 1)
	go func() {
		var inc incrementAnswer
		slow <- c.Invoke(t.Context(), mSlow, req, &inc)
	}()
	require.Eventually(t, func() bool { return s.calls.Load() == 1 }, 5*time.Second, time.Millisecond)
	stopped := make(chan struct{})
	go func() {
		s.srv.GracefulStop()
		close(stopped)
	}()
	require.Eventually(t, cc.dead.Load, 5*time.Second, time.Millisecond, "the server's GOAWAY")
	lis, err := net.Listen("tcp", s.addr) // the stopping server has closed its listener
	require.NoError(t, err)
	startH2Server(t, lis)
	var inc incrementAnswer
	require.NoError(t, c.Invoke(t.Context(), mOK, req, &inc), "the next call, on a new connection")
	assert.NoError(t, <-slow, "the call the server took is finished on the old one")
	<-stopped
}
