package pack

import (
	"testing"

	"go.uber.org/goleak"
)

// Nothing here starts a goroutine of its own; goleak keeps it so.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
