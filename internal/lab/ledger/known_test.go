package ledger

import (
	"bytes"
	"context"
	"fmt"
	"net"
	rtrace "runtime/trace"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/locklab/locklab/internal/work"
	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/server"
)

// The known answers: a real server on loopback, traced in-process while
// callers send Increments, each of which does workFor of work inside the
// design's critical section (the server's -work and -work-kind). Where
// that time lands is known in advance, as a share of the calls' time — no
// wall-clock target: a slow machine stretches every state alike.
const (
	// Long beside a call's own code under -race (tens of µs), so that the
	// work is most of a call.
	workFor = 2 * time.Millisecond
	// Calls per caller: enough for the shares, few enough for a lean test
	// (a scenario traces well under a second).
	callsEach = 30
	tolerance = 0.15
)

// A scenario is a server, a load, and where the load's time must land: the
// category want's share of the calls' time outside the category less (none
// if ""), within tolerance of share.
type scenario struct {
	name    string
	mode    string
	kind    string
	callers int
	want    string
	less    string
	share   float64
}

var scenarios = []scenario{
	// A spin is CPU: the handler runs it.
	{name: "spin", mode: "mutex", kind: work.KindSpin, callers: 1, want: Running, share: 1},
	// The same work slept: the handler waits, on no channel and no lock.
	{name: "sleep", mode: "mutex", kind: work.KindSleep, callers: 1, want: OtherWait, share: 1},
	// Four callers on one lock held through each sleep: a call's time
	// outside its own sleep is spent waiting for the lock.
	{name: "contention", mode: "mutex", kind: work.KindSleep, callers: 4, want: Sync, less: OtherWait, share: 1},
	// An owner design: the handler waits on a channel while the owner
	// spins on its behalf.
	{name: "owner", mode: "inputQ", kind: work.KindSpin, callers: 1, want: Chan, share: 1},
}

// check is the tests' known-answer check of one scenario's ledger.
func check(l *Ledger, sc scenario) error {
	got, err := l.Share(sc.want)
	if err != nil {
		return err
	}
	if sc.less != "" {
		less, err := l.Share(sc.less)
		if err != nil {
			return err
		}
		if less >= 1 {
			return fmt.Errorf("%s: every call's time is %s", sc.name, sc.less)
		}
		got /= 1 - less
	}
	if got < sc.share-tolerance || got > sc.share+tolerance {
		return fmt.Errorf("%s: %s holds %.2f of the calls' time, want %.2f ± %.2f; shares %v",
			sc.name, sc.want, got, sc.share, tolerance, shares(l))
	}
	return nil
}

func shares(l *Ledger) map[string]float64 {
	out := map[string]float64{}
	for _, c := range Names() {
		out[c], _ = l.Share(c)
	}
	return out
}

// traces holds each scenario's trace, taken once: the control reads the
// same bytes as the test.
var traces = map[string][]byte{}

func traceOf(t *testing.T, sc scenario) []byte {
	t.Helper()
	if b, ok := traces[sc.name]; ok {
		return b
	}
	b := serveTraced(t, sc)
	traces[sc.name] = b
	return b
}

// serveTraced runs a server of sc's mode with sc's work, warms a
// connection up, and returns the execution trace of sc's load.
func serveTraced(t *testing.T, sc scenario) []byte {
	t.Helper()
	srv, err := server.New(server.Config{Mode: sc.mode, Work: workFor, WorkKind: sc.kind})
	require.NoError(t, err)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }() // joined below
	defer func() {
		srv.Stop(context.Background())
		require.NoError(t, <-served)
	}()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	counter := pb.NewCounterServiceClient(conn)
	ctx := t.Context()
	for range 3 {
		_, err := counter.Increment(ctx, &pb.IncrementRequest{Delta: 1})
		require.NoError(t, err)
	}

	var buf bytes.Buffer
	require.NoError(t, rtrace.Start(&buf))
	var wg sync.WaitGroup
	errs := make(chan error, sc.callers)
	for range sc.callers {
		wg.Go(func() {
			for range callsEach {
				if _, err := counter.Increment(ctx, &pb.IncrementRequest{Delta: 1}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	rtrace.Stop()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	return buf.Bytes()
}

func TestKnownAnswers(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			l, err := Read(bytes.NewReader(traceOf(t, sc)))
			require.NoError(t, err)
			require.GreaterOrEqual(t, len(l.Calls), sc.callers*callsEach, "every call of the load is in the trace")
			t.Logf("%d calls; shares %v", len(l.Calls), shares(l))
			assert.NoError(t, check(l, sc))
			s, err := l.Summarize()
			require.NoError(t, err)
			assert.GreaterOrEqual(t, s.Accounted, 0.9, "the ledger puts a call's time in a state")
		})
	}
}

// TestKnownAnswersControl: the same traces read with the mapping broken —
// every state put in the category after its own — fail every check, so a
// check that passes is the mapping's doing.
func TestKnownAnswersControl(t *testing.T) {
	names := Names()
	broken := func(s State) string {
		c := Classify(s)
		return names[(index[c]+1)%len(names)]
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			l, err := read(bytes.NewReader(traceOf(t, sc)), broken)
			require.NoError(t, err)
			assert.Error(t, check(l, sc))
		})
	}
}

// TestNoCalls: a trace in which the server served nothing is not a ledger
// of nothing: Summarize says so, and names what marks calls.
func TestNoCalls(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, rtrace.Start(&buf))
	rtrace.Stop()
	l, err := Read(&buf)
	require.NoError(t, err)
	_, err = l.Summarize()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "calltrace")

	_, err = Read(bytes.NewReader([]byte("not a trace")))
	assert.ErrorContains(t, err, "not an execution trace")
}
