package main

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// binDir holds the binaries the tests build once (binaries).
var binDir string

// The runner starts a goroutine per server process; none may outlive a test.
// runMainEnv makes the test binary run main instead of the tests, so exit
// statuses are checked on the real thing without building it again.
const runMainEnv = "COMPARE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "compare-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare tests:", err)
		os.Exit(1)
	}
	binDir = dir
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		_ = os.RemoveAll(dir)
		os.Exit(code)
	}))
}
