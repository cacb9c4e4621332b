package server

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test starts real servers, clients and InputQ owners; goleak fails the
// package if any of them outlives its test. No grpc goroutine needs ignoring:
// closing the client and stopping the server ends them all, and goleak
// retries for a while before it reports.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
