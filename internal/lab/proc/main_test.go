package proc

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// bin is the locklab server, built once for the package's tests.
var bin string

func TestMain(m *testing.M) {
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
