package fleet

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/locklab/locklab/internal/lab/balancer"
	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/workload"
)

// keyBank answers every transfer and keeps the key header of each.
type keyBank struct {
	pb.UnimplementedBankServiceServer
	keys chan []string
}

func (k *keyBank) TransferMoney(ctx context.Context, _ *pb.TransferMoneyRequest) (*pb.TransferMoneyResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	k.keys <- md.Get(balancer.KeyHeader)
	return &pb.TransferMoneyResponse{Seq: 1}, nil
}

// TestTransferKey: Retry.Key is the key header a transfer carries; the
// control: without it, the header is the sending account.
func TestTransferKey(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := grpc.NewServer()
	bank := &keyBank{keys: make(chan []string, 2)}
	pb.RegisterBankServiceServer(s, bank)
	go func() { _ = s.Serve(lis) }()
	defer s.Stop()
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer cc.Close()
	cmd := workload.BankCmd{Op: workload.BankTransfer, From: 5, To: 6, Amount: 1, ReqID: "k-1"}
	for _, tt := range []struct {
		key, want string
	}{{"pair-2", "pair-2"}, {"", "5"}} {
		o := Transfer(t.Context(), cc, cmd, Retry{Key: tt.key})
		require.True(t, o.Acked, "%+v", o)
		assert.Equal(t, []string{tt.want}, <-bank.keys, "key %q", tt.key)
	}
}
