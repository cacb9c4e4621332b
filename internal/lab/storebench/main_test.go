package storebench

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if sampleReport.dir != "" {
			os.RemoveAll(sampleReport.dir)
		}
		os.Exit(code)
	}))
}
