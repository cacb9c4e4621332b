package clientlb_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"

	"google.golang.org/grpc/metadata"

	"github.com/locklab/locklab/internal/lab/balancer"
	"github.com/locklab/locklab/internal/lab/clientlb"
	"github.com/locklab/locklab/internal/lab/proc"
	pb "github.com/locklab/locklab/proto/locklab/v1"
)

// The client balances by key itself, with no balancer process: every call
// about account 7 reaches the same one of three replicas.
func Example() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin, err := proc.Build(dir)
	if err != nil {
		log.Fatal(err)
	}
	var addrs []string
	for _, mode := range []string{"mutex", "inputQ", "inputQ-batch"} {
		s, err := proc.StartServer(exec.Command(bin, "-mode", mode, "-addr", "127.0.0.1:0"))
		if err != nil {
			log.Fatal(err)
		}
		defer s.Stop()
		addrs = append(addrs, s.Addr)
	}
	byKey, err := clientlb.Lookup(balancer.Key)
	if err != nil {
		log.Fatal(err)
	}
	cc, err := clientlb.Dial(addrs, byKey)
	if err != nil {
		log.Fatal(err)
	}
	defer cc.Close()
	admin := pb.NewAdminServiceClient(cc)
	ctx := metadata.AppendToOutgoingContext(context.Background(), balancer.KeyHeader, "account-7")
	replicas := map[string]bool{}
	for range 10 {
		st, err := admin.GetStats(ctx, &pb.GetStatsRequest{})
		if err != nil {
			log.Fatal(err)
		}
		replicas[st.GetMode()] = true
	}
	fmt.Println("replicas that answered account-7:", len(replicas))
	// Output: replicas that answered account-7: 1
}
