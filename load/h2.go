package load

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The workload's calls go over connections of the driver's own: unary gRPC
// calls over HTTP/2, framed by x/net/http2's Framer and its HPACK coder.
// grpc-go's client cost the driver about as much CPU per call as the call
// cost the server (24 to 29 µs and 88 allocations a call, BenchmarkDriverCallCPU
// on this lab's 2-CPU machine): a stream's set-up, its writer goroutine and
// its reader's hand-offs. Here a caller puts its request in the
// connection's buffer itself, under its write lock; a flusher writes out
// what every caller woken meanwhile put there, in one write; and one reader
// per connection decodes each answer straight into the caller's reused
// answer value and wakes it. The server
// sees what grpc-go's client sends: the same headers (a grpc-timeout of the
// call's bound included), indexed in HPACK's dynamic table the same way,
// and one HEADERS and one DATA frame per call, the callers' streams
// multiplexed over Config.Conns connections. Setup's calls (Reset, GetStats,
// the shared keys) still go through grpc-go's generated stubs.

// Flow control: what the driver lets the server send before it says so
// again. The answers are small, a kv value at most 1 MiB, so a stream never
// needs its window raised; the connection's is topped up when half is used.
const (
	h2StreamWindow = 4 << 20
	h2ConnWindow   = 1 << 30
)

// A request the driver's connection sends goes in one DATA frame, within
// the server's initial stream window (h2Conn.maxRequest: 16 kB less the
// message's prefix, unless the server's settings allow less). A larger one
// (a kv value over about 16 kB) goes through grpc-go, which splits it.
const h2MaxFrame = 16384

// errH2Closed: the connection was closed by the driver.
var errH2Closed = errors.New("load: connection closed")

// h2Client is one of the driver's connections to the server, dialled again
// after it broke: it is a grpc.ClientConnInterface whose Invoke sends a
// *frame and decodes into an answer. Anything else, and a request too large
// for one frame, goes through fallback (grpc-go's connection).
type h2Client struct {
	addr     string
	timeout  time.Duration // the calls' bound, sent as grpc-timeout
	fallback grpc.ClientConnInterface
	// connWindow is the receive window the connection asks for (tests
	// make it small, so that it must be topped up).
	connWindow uint32

	cur    atomic.Pointer[h2Conn] // the live connection; a broken one is dialled again
	mu     sync.Mutex             // guards dialling, old and closed
	old    []*h2Conn              // replaced connections: one the server is leaving may still be finishing calls
	closed bool
}

func newH2Client(ctx context.Context, addr string, timeout time.Duration, fallback grpc.ClientConnInterface) (*h2Client, error) {
	c := &h2Client{addr: addr, timeout: timeout, fallback: fallback, connWindow: h2ConnWindow}
	if _, err := c.conn(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// conn is the live connection, dialled again if the last one broke.
func (c *h2Client) conn(ctx context.Context) (*h2Conn, error) {
	if cc := c.cur.Load(); cc != nil && !cc.dead.Load() {
		return cc, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errH2Closed
	}
	cc := c.cur.Load()
	if cc != nil && !cc.dead.Load() {
		return cc, nil
	}
	next, err := dialH2(ctx, c.addr, c.timeout, c.connWindow)
	if err != nil {
		return nil, err
	}
	if cc != nil {
		// A broken connection has ended already; one the server said
		// it is leaving (GOAWAY) finishes the calls it took, and ends
		// when the server closes it, or at Close.
		c.old = append(c.old, cc)
	}
	c.cur.Store(next)
	return next, nil
}

// Close closes the connection and waits for its reader.
func (c *h2Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, cc := range c.old {
		cc.close()
	}
	if cc := c.cur.Load(); cc != nil {
		cc.close()
	}
	return nil
}

// Invoke makes one unary call: req, a *frame, is sent as it is and the
// answer decoded into reply, an answer.
func (c *h2Client) Invoke(ctx context.Context, method string, req, reply any, opts ...grpc.CallOption) error {
	f, okF := req.(*frame)
	ans, okA := reply.(answer)
	if !okF || !okA {
		return c.fallback.Invoke(ctx, method, req, reply, opts...)
	}
	cc, err := c.conn(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return status.FromContextError(ctx.Err()).Err()
		}
		return status.Error(codes.Unavailable, err.Error())
	}
	if f.data.Len() > int(cc.maxRequest.Load()) {
		return c.fallback.Invoke(ctx, method, req, reply, opts...)
	}
	return cc.call(ctx, method, f, ans)
}

func (c *h2Client) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.fallback.NewStream(ctx, desc, method, opts...)
}

// h2Call is one call in flight: what the reader fills for the caller
// waiting on done. Calls are reused (h2Conn.calls).
type h2Call struct {
	id   uint32
	ans  answer
	done chan struct{} // one token when the call has ended
	// Filled by the reader, under h2Conn.mu, while the call is pending.
	msg      []byte // an answer that came in pieces, gathered
	decoded  bool
	err      error // the answer's decoding, or the stream's end
	httpCode int
	code     int // grpc-status; -1: none
	message  string
}

func (c *h2Call) reset(ans answer) {
	c.ans, c.msg, c.decoded, c.err, c.httpCode, c.code, c.message = ans, c.msg[:0], false, nil, 0, -1, ""
}

// h2Conn is one HTTP/2 connection: callers write, one reader reads.
type h2Conn struct {
	nc        net.Conn
	fr        *http2.Framer
	authority string
	timeout   string // grpc-timeout's value

	// wmu guards writing: the framer's writes, bw, the encoder, nextID.
	wmu    sync.Mutex
	bw     *bufio.Writer
	henc   *hpack.Encoder
	hbuf   []byte
	wbuf   []byte
	nextID uint32
	// flushReq asks the flusher to write out what the callers have put
	// in bw: the requests of every caller that ran meanwhile go in one
	// write.
	flushReq  chan struct{}
	stop      chan struct{}
	closeOnce sync.Once
	flushDone chan struct{}

	// The server's window for what the driver sends on the connection,
	// and its limit on streams open at once: a request waits for room
	// and for a stream (sendCond), not holding wmu.
	sendMu     sync.Mutex
	sendCond   *sync.Cond
	sendWin    int64
	open       uint32 // streams the driver has open
	maxStreams uint32 // SETTINGS_MAX_CONCURRENT_STREAMS; unlimited until said
	blocked    int    // requests waiting in admit

	// maxRequest: the largest request message that fits one DATA frame
	// and the server's initial stream window.
	maxRequest atomic.Int64

	// mu guards the calls in flight and the connection's end.
	mu      sync.Mutex
	pending map[uint32]*h2Call
	err     error       // set once the connection broke or went away
	dead    atomic.Bool // err is set: no new calls

	calls sync.Pool // *h2Call

	// The reader's own.
	hdec     *hpack.Decoder
	hcall    *h2Call // the call whose header block is being decoded
	hEnds    bool    // that block ends its stream
	recvd    uint32  // connection-level bytes received since the last top-up
	topUpAt  uint32
	readDone chan struct{}
}

// hwriter lets the encoder append to hbuf.
type hwriter struct{ c *h2Conn }

func (w hwriter) Write(p []byte) (int, error) {
	w.c.hbuf = append(w.c.hbuf, p...)
	return len(p), nil
}

// dialH2 connects, exchanges the prefaces and settings, and starts the
// reader once the server's settings have come (as grpc-go's client is ready
// only then).
func dialH2(ctx context.Context, addr string, timeout time.Duration, connWindow uint32) (*h2Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("load: %s: %w", addr, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	c := &h2Conn{
		nc: nc, authority: addr, bw: bufio.NewWriterSize(nc, 32<<10), nextID: 1, sendWin: 65535,
		timeout: grpcTimeout(timeout), pending: map[uint32]*h2Call{}, readDone: make(chan struct{}),
		flushReq: make(chan struct{}, 1), stop: make(chan struct{}), flushDone: make(chan struct{}),
		topUpAt: connWindow / 2, maxStreams: math.MaxUint32,
	}
	c.sendCond = sync.NewCond(&c.sendMu)
	c.maxRequest.Store(min(h2MaxFrame, 65535) - 5)
	c.fr = http2.NewFramer(c.bw, bufio.NewReaderSize(nc, 32<<10))
	c.fr.SetReuseFrames()
	c.henc = hpack.NewEncoder(hwriter{c})
	c.hdec = hpack.NewDecoder(4096, c.emit)
	c.calls.New = func() any { return &h2Call{done: make(chan struct{}, 1)} }
	fail := func(err error) (*h2Conn, error) {
		_ = nc.Close()
		return nil, fmt.Errorf("load: %s: %w", addr, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	if _, err := c.bw.WriteString(http2.ClientPreface); err != nil {
		return fail(err)
	}
	if err := c.fr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2StreamWindow},
	); err != nil {
		return fail(err)
	}
	if connWindow > 65535 {
		if err := c.fr.WriteWindowUpdate(0, connWindow-65535); err != nil {
			return fail(err)
		}
	}
	if err := c.bw.Flush(); err != nil {
		return fail(err)
	}
	for settled := false; !settled; {
		f, err := c.fr.ReadFrame()
		if err != nil {
			return fail(err)
		}
		if s, ok := f.(*http2.SettingsFrame); ok && !s.IsAck() {
			if err := c.settings(s); err != nil {
				return fail(err)
			}
			settled = true
			continue
		}
		if err := c.handle(f); err != nil {
			return fail(err)
		}
	}
	if err := c.bw.Flush(); err != nil { // the settings' acknowledgement
		return fail(err)
	}
	_ = nc.SetDeadline(time.Time{})
	go c.read()
	go c.flusher()
	return c, nil
}

// flusher writes out the requests put in bw, once for every caller that
// ran since it last did: a caller puts its request in and waits for its
// answer, and the callers woken by the same read put theirs in before the
// flusher runs. One write a request, as grpc-go's client and this driver
// first did, cost the driver a system call per call.
func (c *h2Conn) flusher() {
	defer close(c.flushDone)
	for {
		select {
		case <-c.stop:
			return
		case <-c.flushReq:
		}
		// Woken next, ahead of the callers the same read woke: let them
		// put their requests in first (grpc-go's writer yields so too).
		runtime.Gosched()
		c.wmu.Lock()
		if err := c.bw.Flush(); err != nil {
			c.broken(err)
		}
		c.wmu.Unlock()
	}
}

// grpcTimeout is d as grpc-timeout's value (at most 8 digits of a unit).
func grpcTimeout(d time.Duration) string {
	for _, u := range []struct {
		d time.Duration
		s string
	}{{time.Nanosecond, "n"}, {time.Microsecond, "u"}, {time.Millisecond, "m"}, {time.Second, "S"}, {time.Minute, "M"}} {
		if n := d / u.d; n < 1e8 {
			return strconv.FormatInt(int64(n), 10) + u.s
		}
	}
	return strconv.FormatInt(int64(d/time.Hour), 10) + "H"
}

// close ends the connection and waits for its reader and flusher.
func (c *h2Conn) close() {
	c.shutdown(errH2Closed)
	<-c.readDone
	<-c.flushDone
}

// shutdown ends the connection: the calls in flight fail with err, and the
// reader and the flusher stop.
func (c *h2Conn) shutdown(err error) {
	c.closeOnce.Do(func() {
		c.fail(err)
		_ = c.nc.Close()
		close(c.stop)
	})
}

// fail marks the connection broken (the first reason stays) and ends every
// call in flight with err.
func (c *h2Conn) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.dead.Store(true)
	c.endPending(err, 0)
	c.mu.Unlock()
	c.sendMu.Lock()
	c.sendWin, c.maxStreams = 1<<62, math.MaxUint32 // no request waits for room on a dead connection
	c.sendCond.Broadcast()
	c.sendMu.Unlock()
}

// endPending ends the calls in flight on streams past after with err
// (UNAVAILABLE, as result gives it), under mu.
func (c *h2Conn) endPending(err error, after uint32) {
	for id, cl := range c.pending {
		if id > after {
			delete(c.pending, id)
			cl.err = err
			cl.done <- struct{}{}
		}
	}
}

// call sends one request and waits for its answer, or for ctx.
func (c *h2Conn) call(ctx context.Context, method string, f *frame, ans answer) error {
	cl := c.calls.Get().(*h2Call)
	defer c.calls.Put(cl)
	cl.reset(ans)
	if err := c.admit(ctx, int64(f.data.Len()+5)); err != nil {
		return err
	}
	defer c.release()
	if err := c.send(cl, method, f); err != nil {
		return status.Error(codes.Unavailable, err.Error())
	}
	// Sent, or its connection failed once it was in flight, which ended
	// it: either way its end comes on done.
	select {
	case <-cl.done:
	case <-ctx.Done():
		c.mu.Lock()
		abandoned := c.pending[cl.id] == cl
		if abandoned {
			delete(c.pending, cl.id)
		}
		c.mu.Unlock()
		if !abandoned { // the reader ended it meanwhile: take its token
			<-cl.done
			break
		}
		c.reset(cl.id)
		return status.FromContextError(ctx.Err()).Err()
	}
	return cl.result()
}

// admit waits until the server's connection window has room for n bytes
// and its limit on open streams for one more, and takes them.
func (c *h2Conn) admit(ctx context.Context, n int64) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	for c.sendWin < n || c.open >= c.maxStreams {
		if err := ctx.Err(); err != nil {
			return status.FromContextError(err).Err()
		}
		c.blocked++
		c.sendCond.Wait()
		c.blocked--
	}
	c.sendWin -= n
	c.open++
	return nil
}

// release closes a call's stream on the driver's side: it has ended, or
// the driver reset it.
func (c *h2Conn) release() {
	c.sendMu.Lock()
	c.open--
	if c.blocked > 0 {
		c.sendCond.Broadcast()
	}
	c.sendMu.Unlock()
}

// send puts the call in flight, puts its HEADERS and DATA frames in bw and
// asks the flusher to write them. An error means the call never went in
// flight; a write that fails once it is breaks the connection, which ends
// the call.
func (c *h2Conn) send(cl *h2Call, method string, f *frame) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	if c.nextID > 1<<31-1 {
		c.err = errors.New("load: the connection's stream IDs ran out")
		c.dead.Store(true)
		c.mu.Unlock()
		return c.err
	}
	cl.id = c.nextID
	c.nextID += 2
	c.pending[cl.id] = cl
	c.mu.Unlock()

	c.hbuf = c.hbuf[:0]
	for _, h := range [...]hpack.HeaderField{
		{Name: ":method", Value: "POST"},
		{Name: ":scheme", Value: "http"},
		{Name: ":path", Value: method},
		{Name: ":authority", Value: c.authority},
		{Name: "content-type", Value: "application/grpc"},
		{Name: "user-agent", Value: "locklab-load"},
		{Name: "te", Value: "trailers"},
		{Name: "grpc-timeout", Value: c.timeout},
	} {
		if err := c.henc.WriteField(h); err != nil {
			c.broken(err)
			return nil
		}
	}
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: cl.id, BlockFragment: c.hbuf, EndHeaders: true}); err != nil {
		c.broken(err)
		return nil
	}
	n := f.data.Len()
	c.wbuf = append(c.wbuf[:0], 0, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	for _, b := range f.data {
		c.wbuf = append(c.wbuf, b.ReadOnlyData()...)
	}
	if err := c.fr.WriteData(cl.id, true, c.wbuf); err != nil {
		c.broken(err)
		return nil
	}
	c.askFlush()
	return nil
}

// broken fails the connection after a failed write (under wmu).
func (c *h2Conn) broken(err error) { c.shutdown(err) }

// reset tells the server a call was abandoned.
func (c *h2Conn) reset(id uint32) {
	_ = c.control(func() error { return c.fr.WriteRSTStream(id, http2.ErrCodeCancel) })
}

// control puts a frame of its own (an acknowledgement, a window, a reset)
// in bw for the flusher, as a request.
func (c *h2Conn) control(write func() error) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := write(); err != nil {
		return err
	}
	c.askFlush()
	return nil
}

// askFlush asks the flusher to write bw out.
func (c *h2Conn) askFlush() {
	select {
	case c.flushReq <- struct{}{}:
	default: // asked already, not yet flushed: it takes these bytes too
	}
}

// result is the ended call's outcome, as grpc-go's client gives it.
func (cl *h2Call) result() error {
	switch {
	case cl.err != nil:
		if s, ok := status.FromError(cl.err); ok {
			return s.Err()
		}
		return status.Error(codes.Unavailable, cl.err.Error())
	case cl.httpCode != 0 && cl.httpCode != 200 && cl.code < 0:
		return status.Errorf(httpCode(cl.httpCode), "unexpected HTTP status %d", cl.httpCode)
	case cl.code < 0:
		return status.Error(codes.Internal, "load: an answer without grpc-status")
	case cl.code != 0:
		msg, err := url.PathUnescape(cl.message)
		if err != nil {
			msg = cl.message
		}
		return status.Error(codes.Code(cl.code), msg)
	case !cl.decoded:
		return status.Error(codes.Internal, "load: no answer's message before the stream's end")
	}
	return nil
}

// httpCode maps an HTTP status without grpc-status to gRPC's code, as
// gRPC's HTTP-to-gRPC table does.
func httpCode(h int) codes.Code {
	switch h {
	case 400:
		return codes.Internal
	case 401:
		return codes.Unauthenticated
	case 403:
		return codes.PermissionDenied
	case 404:
		return codes.Unimplemented
	case 429, 502, 503, 504:
		return codes.Unavailable
	}
	return codes.Unknown
}

// ---- the reader -----------------------------------------------------------------

// read reads frames until the connection ends, then fails what is left.
func (c *h2Conn) read() {
	defer close(c.readDone)
	for {
		f, err := c.fr.ReadFrame()
		if err == nil {
			err = c.handle(f)
		}
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
				err = errors.New("load: the server closed the connection")
			}
			c.shutdown(err)
			return
		}
	}
}

// handle acts on one frame from the server.
func (c *h2Conn) handle(f http2.Frame) error {
	switch f := f.(type) {
	case *http2.HeadersFrame:
		c.hEnds = f.StreamEnded()
		return c.headers(f.StreamID, f.HeaderBlockFragment(), f.HeadersEnded())
	case *http2.ContinuationFrame:
		return c.headers(f.StreamID, f.HeaderBlockFragment(), f.HeadersEnded())
	case *http2.DataFrame:
		return c.data(f)
	case *http2.RSTStreamFrame:
		c.end(f.StreamID, streamError(f.ErrCode))
	case *http2.SettingsFrame:
		if !f.IsAck() {
			return c.settings(f)
		}
	case *http2.PingFrame:
		if !f.IsAck() {
			data := f.Data
			return c.control(func() error { return c.fr.WritePing(true, data) })
		}
	case *http2.WindowUpdateFrame:
		if f.StreamID == 0 {
			c.sendMu.Lock()
			c.sendWin += int64(f.Increment)
			c.sendCond.Broadcast()
			c.sendMu.Unlock()
		}
	case *http2.GoAwayFrame:
		// No new calls here; the calls past the last stream the server
		// took are failed, the rest end as they come.
		c.mu.Lock()
		if c.err == nil {
			c.err = fmt.Errorf("load: the server is going away (%v)", f.ErrCode)
		}
		c.dead.Store(true)
		c.endPending(c.err, f.LastStreamID)
		c.mu.Unlock()
	}
	return nil
}

// settings takes the server's settings and acknowledges them.
func (c *h2Conn) settings(f *http2.SettingsFrame) error {
	if err := f.ForeachSetting(func(s http2.Setting) error {
		switch s.ID {
		case http2.SettingHeaderTableSize:
			c.wmu.Lock()
			c.henc.SetMaxDynamicTableSizeLimit(s.Val)
			c.wmu.Unlock()
		case http2.SettingMaxConcurrentStreams:
			c.sendMu.Lock()
			if !c.dead.Load() {
				c.maxStreams = s.Val
			}
			c.sendCond.Broadcast()
			c.sendMu.Unlock()
		case http2.SettingInitialWindowSize:
			// Every stream's window starts here, and a request is the
			// only thing the driver sends on its stream.
			c.maxRequest.Store(min(h2MaxFrame, int64(s.Val)) - 5)
		}
		return nil
	}); err != nil {
		return err
	}
	return c.control(c.fr.WriteSettingsAck)
}

// headers decodes a header block's fragment for the stream's call: its
// HTTP status, grpc-status and grpc-message. A block that ends the stream
// (its HEADERS frame said so) ends the call once its last fragment is in.
func (c *h2Conn) headers(id uint32, frag []byte, ended bool) error {
	c.mu.Lock()
	c.hcall = c.pending[id] // nil: an abandoned call, decoded all the same for HPACK's table
	if _, err := c.hdec.Write(frag); err != nil {
		c.mu.Unlock()
		return err
	}
	if ended {
		if err := c.hdec.Close(); err != nil {
			c.mu.Unlock()
			return err
		}
	}
	c.hcall = nil
	c.mu.Unlock()
	if ended && c.hEnds {
		c.end(id, nil)
	}
	return nil
}

// emit takes one decoded header field (under mu).
func (c *h2Conn) emit(f hpack.HeaderField) {
	cl := c.hcall
	if cl == nil {
		return
	}
	switch f.Name {
	case ":status":
		cl.httpCode, _ = strconv.Atoi(f.Value)
	case "grpc-status":
		if n, err := strconv.Atoi(f.Value); err == nil {
			cl.code = n
		}
	case "grpc-message":
		cl.message = f.Value
	}
}

// data takes an answer's bytes (a gRPC message: a flag byte, its length,
// then the message), decoding it into the call's answer once it is whole,
// and tops the connection's window up.
func (c *h2Conn) data(f *http2.DataFrame) error {
	if n := f.Length; n > 0 {
		c.recvd += n
		if c.recvd >= c.topUpAt {
			incr := c.recvd
			c.recvd = 0
			if err := c.control(func() error { return c.fr.WriteWindowUpdate(0, incr) }); err != nil {
				return err
			}
		}
	}
	c.mu.Lock()
	cl := c.pending[f.StreamID]
	if cl != nil && cl.err == nil {
		b := f.Data()
		if len(cl.msg) > 0 || !whole(b) {
			cl.msg = append(cl.msg, b...)
			b = cl.msg
		}
		if whole(b) {
			switch {
			case cl.decoded || len(b) != 5+msgLen(b):
				cl.err = status.Error(codes.Internal, "load: more than one answer to a unary call")
			case b[0] != 0:
				cl.err = status.Error(codes.Internal, "load: a compressed answer, which the driver did not ask for")
			default:
				cl.decoded = true
				if err := cl.ans.decode(b[5:]); err != nil {
					cl.err = status.Error(codes.Internal, err.Error())
				}
			}
			cl.msg = cl.msg[:0]
		}
	}
	c.mu.Unlock()
	if f.StreamEnded() {
		c.end(f.StreamID, nil)
	}
	return nil
}

// whole reports whether b holds at least one whole gRPC message.
func whole(b []byte) bool { return len(b) >= 5 && len(b) >= 5+msgLen(b) }

func msgLen(b []byte) int { return int(b[1])<<24 | int(b[2])<<16 | int(b[3])<<8 | int(b[4]) }

// end ends the stream's call, with err if the stream was reset.
func (c *h2Conn) end(id uint32, err error) {
	c.mu.Lock()
	cl := c.pending[id]
	if cl != nil {
		delete(c.pending, id)
		if cl.err == nil {
			cl.err = err
		}
	}
	c.mu.Unlock()
	if cl != nil {
		cl.done <- struct{}{}
	}
}

// streamError is a stream reset by the server, as grpc-go's client maps
// its code.
func streamError(code http2.ErrCode) error {
	switch code {
	case http2.ErrCodeRefusedStream:
		return status.Error(codes.Unavailable, "load: the server refused the stream")
	case http2.ErrCodeCancel:
		return status.Error(codes.Canceled, "load: the server cancelled the stream")
	case http2.ErrCodeEnhanceYourCalm:
		return status.Error(codes.ResourceExhausted, "load: the server asked the driver to calm down")
	}
	return status.Errorf(codes.Internal, "load: the server reset the stream (%v)", code)
}
