package ledger

import (
	"testing"

	"go.uber.org/goleak"
)

// The known-answer tests start a server, its stores' goroutines and
// callers; goleak fails the package if one is left behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
