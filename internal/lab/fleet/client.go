package fleet

import (
	"context"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/locklab/locklab/internal/lab/balancer"
	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/server"
	"github.com/locklab/locklab/workload"
)

// Retry is how Transfer retries. Its zero value gives the defaults.
type Retry struct {
	// Attempt bounds one attempt; 0 means 2 s.
	Attempt time.Duration
	// Pause is the wait between attempts; 0 means 20 ms.
	Pause time.Duration
	// NoID sends no request id: a retry of a call of unknown outcome may
	// then apply the transfer twice (the control of the idempotency check).
	NoID bool
	// Key is the key header's value; "" means the sending account. A
	// caller that routes both accounts of a transfer to one replica gives
	// them one key.
	Key string
}

// Outcome is what happened to one transfer: its command (with its request
// id), its answer once acknowledged, and the attempts that ended without a
// definite answer.
type Outcome struct {
	Cmd    workload.BankCmd
	Result workload.BankResult
	// Acked: an attempt was answered OK.
	Acked bool
	// Refused: an attempt was answered with a definite refusal (the
	// transfer was not applied), e.g. insufficient funds.
	Refused codes.Code
	// Unknown counts the attempts that ended without telling whether the
	// transfer was applied (the replica died, the deadline passed): each
	// was retried with the same id.
	Unknown int
	// Fenced counts the attempts refused with ABORTED: the replica had lost
	// the account; nothing was applied, and the call was retried.
	Fenced int
	// Err is the last attempt's error when ctx ended first.
	Err error
}

// RequestID is the id Transfer gives the n-th transfer of a client named
// client.
func RequestID(client string, n int) string { return client + "-" + strconv.Itoa(n) }

// Transfer sends cmd (a transfer) through cc with the key header set to
// r.Key or the sending account and cmd.ReqID in the request-id header, and retries every
// attempt that fails without a definite answer (UNAVAILABLE, ABORTED,
// DEADLINE_EXCEEDED, INTERNAL, UNKNOWN) with the same id until ctx ends.
func Transfer(ctx context.Context, cc grpc.ClientConnInterface, cmd workload.BankCmd, r Retry) Outcome {
	attempt := r.Attempt
	if attempt == 0 {
		attempt = 2 * time.Second
	}
	pause := r.Pause
	if pause == 0 {
		pause = 20 * time.Millisecond
	}
	key := r.Key
	if key == "" {
		key = strconv.FormatUint(uint64(cmd.From), 10)
	}
	md := []string{balancer.KeyHeader, key}
	if !r.NoID && cmd.ReqID != "" {
		md = append(md, server.RequestIDHeader, cmd.ReqID)
	}
	bank := pb.NewBankServiceClient(cc)
	out := Outcome{Cmd: cmd}
	for {
		actx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(ctx, md...), attempt)
		resp, err := bank.TransferMoney(actx, &pb.TransferMoneyRequest{FromAccount: cmd.From, ToAccount: cmd.To, Amount: cmd.Amount})
		cancel()
		if err == nil {
			out.Acked = true
			out.Result = workload.BankResult{Seq: resp.GetSeq(), FromBalance: resp.GetFromBalance(), ToBalance: resp.GetToBalance()}
			return out
		}
		switch c := status.Code(err); c {
		case codes.Aborted:
			out.Fenced++
		case codes.Unavailable, codes.DeadlineExceeded, codes.Internal, codes.Unknown, codes.Canceled:
			out.Unknown++
		default:
			out.Refused = c
			return out
		}
		select {
		case <-ctx.Done():
			out.Err = err
			return out
		case <-time.After(pause):
		}
	}
}

// Balance reads account id's balance through cc, with its key.
func Balance(ctx context.Context, cc grpc.ClientConnInterface, id uint32) (int64, error) {
	ctx = metadata.AppendToOutgoingContext(ctx, balancer.KeyHeader, strconv.FormatUint(uint64(id), 10))
	r, err := pb.NewBankServiceClient(cc).GetBalance(ctx, &pb.GetBalanceRequest{Account: id})
	return r.GetBalance(), err
}
