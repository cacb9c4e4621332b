package store

import (
	"testing"

	"go.uber.org/goleak"
)

// An InputQ that is not closed leaks its owner goroutine; goleak fails the
// package if any test or benchmark leaves one behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
