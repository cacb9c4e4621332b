package load_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locklab/locklab/load"
	"github.com/locklab/locklab/server"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(load.ServerProcessEnv); mode != "" {
		os.Exit(serveProcess(mode))
	}
	goleak.VerifyTestMain(m)
}

// serveProcess serves the real server in mode on a loopback port, prints
// the address and stops when its standard input closes (the benchmark that
// started it is done or gone).
func serveProcess(mode string) int {
	srv, err := server.New(server.Config{Mode: mode})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	fmt.Println(lis.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Stop(ctx)
	if err := <-served; err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
