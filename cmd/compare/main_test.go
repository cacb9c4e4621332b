package main

import (
	"testing"

	"go.uber.org/goleak"
)

// The runner starts a goroutine per server process; none may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
