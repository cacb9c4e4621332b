package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	pb "github.com/locklab/locklab/proto/locklab/v1"
)

// TestRequireKey: with RequireKey a data call without the header is refused
// INVALID_ARGUMENT, names the header, changes nothing and is counted; the
// same call with the header is served, and admin calls need none.
func TestRequireKey(t *testing.T) {
	for _, mode := range storeModes {
		t.Run(mode, func(t *testing.T) {
			ts := startServer(t, Config{Mode: mode, Bank: smallBank, RequireKey: "X-Key"})
			keyed := metadata.AppendToOutgoingContext(t.Context(), "x-key", "counter")

			_, err := ts.counter.Increment(t.Context(), &pb.IncrementRequest{Delta: 5})
			requireCode(t, codes.InvalidArgument, err)
			assert.Contains(t, status.Convert(err).Message(), `no "x-key" header`)
			empty := metadata.AppendToOutgoingContext(t.Context(), "x-key", "")
			_, err = ts.counter.Increment(empty, &pb.IncrementRequest{Delta: 5})
			requireCode(t, codes.InvalidArgument, err, "an empty key")

			v, err := ts.counter.GetValue(keyed, &pb.GetValueRequest{})
			require.NoError(t, err)
			assert.Zero(t, v.GetValue(), "the refused calls changed nothing")
			r, err := ts.counter.Increment(keyed, &pb.IncrementRequest{Delta: 5})
			require.NoError(t, err, "the control: a keyed call is served")
			assert.EqualValues(t, 5, r.GetValue())

			st := ts.stats(t) // an admin call, without a key
			assert.EqualValues(t, 2, countOf(st, pb.CounterService_Increment_FullMethodName, codes.InvalidArgument))
			assert.EqualValues(t, 1, countOf(st, pb.CounterService_Increment_FullMethodName, codes.OK))
		})
	}
}

// TestRequireKeyCoversEveryDataCall: every method of every workload is
// refused without the key (an empty request decodes as any message; the
// gate answers before a handler would read it).
func TestRequireKeyCoversEveryDataCall(t *testing.T) {
	ts := startServer(t, Config{Mode: storeModes[0], RequireKey: "x-key"})
	n := 0
	for _, w := range workloads {
		for _, md := range w.desc().Methods {
			method := "/" + w.desc().ServiceName + "/" + md.MethodName
			err := ts.conn.Invoke(t.Context(), method, &emptypb.Empty{}, &emptypb.Empty{})
			requireCode(t, codes.InvalidArgument, err, method)
			assert.ErrorContains(t, err, "x-key", method)
			n++
		}
	}
	assert.Greater(t, n, len(workloads), "the workloads' methods")
	_, err := ts.admin.Reset(t.Context(), &pb.ResetRequest{})
	assert.NoError(t, err, "admin calls need no key")
}

// TestWithoutRequireKey is the control: a server without the option serves
// a call with no key header.
func TestWithoutRequireKey(t *testing.T) {
	ts := startServer(t, Config{Mode: storeModes[0]})
	r, err := ts.counter.Increment(t.Context(), &pb.IncrementRequest{Delta: 2})
	require.NoError(t, err)
	assert.EqualValues(t, 2, r.GetValue())
}

// TestRequireKeyRefusesABadHeader: a name that cannot be a header is an
// error from New that names it.
func TestRequireKeyRefusesABadHeader(t *testing.T) {
	for _, name := range []string{"x key", "grpc-timeout", "x-key-bin", "té", "content-type"} {
		_, err := New(Config{Mode: storeModes[0], RequireKey: name})
		assert.ErrorContains(t, err, `require key "`+name+`"`)
	}
	assert.NoError(t, ValidKeyHeader("X-Key"))
}
