package server

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/workload"
)

// fuzzMethods are the unary methods the server serves, from the generated
// service descriptors.
func fuzzMethods() []string {
	var out []string
	for _, sd := range []grpc.ServiceDesc{pb.CounterService_ServiceDesc, pb.BankService_ServiceDesc, pb.KVService_ServiceDesc, pb.AdminService_ServiceDesc, healthpb.Health_ServiceDesc} {
		for _, md := range sd.Methods {
			out = append(out, "/"+sd.ServiceName+"/"+md.MethodName)
		}
	}
	return out
}

// fuzzBank is the fuzzed servers' bank: small, so that the bytes name
// accounts that exist and transfers meet refusals.
var fuzzBank = workload.BankConfig{Scenario: workload.ScenarioB, Accounts: 8, InitialBalance: 100}

// summary is the state a refused request must leave alone, as GetStats
// reports it (cheap enough to read twice per input).
type summary struct {
	total, minBalance, counter int64
	accounts                   uint32
	transfers, kvKeys          uint64
}

func (ts *testServer) summary(t *testing.T) summary {
	s := ts.stats(t)
	return summary{s.GetTotalBalance(), s.GetMinBalance(), s.GetCounterValue(), s.GetAccounts(), s.GetTransfers(), s.GetKvKeys()}
}

// FuzzRequestBody sends arbitrary bytes as the body of every unary method of
// a real server on a loopback port, in every mode. The server must not
// panic (a panic ends the test binary), must answer with a status
// docs/design.md §status-codes names (or the Internal that grpc-go gives a
// body it cannot decode, or Unimplemented for a workload the mode's design
// does not serve), a refused
// request must change nothing, and the server must still answer a
// well-formed call afterwards.
func FuzzRequestBody(f *testing.F) {
	methods := fuzzMethods()
	inc, _ := proto.Marshal(&pb.IncrementRequest{Delta: 3})
	neg, _ := proto.Marshal(&pb.IncrementRequest{Delta: -1})
	tr, _ := proto.Marshal(&pb.TransferMoneyRequest{FromAccount: 1, ToAccount: 2, Amount: 5})
	put, _ := proto.Marshal(&pb.PutRequest{Key: "k", Value: []byte("v")})
	reset, _ := proto.Marshal(&pb.ResetRequest{Scenario: 9, Accounts: 3})
	for i := range methods {
		f.Add(uint8(i), []byte(nil))
	}
	for i, body := range [][]byte{inc, neg, tr, put, reset, {0xff}, {0x08, 0x80}, {0x0a, 0x05, 'a'}} {
		f.Add(uint8(i), body) // each body on another method too
	}

	var servers []*testServer
	for _, m := range Modes() {
		servers = append(servers, startServer(f, Config{Mode: m.Name, Bank: fuzzBank}))
	}
	isNoop := func(ts *testServer) bool { return !ts.srv.Mode().StoreBacked() }
	// A mode whose design does not serve a workload answers its RPCs
	// UNIMPLEMENTED.
	unserved := func(ts *testServer, method string) bool {
		service := strings.Split(method, "/")[1]
		for wl, w := range workloads {
			if w.desc().ServiceName == service {
				return ts.srv.Mode().servesErr(wl) != nil
			}
		}
		return false
	}
	// The codes docs/design.md §status-codes gives bad input, and NotFound
	// for a health check of an unknown service.
	clearCodes := []codes.Code{codes.OK, codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition, codes.OutOfRange, codes.ResourceExhausted}

	f.Fuzz(func(t *testing.T, m uint8, body []byte) {
		method := methods[int(m)%len(methods)]
		for _, ts := range servers {
			before := ts.summary(t)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			var reply []byte
			err := ts.conn.Invoke(ctx, method, &body, &reply, grpc.ForceCodec(rawCodec{}))
			cancel()
			st := status.Convert(err)
			switch {
			case slices.Contains(clearCodes, st.Code()):
			case st.Code() == codes.Internal && strings.Contains(st.Message(), "unmarshal"):
			case st.Code() == codes.Unimplemented && unserved(ts, method):
			default:
				t.Fatalf("%s %s %x: unexpected status %v", ts.srv.Mode().Name, method, body, err)
			}
			after := ts.summary(t) // the server still answers
			if err != nil && !isNoop(ts) {
				require.Equal(t, before, after, "%s %s %x refused (%v) but changed the state", ts.srv.Mode().Name, method, body, err)
			}
			if err == nil && method == "/locklab.v1.AdminService/Reset" {
				ts.reset(t, pb.Scenario(fuzzBank.Scenario), fuzzBank.Accounts, fuzzBank.InitialBalance) // back to a small bank
			}
		}
	})
}
