package load

import (
	"context"
	"encoding/json"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	pb "github.com/locklab/locklab/proto/locklab/v1"
)

// tallyJSON is a throw-away workload's row of workloads.json.
const tallyJSON = `{"doc": "a test's workload: Add by 1", "keyed": false, "cases": ["add"]}`

// tallyCalls is its row of workloadCalls: one case, a call to a service
// this package has no stub for.
var tallyCalls = calls{
	setup: func(_ context.Context, p *plan, _ *Definitions, _ *pb.GetStatsResponse, _ clients) error {
		p.drawn[0] = true
		return nil
	},
	call: func(c *caller, ctx context.Context) result {
		out := &pb.IncrementResponse{}
		err := c.c.conn.Invoke(ctx, "/locklab.test.TallyService/Add", &pb.IncrementRequest{Delta: 1}, out)
		return judge(0, err, false, err == nil && out.GetValue() > 0)
	},
}

// addWorkload adds a row to workloads.json (as the embedded file with it
// appended) and its calls, for one test.
func addWorkload(t *testing.T, name, row string, w calls) {
	t.Helper()
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(workloadsJSON, &top))
	// Appended as text, so that the file's order (the API's) stays.
	ws := top["workloads"]
	ws = append(append(ws[:len(ws)-1:len(ws)-1], []byte(`,"`+name+`":`+row)...), '}')
	top["workloads"] = ws
	b, err := json.Marshal(top)
	require.NoError(t, err)
	d, err := ParseDefinitions(b)
	require.NoError(t, err)
	saved, savedCalls := defs, workloadCalls
	defs = d
	workloadCalls = map[string]calls{name: w}
	for n, c := range savedCalls {
		workloadCalls[n] = c
	}
	t.Cleanup(func() { defs, workloadCalls = saved, savedCalls })
}

// tallyServer answers Add with a running sum, and GetStats as a store-backed
// server does.
type tallyServer struct {
	pb.UnimplementedAdminServiceServer
	sum atomic.Int64
}

func (*tallyServer) GetStats(context.Context, *pb.GetStatsRequest) (*pb.GetStatsResponse, error) {
	return &pb.GetStatsResponse{StoreBacked: true}, nil
}

// TestAWorkloadIsOneRow adds a workload to workloads.json and the Go
// driver's table, and drives it: the driver knows its name, its cases, and
// summarises its calls, with nothing else edited.
func TestAWorkloadIsOneRow(t *testing.T) {
	addWorkload(t, "tally", tallyJSON, tallyCalls)
	assert.Equal(t, "tally", WorkloadNames()[len(WorkloadNames())-1])
	assert.Equal(t, []string{"add"}, Workloads().Cases("tally"))

	ts := &tallyServer{}
	g := grpc.NewServer()
	pb.RegisterAdminServiceServer(g, ts)
	g.RegisterService(&grpc.ServiceDesc{
		ServiceName: "locklab.test.TallyService", HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Add", Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			in := &pb.IncrementRequest{}
			if err := dec(in); err != nil {
				return nil, err
			}
			return &pb.IncrementResponse{Value: ts.sum.Add(in.GetDelta())}, nil
		}}},
	}, ts)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- g.Serve(lis) }()
	defer func() {
		g.Stop()
		require.NoError(t, <-served)
	}()

	cfg := DefaultConfig()
	cfg.Addr, cfg.Workload, cfg.Callers, cfg.Warmup, cfg.Duration = lis.Addr().String(), "tally", 2, 100*time.Millisecond, 500*time.Millisecond
	s, err := Run(t.Context(), cfg)
	require.NoError(t, err)
	assert.Equal(t, "tally", s.Workload)
	assert.Positive(t, s.OK)
	assert.Equal(t, s.Calls, s.OK, "every Add answered and checked")
	assert.Equal(t, s.OK, s.ByCase["add"].Count)
	assert.GreaterOrEqual(t, ts.sum.Load(), s.OK)

	cfg.Workload = "nosuch"
	_, err = Run(t.Context(), cfg)
	assert.ErrorContains(t, err, `workload "nosuch"`)
}

// TestEveryWorkloadHasCalls: every row of workloads.json has its row of
// workloadCalls, and no calls are left without a workload.
func TestEveryWorkloadHasCalls(t *testing.T) {
	for _, w := range WorkloadNames() {
		assert.Contains(t, workloadCalls, w)
	}
	assert.Len(t, workloadCalls, len(WorkloadNames()))
}
