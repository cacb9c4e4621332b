package server

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/server/internal/durable"
	"github.com/locklab/locklab/store"
)

// tally is a throw-away workload: a sum that Add raises, with no capability
// beyond Apply (so the designs that need reads, shards or an atomic Apply do
// not serve it). Its service is made by hand, reusing the counter's
// messages, so that no .proto is needed for a test.
type tallyCmd struct {
	op    int // 1 add, 2 reset
	delta int64
}

type tally struct{ sum int64 }

func (m *tally) Apply(c tallyCmd) (int64, error) {
	if c.op == 2 {
		m.sum = 0
		return 0, nil
	}
	m.sum += c.delta
	return m.sum, nil
}

// tallyLog is tally's codec: a record is the op, then an add's delta.
type tallyLog struct{ m *tally }

func (tallyLog) Encode(dst []byte, c tallyCmd, _ int64) ([]byte, bool) {
	dst = append(dst, byte(c.op))
	if c.op == 2 {
		return dst, true
	}
	return binary.AppendVarint(dst, c.delta), c.delta != 0
}

func (l tallyLog) Replay(rec []byte) error {
	if len(rec) == 0 {
		return errors.New("tally: empty record")
	}
	d, n := binary.Varint(rec[1:])
	if rec[0] == 2 {
		_, err := l.m.Apply(tallyCmd{op: 2})
		return err
	}
	if n <= 0 {
		return errors.New("tally: bad record")
	}
	_, err := l.m.Apply(tallyCmd{op: 1, delta: d})
	return err
}

func (l tallyLog) Snapshot() []byte { return binary.AppendVarint(nil, l.m.sum) }

func (l tallyLog) Restore(state []byte) error {
	s, n := binary.Varint(state)
	if n <= 0 {
		return errors.New("tally: bad snapshot")
	}
	l.m.sum = s
	return nil
}

var tallyService = grpc.ServiceDesc{
	ServiceName: "locklab.test.TallyService",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Add", Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
		in := &pb.IncrementRequest{}
		if err := dec(in); err != nil {
			return nil, err
		}
		add := func(ctx context.Context, req any) (any, error) {
			d, ok := srv.(*data[tallyCmd, int64])
			if !ok { // noop
				return &pb.IncrementResponse{}, nil
			}
			v, err := d.Do(ctx, tallyCmd{op: 1, delta: req.(*pb.IncrementRequest).GetDelta()})
			if err != nil {
				return nil, toStatus(err)
			}
			return &pb.IncrementResponse{Value: v}, nil
		}
		// As generated code does: the server's interceptors (its counts)
		// wrap the handler.
		return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: "/locklab.test.TallyService/Add"}, add)
	}}},
}

// tallyRow is the row a workload adds to the table, nothing else.
var tallyRow = def[tallyCmd, int64]{
	name: "tally", ops: []string{1: "add", 2: "reset"},
	service: &tallyService,
	machine: func(Config) (store.Machine[tallyCmd, int64], durable.Codec[tallyCmd, int64], error) {
		m := &tally{}
		return m, tallyLog{m}, nil
	},
	op:       func(c tallyCmd) int { return c.op },
	register: func(s *grpc.Server, d *data[tallyCmd, int64]) { s.RegisterService(&tallyService, d) },
	noop:     func(s *grpc.Server) { s.RegisterService(&tallyService, struct{}{}) },
	reset:    func(*pb.ResetRequest) (tallyCmd, error) { return tallyCmd{op: 2}, nil },
	stats: func(ctx context.Context, s store.Store[tallyCmd, int64], _ *pb.GetStatsResponse) error {
		_, err := s.Do(ctx, tallyCmd{op: 1}) // reads the sum; GetStats has no field of its own for it
		return err
	},
}

// addWorkload adds a row to the table for one test.
func addWorkload(t *testing.T, w workloadDef) {
	t.Helper()
	saved := workloads
	workloads = append(slices.Clip(saved), w)
	t.Cleanup(func() { workloads = saved })
}

func tallyAdd(ctx context.Context, conn *grpc.ClientConn, delta int64) (int64, error) {
	out := &pb.IncrementResponse{}
	err := conn.Invoke(ctx, "/locklab.test.TallyService/Add", &pb.IncrementRequest{Delta: delta}, out)
	return out.GetValue(), err
}

// TestAWorkloadIsOneRow adds a workload to the table and sees the server
// take it up with nothing else edited: Workloads and the modes that serve
// it, its service and health, its store in every design that can serve it
// and UNIMPLEMENTED in the others, its latency, RPC counts and serial demand
// in GetStats, Reset, and its own log that a restart recovers.
func TestAWorkloadIsOneRow(t *testing.T) {
	addWorkload(t, tallyRow)
	assert.Equal(t, "tally", Workloads()[len(Workloads())-1])

	served := 0
	for _, m := range Modes() {
		t.Run(m.Name, func(t *testing.T) {
			d, ok := m.Design()
			want := !ok || d.Needs == 0 // noop, or a design that needs nothing of a machine
			require.Equal(t, want, m.Serves("tally"))
			ts := startServer(t, Config{Mode: m.Name, SampleEvery: 1})
			ctx := t.Context()
			v, err := tallyAdd(ctx, ts.conn, 5)
			if !want {
				requireCode(t, codes.Unimplemented, err)
				assert.Contains(t, status.Convert(err).Message(), "does not serve workload tally")
				return
			}
			require.NoError(t, err)
			h, err := healthpb.NewHealthClient(ts.conn).Check(ctx, &healthpb.HealthCheckRequest{Service: tallyService.ServiceName})
			require.NoError(t, err)
			assert.Equal(t, healthpb.HealthCheckResponse_SERVING, h.GetStatus())
			st := ts.stats(t)
			assert.Equal(t, uint64(1), st.GetRpcCounts()["/locklab.test.TallyService/Add"].GetTotal())
			if !ok {
				assert.Equal(t, int64(0), v, "noop answers emptily")
				return
			}
			served++
			assert.Equal(t, int64(5), v)
			var ops []string
			for _, l := range st.GetStoreLatency() {
				if l.GetWorkload() == "tally" {
					ops = append(ops, l.GetOp())
				}
			}
			assert.Equal(t, []string{"add"}, ops, "the store latency of the one op that ran")
			var serial []string
			for _, s := range st.GetSerial() {
				serial = append(serial, s.GetWorkload())
			}
			assert.Contains(t, serial, "tally")

			ts.reset(t, pb.Scenario_SCENARIO_A, 0, 0)
			v, err = tallyAdd(ctx, ts.conn, 2)
			require.NoError(t, err)
			assert.Equal(t, int64(2), v, "Reset reset the tally")
		})
	}
	assert.Positive(t, served)

	t.Run("durable", func(t *testing.T) {
		dir := t.TempDir()
		cfg := Config{Mode: "mutex", Durability: DurabilityWAL, DataDir: dir}
		ts := startServer(t, cfg)
		for range 3 {
			_, err := tallyAdd(t.Context(), ts.conn, 4)
			require.NoError(t, err)
		}
		ts.srv.Stop(t.Context())
		assert.DirExists(t, dir+"/tally", "the workload's own log")
		ts2 := startServer(t, cfg)
		v, err := tallyAdd(t.Context(), ts2.conn, 1)
		require.NoError(t, err)
		assert.Equal(t, int64(13), v, "the restart recovered the tally from its log")
	})
}
