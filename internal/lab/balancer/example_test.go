package balancer_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/locklab/locklab/internal/lab/balancer"
	"github.com/locklab/locklab/internal/lab/proc"
	pb "github.com/locklab/locklab/proto/locklab/v1"
)

// HAProxy in front of two replicas, routing by key: every call about
// account 7 reaches the same replica.
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
	for _, mode := range []string{"mutex", "inputQ"} {
		s, err := proc.StartServer(exec.Command(bin, "-mode", mode, "-addr", "127.0.0.1:0", "-require-key", balancer.KeyHeader))
		if err != nil {
			log.Fatal(err)
		}
		defer s.Stop()
		addrs = append(addrs, s.Addr)
	}
	haproxy, err := balancer.Lookup("haproxy")
	if err != nil {
		log.Fatal(err)
	}
	b, err := balancer.Start(haproxy, balancer.Config{Policy: balancer.Key, Backends: addrs})
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()

	cc, err := grpc.NewClient(b.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
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
