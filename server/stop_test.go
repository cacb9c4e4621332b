package server

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/locklab/locklab/proto/locklab/v1"
)

// TestStopUnderLoad stops a server while 32 clients hammer Increment: Stop
// returns within its deadline plus a margin, every call either succeeds or
// gets a status, no acknowledged increment is lost (each acknowledged +1
// returned a value no other did), and nothing leaks (goleak, TestMain). With
// a grace of 0 the deadline has passed already, and Stop cancels what is in
// flight instead of waiting for it.
func TestStopUnderLoad(t *testing.T) {
	for _, mode := range storeModes {
		for _, grace := range []time.Duration{2 * time.Second, 0} {
			t.Run(fmt.Sprintf("%s/grace=%v", mode, grace), func(t *testing.T) {
				stopUnderLoad(t, mode, grace)
			})
		}
	}
}

func stopUnderLoad(t *testing.T, mode string, grace time.Duration) {
	const (
		clients   = 32
		stopLimit = 5 * time.Second // generous: the machine is small and shared
	)
	ts := startServer(t, Config{Mode: mode})
	var (
		acked   atomic.Int64
		mu      sync.Mutex // guards values and errCode
		values  = map[int64]int{}
		errCode = map[codes.Code]int{}
		wg      sync.WaitGroup
	)
	for range clients {
		wg.Go(func() {
			for {
				// No deadline of the client's own beyond rpcTimeout: whatever
				// ends the call is the server stopping.
				r, err := ts.counter.Increment(context.Background(), &pb.IncrementRequest{Delta: 1})
				mu.Lock()
				if err != nil {
					st, ok := status.FromError(err)
					if !ok {
						t.Errorf("not a status: %v", err)
					}
					errCode[st.Code()]++
					mu.Unlock()
					return // the server is stopping or gone
				}
				values[r.GetValue()]++
				mu.Unlock()
				acked.Add(1)
			}
		})
	}
	// Let the load build up before stopping.
	deadline := time.Now().Add(rpcTimeout)
	for acked.Load() < 200 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.GreaterOrEqual(t, acked.Load(), int64(200), "load never started")

	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	start := time.Now()
	ts.srv.Stop(ctx)
	took := time.Since(start)
	assert.Less(t, took, stopLimit, "Stop with a %v deadline", grace)

	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(rpcTimeout):
		t.Fatal("clients still running after Stop")
	}

	mu.Lock()
	defer mu.Unlock()
	t.Logf("Stop took %v; %d acknowledged; errors by code: %v", took, acked.Load(), errCode)
	var ended int
	for code, n := range errCode {
		assert.Contains(t, []codes.Code{codes.Unavailable, codes.Canceled}, code, "a stopping server answers %v", code)
		ended += n
	}
	assert.Equal(t, clients, ended, "every client ended on a status")
	for v, n := range values {
		assert.Equal(t, 1, n, "value %d acknowledged %d times: an increment was lost", v, n)
		assert.Positive(t, v)
	}
	assert.Len(t, values, int(acked.Load()))
}
