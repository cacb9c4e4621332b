package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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

// runCompare runs the command line args as compare does, fails the test
// if it cannot, and returns what it printed as it went.
func runCompare(t *testing.T, args ...string) string {
	t.Helper()
	cmd, err := parseFlags(args, os.Stderr)
	require.NoError(t, err)
	cmd.cfg.Command = "compare (test)"
	var progress strings.Builder
	require.NoError(t, cmd.run(t.Context(), &progress, &progress), progress.String())
	return progress.String()
}
