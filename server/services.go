package server

import (
	"context"

	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/workload"
)

// The data services turn a request into one command value, apply it through
// the mode's store (or get the refusal of a design that does not serve the
// workload) and map the error with toStatus. They log nothing and keep
// no state of their own.

type counterService struct {
	pb.UnimplementedCounterServiceServer
	d *data[workload.CounterCmd, int64]
}

func (s *counterService) Increment(ctx context.Context, r *pb.IncrementRequest) (*pb.IncrementResponse, error) {
	v, err := s.d.Do(ctx, workload.CounterCmd{Op: workload.CounterIncrement, Delta: r.GetDelta()})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.IncrementResponse{Value: v}, nil
}

func (s *counterService) GetValue(ctx context.Context, _ *pb.GetValueRequest) (*pb.GetValueResponse, error) {
	v, err := s.d.Do(ctx, workload.CounterCmd{Op: workload.CounterGet})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.GetValueResponse{Value: v}, nil
}

type bankService struct {
	pb.UnimplementedBankServiceServer
	d *data[workload.BankCmd, workload.BankResult]
}

func (s *bankService) TransferMoney(ctx context.Context, r *pb.TransferMoneyRequest) (*pb.TransferMoneyResponse, error) {
	res, err := s.d.Do(ctx, workload.BankCmd{Op: workload.BankTransfer, From: r.GetFromAccount(), To: r.GetToAccount(), Amount: r.GetAmount(), ReqID: requestID(ctx)})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.TransferMoneyResponse{Seq: res.Seq, FromBalance: res.FromBalance, ToBalance: res.ToBalance}, nil
}

func (s *bankService) GetBalance(ctx context.Context, r *pb.GetBalanceRequest) (*pb.GetBalanceResponse, error) {
	res, err := s.d.Do(ctx, workload.BankCmd{Op: workload.BankBalance, From: r.GetAccount()})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.GetBalanceResponse{Balance: res.Balance}, nil
}

func (s *bankService) GetHistory(ctx context.Context, r *pb.GetHistoryRequest) (*pb.GetHistoryResponse, error) {
	res, err := s.d.Do(ctx, workload.BankCmd{Op: workload.BankHistory, From: r.GetAccount(), Limit: r.GetLimit()})
	if err != nil {
		return nil, toStatus(err)
	}
	out := &pb.GetHistoryResponse{Transfers: make([]*pb.Transfer, len(res.History))}
	for i, t := range res.History {
		out.Transfers[i] = &pb.Transfer{Seq: t.Seq, FromAccount: t.From, ToAccount: t.To, Amount: t.Amount}
	}
	return out, nil
}

type kvService struct {
	pb.UnimplementedKVServiceServer
	d *data[workload.KVCmd, workload.KVResult]
}

func (s *kvService) Put(ctx context.Context, r *pb.PutRequest) (*pb.PutResponse, error) {
	res, err := s.d.Do(ctx, workload.KVCmd{Op: workload.KVPut, Key: r.GetKey(), Value: r.GetValue()})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.PutResponse{Version: res.Version}, nil
}

func (s *kvService) Get(ctx context.Context, r *pb.GetRequest) (*pb.GetResponse, error) {
	res, err := s.d.Do(ctx, workload.KVCmd{Op: workload.KVGet, Key: r.GetKey()})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.GetResponse{Value: res.Value, Version: res.Version}, nil
}

// The noop services answer every data RPC with an empty response: no store,
// no validation, no state. What is left is the cost of gRPC, protobuf and the
// handler dispatch, the same for every mode, which is the ceiling no design
// can pass on this harness.

type noopCounter struct {
	pb.UnimplementedCounterServiceServer
}

func (noopCounter) Increment(context.Context, *pb.IncrementRequest) (*pb.IncrementResponse, error) {
	return &pb.IncrementResponse{}, nil
}

func (noopCounter) GetValue(context.Context, *pb.GetValueRequest) (*pb.GetValueResponse, error) {
	return &pb.GetValueResponse{}, nil
}

type noopBank struct {
	pb.UnimplementedBankServiceServer
}

func (noopBank) TransferMoney(context.Context, *pb.TransferMoneyRequest) (*pb.TransferMoneyResponse, error) {
	return &pb.TransferMoneyResponse{}, nil
}

func (noopBank) GetBalance(context.Context, *pb.GetBalanceRequest) (*pb.GetBalanceResponse, error) {
	return &pb.GetBalanceResponse{}, nil
}

func (noopBank) GetHistory(context.Context, *pb.GetHistoryRequest) (*pb.GetHistoryResponse, error) {
	return &pb.GetHistoryResponse{}, nil
}

type noopKV struct {
	pb.UnimplementedKVServiceServer
}

func (noopKV) Put(context.Context, *pb.PutRequest) (*pb.PutResponse, error) {
	return &pb.PutResponse{}, nil
}

func (noopKV) Get(context.Context, *pb.GetRequest) (*pb.GetResponse, error) {
	return &pb.GetResponse{}, nil
}

// adminService resets the state and reports it with the window's
// measurements. st is nil in the noop mode.
type adminService struct {
	pb.UnimplementedAdminServiceServer
	mode        Mode
	st          *stores
	m           *metrics
	sampleEvery uint64
}

// Reset resets every workload from the request (the bank is made from it;
// the counter goes to zero and the map empties) and starts a new
// measurement window. A request some workload refuses changes nothing:
// every workload checks it before any is reset, served or not (noop refuses
// what the others refuse all the same). The workloads are reset one after
// the other, not atomically: Reset is for between runs, not under load.
func (s *adminService) Reset(ctx context.Context, r *pb.ResetRequest) (*pb.ResetResponse, error) {
	for _, w := range workloads {
		if err := w.checkReset(r); err != nil {
			return nil, toStatus(err)
		}
	}
	if s.st != nil {
		for _, w := range s.st.ms.wls {
			if err := w.reset(ctx, r); err != nil {
				return nil, toStatus(err)
			}
		}
		s.st.resetQueueHighWater()
		s.st.newSerialWindow()
		s.st.ms.newWindow()
	}
	s.m.newWindow()
	return &pb.ResetResponse{}, nil
}

// GetStats reports the state (store-backed modes only, unless WindowOnly)
// and the measurements of the window since the last Reset or the start.
func (s *adminService) GetStats(ctx context.Context, req *pb.GetStatsRequest) (*pb.GetStatsResponse, error) {
	out := &pb.GetStatsResponse{Mode: s.mode.Name, StoreBacked: s.st != nil, LatencySampleEvery: uint32(s.sampleEvery)}
	if s.st != nil && !req.GetWindowOnly() {
		for _, w := range s.st.ms.wls {
			if err := w.stats(ctx, out); err != nil {
				return nil, toStatus(err)
			}
		}
	}
	if s.st != nil {
		out.QueueHighWater, out.QueueLen = s.st.queueHighWater(), s.st.queueLen()
		out.Serial = s.st.serialWindow()
	}
	if d, ok := s.mode.Design(); ok {
		out.Design = d.Name
	}
	out.Durability = DurabilityNone
	if s.st != nil {
		s.st.ms.report(out)
	}
	ws := s.m.read()
	out.WindowSeconds, out.Requests, out.CpuSeconds, out.GcCycles = ws.seconds, ws.requests, ws.cpu, ws.gc
	out.SchedLatencyCount, out.SchedLatencyP50Ns, out.SchedLatencyP99Ns = ws.schedCount, ws.schedP50, ws.schedP99
	out.MutexWaitSeconds = ws.mutexWait
	out.RssBytes, out.Goroutines = rssBytes(), goroutines()
	out.RpcCounts = make(map[string]*pb.RpcCount, len(ws.rpcs))
	for name, byCode := range ws.rpcs {
		c := &pb.RpcCount{Codes: byCode}
		for _, n := range byCode {
			c.Total += n
		}
		out.RpcCounts[name] = c
	}
	for _, l := range ws.latency {
		out.StoreLatency = append(out.StoreLatency, &pb.StoreLatency{
			Workload: l.workload, Op: l.op, Count: l.count,
			P50Ns: l.p50, P90Ns: l.p90, P99Ns: l.p99, P999Ns: l.p999, MaxNs: l.mx,
		})
	}
	return out, nil
}
