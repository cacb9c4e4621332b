package hosts

import (
	"fmt"
	"net"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// listenEnv, when set, makes the test binary a tiny TCP server instead of
// running the tests: the tests start it inside a host (Host.Command) and
// dial it from the root namespace.
const listenEnv = "LOCKLAB_HOSTS_TEST_LISTEN"

// TestMain runs the tests under goleak, or serves (listenEnv): it answers
// one connection with the identity of its network namespace, which the test
// compares with the host's.
func TestMain(m *testing.M) {
	if addr := os.Getenv(listenEnv); addr != "" {
		os.Exit(serveOnce(addr))
	}
	goleak.VerifyTestMain(m)
}

func serveOnce(addr string) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer ln.Close()
	c, err := ln.Accept()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	ns, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintln(c, ns)
	return 0
}
