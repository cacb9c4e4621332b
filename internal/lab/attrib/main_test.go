package attrib

import (
	"testing"

	"go.uber.org/goleak"
)

// The known-answer tests start callers and the stores' owner goroutines;
// goleak fails the package if one is left behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
