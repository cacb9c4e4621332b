package replicas

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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
// outlive their master), waits until nginx has forked a worker (nginx
// answers as soon as its master listens, and a master killed before its
// fork leaves no worker behind), prints "ready" and waits.
func helper() int {
	f := Front{Name: "nginx/" + balancer.RoundRobin, Balancer: "nginx", Policy: balancer.RoundRobin}
	cl, err := Start(context.Background(), Config{Server: bin, Mode: "mutex", Replicas: 2, Front: f, ReplicaCPUs: 0.5})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	for deadline := time.Now().Add(10 * time.Second); !hasGrandchild(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			fmt.Println("error: no nginx worker after 10s")
			return 1
		}
	}
	fmt.Println("ready", cl.Config().Replicas)
	select {} // until killed
}

// hasGrandchild says whether a process marked as this one's was forked by
// another of them: nginx's worker, whose parent is its master.
func hasGrandchild() bool {
	for p, owner := range processes() {
		if owner != os.Getpid() {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold anything but ends at
		// the last parenthesis.
		i := bytes.LastIndexByte(stat, ')')
		if f := strings.Fields(string(stat[i+1:])); i >= 0 && len(f) > 1 && f[1] != strconv.Itoa(os.Getpid()) {
			return true
		}
	}
	return false
}
