package server

import (
	"context"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
)

// TestHealth: the standard health service reports SERVING for the server
// ("") and for each locklab service, NOT_FOUND for an unknown one, and
// NOT_SERVING once Stop has begun.
func TestHealth(t *testing.T) {
	for _, m := range Modes() {
		t.Run(m.Name, func(t *testing.T) {
			ts := startServer(t, Config{Mode: m.Name})
			hc := healthpb.NewHealthClient(ts.conn)
			for _, svc := range []string{"", "locklab.v1.CounterService", "locklab.v1.BankService", "locklab.v1.KVService", "locklab.v1.AdminService"} {
				r, err := hc.Check(t.Context(), &healthpb.HealthCheckRequest{Service: svc})
				require.NoError(t, err, "%q", svc)
				assert.Equal(t, healthpb.HealthCheckResponse_SERVING, r.GetStatus(), "%q", svc)
			}
			_, err := hc.Check(t.Context(), &healthpb.HealthCheckRequest{Service: "locklab.v1.Nope"})
			requireCode(t, codes.NotFound, err)
			assert.Equal(t, uint64(5), ts.stats(t).GetRpcCounts()["/grpc.health.v1.Health/Check"].GetCodes()["OK"], "health checks are counted")

			// Stop turns the health service NOT_SERVING before it drains:
			// a watcher sees the change.
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			w, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{Service: "locklab.v1.CounterService"})
			require.NoError(t, err)
			r, err := w.Recv()
			require.NoError(t, err)
			require.Equal(t, healthpb.HealthCheckResponse_SERVING, r.GetStatus())
			stopped := make(chan struct{})
			go func() {
				defer close(stopped)
				stopCtx, cancel := context.WithTimeout(context.Background(), stopTimeout)
				defer cancel()
				ts.srv.Stop(stopCtx)
			}()
			defer func() {
				cancel() // the watch is in flight: GracefulStop waits for it
				<-stopped
			}()
			r, err = w.Recv()
			require.NoError(t, err)
			assert.Equal(t, healthpb.HealthCheckResponse_NOT_SERVING, r.GetStatus())
		})
	}
}

// TestReflection: server reflection lists the four locklab services (and
// the health service), as grpcurl would see them.
func TestReflection(t *testing.T) {
	ts := startServer(t, Config{Mode: "inputQ"})
	stream, err := rpb.NewServerReflectionClient(ts.conn).ServerReflectionInfo(t.Context())
	require.NoError(t, err)
	require.NoError(t, stream.Send(&rpb.ServerReflectionRequest{
		MessageRequest: &rpb.ServerReflectionRequest_ListServices{ListServices: "*"},
	}))
	resp, err := stream.Recv()
	require.NoError(t, err)
	require.NoError(t, stream.CloseSend())
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	sort.Strings(names)
	for _, want := range []string{
		"locklab.v1.AdminService", "locklab.v1.BankService", "locklab.v1.CounterService", "locklab.v1.KVService",
		"grpc.health.v1.Health",
	} {
		assert.Contains(t, names, want)
	}

	// And it describes them: the file that declares Increment.
	stream2, err := rpb.NewServerReflectionClient(ts.conn).ServerReflectionInfo(t.Context())
	require.NoError(t, err)
	require.NoError(t, stream2.Send(&rpb.ServerReflectionRequest{
		MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "locklab.v1.CounterService.Increment"},
	}))
	fr, err := stream2.Recv()
	require.NoError(t, err)
	require.NoError(t, stream2.CloseSend())
	require.NotEmpty(t, fr.GetFileDescriptorResponse().GetFileDescriptorProto(), "%v", fr.GetErrorResponse())
}
