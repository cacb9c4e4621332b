package serve

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// childEnv, when set, makes the test binary the command itself: it decodes
// the Options in it and runs Main, as the root main.go does once its flags
// are parsed. The tests that need a process — signals, exit statuses, kill
// -9 — start it so (startServer, runProcess); under -race it is a race
// build, so a race in the server's own goroutines fails it (exit 66).
const childEnv = "LOCKLAB_SERVE_CHILD"

func TestMain(m *testing.M) {
	if s, ok := os.LookupEnv(childEnv); ok {
		var o Options
		if err := json.Unmarshal([]byte(s), &o); err != nil {
			fmt.Fprintln(os.Stderr, "serve test child:", err)
			os.Exit(3)
		}
		os.Exit(Main(o))
	}
	code := m.Run()
	stopTestDatabase()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
