package storeverdict

import (
	"testing"

	"go.uber.org/goleak"
)

// The rounds start go commands, whose output os/exec copies in goroutines
// of its own.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
