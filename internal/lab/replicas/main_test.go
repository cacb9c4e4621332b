package replicas

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/locklab/locklab/internal/lab/balancer"
	"github.com/locklab/locklab/internal/lab/proc"
)

// bin is the locklab server, built once for the package's tests.
var bin string

// helperEnv makes the test binary the runner of TestLeftoversOfAKilledRunner:
// it starts a cluster, says so, and waits to be killed.
const helperEnv = "LOCKLAB_REPLICAS_TEST_HELPER"

func TestMain(m *testing.M) {
	if bin = os.Getenv(helperEnv); bin != "" {
		os.Exit(helper())
	}
	dir, err := os.MkdirTemp("", "replicas-test")
	if err == nil {
		bin, err = proc.Build(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// helper starts a cluster of two replicas behind nginx (whose workers
// outlive their master), prints "ready" and waits.
func helper() int {
	f := Front{Name: "nginx/" + balancer.RoundRobin, Balancer: "nginx", Policy: balancer.RoundRobin}
	cl, err := Start(context.Background(), Config{Server: bin, Mode: "mutex", Replicas: 2, Front: f, ReplicaCPUs: 0.5})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("ready", cl.Config().Replicas)
	select {} // until killed
}
