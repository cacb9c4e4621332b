package proc

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

// bin is the locklab server, built once for the package's tests.
var bin string

// parentEnv, when set, makes the test binary a runner that starts two
// sleeping children, one through Start and one plainly, prints their PIDs
// and waits to be killed (TestChildrenDieWithTheRunner).
const parentEnv = "LOCKLAB_PROC_TEST_PARENT"

func TestMain(m *testing.M) {
	if os.Getenv(parentEnv) != "" {
		os.Exit(runner())
	}
	dir, err := os.MkdirTemp("", "proc-test")
	if err == nil {
		bin, err = Build(dir)
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

func runner() int {
	p, err := Start(exec.Command("sleep", "600"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	plain := exec.Command("sleep", "600")
	plain.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := plain.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("%d %d\n", p.PID(), plain.Process.Pid)
	select {} // until killed
}
