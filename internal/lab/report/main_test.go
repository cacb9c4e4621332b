package report

import (
	"testing"

	"go.uber.org/goleak"
)

// The browser test runs Chromium through os/exec, whose output is copied by
// goroutines until the command ends: none may outlive its test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
