package replicas

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/locklab/locklab/internal/lab/balancer"
	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/server"
)

// fencingBank refuses the first attempt of every request id with ABORTED,
// as a replica that has just lost an account does, and answers the retry.
type fencingBank struct {
	pb.UnimplementedBankServiceServer
	mu   sync.Mutex // guards seen
	seen map[string]bool
}

func (f *fencingBank) TransferMoney(ctx context.Context, r *pb.TransferMoneyRequest) (*pb.TransferMoneyResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	key, id := md.Get(balancer.KeyHeader), md.Get(server.RequestIDHeader)
	if len(key) != 1 || key[0] != blockKey(int(r.GetFromAccount()-1)/2) {
		return nil, status.Errorf(codes.InvalidArgument, "key %v for account %d", key, r.GetFromAccount())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(id) == 0 {
		return nil, status.Error(codes.Aborted, "fenced")
	}
	if !f.seen[id[0]] {
		f.seen[id[0]] = true
		return nil, status.Error(codes.Aborted, "fenced")
	}
	return &pb.TransferMoneyResponse{Seq: 1}, nil
}

// TestDriveWithIDs: with request ids, every transfer the fake replica
// fences is retried with its id and answered, each keyed by its pair; the
// driver counts the fenced attempts and keeps every outcome for the audit.
// The control: the same load without ids counts every fenced call as a
// failed one.
func TestDriveWithIDs(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := grpc.NewServer()
	pb.RegisterBankServiceServer(s, &fencingBank{seen: map[string]bool{}})
	go func() { _ = s.Serve(lis) }()
	defer s.Stop()
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer cc.Close()

	l := Load{Workload: Bank, Callers: 2, Duration: 200 * time.Millisecond, Seed: 1, IDs: true}
	tl, err := Drive(t.Context(), cc, l)
	require.NoError(t, err)
	assert.Zero(t, tl.Errors, "%v", tl.FirstError)
	assert.Positive(t, tl.OK)
	assert.Equal(t, tl.OK, tl.Fenced, "each transfer fenced once, then answered")
	assert.Len(t, tl.Outcomes, int(tl.Calls))
	var sum int64
	for _, d := range tl.Ledger {
		sum += d
	}
	assert.Zero(t, sum, "the ledger moves money, never makes it")

	l.IDs = false
	tl, err = Drive(t.Context(), cc, l)
	require.NoError(t, err)
	assert.Equal(t, tl.Calls, tl.Errors, "the control: without ids nothing is retried")
	assert.Equal(t, codes.Aborted, status.Code(tl.FirstError))

	_, err = Drive(t.Context(), cc, Load{Workload: KV, Callers: 1, Duration: time.Millisecond, IDs: true})
	assert.ErrorContains(t, err, "request ids")
}
