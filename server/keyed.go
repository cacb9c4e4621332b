package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// ErrKeyHeader is a data call without the key header on a server that
// requires one (Config.RequireKey): INVALID_ARGUMENT, and nothing changes.
var ErrKeyHeader = errors.New("server: key header")

// keyGate refuses data calls that do not name their key in a header. A
// replica behind a balancer that routes by that header (one key, one
// replica) gets a call without it only from a client that bypassed the
// routing; served, such a call could change a key that another replica
// owns. Admin calls and health checks carry no key and always pass.
type keyGate struct {
	header string
	data   map[string]bool // full method names the gate checks
	err    error           // what a refused call gets, made once
}

// newKeyGate checks and normalises the header's name: metadata keys are
// lower case, so "X-Key" means "x-key".
func newKeyGate(header string, data []string) (*keyGate, error) {
	if err := ValidKeyHeader(header); err != nil {
		return nil, fmt.Errorf("require key %q: %v", header, err)
	}
	h := strings.ToLower(header)
	g := &keyGate{header: h, data: map[string]bool{},
		err: toStatus(fmt.Errorf("%w: the call has no %q header; this server serves only calls that name their key in it", ErrKeyHeader, h))}
	for _, m := range data {
		g.data[m] = true
	}
	return g, nil
}

// ValidKeyHeader says whether name can be Config.RequireKey: what gRPC
// allows as an ASCII metadata key, in any case, except the names gRPC keeps
// for itself.
func ValidKeyHeader(name string) error {
	h := strings.ToLower(name)
	if h == "" {
		return errors.New("want a header name")
	}
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("want a header name of letters, digits, '-', '_' and '.', not %q", c)
		}
	}
	if strings.HasPrefix(h, "grpc-") || strings.HasSuffix(h, "-bin") || h == "te" || h == "content-type" || h == "user-agent" {
		return errors.New("a header gRPC keeps for itself or for binary values")
	}
	return nil
}

// unary refuses a data call whose key header is missing or empty, before
// its handler runs.
func (g *keyGate) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if g.data[info.FullMethod] && !hasValue(metadata.ValueFromIncomingContext(ctx, g.header)) {
		return nil, g.err
	}
	return handler(ctx, req)
}

func hasValue(vs []string) bool {
	for _, v := range vs {
		if v != "" {
			return true
		}
	}
	return false
}

// RequestIDHeader carries a transfer's request id: a client that retries a
// call whose outcome it does not know (the replica died before answering)
// sends the same id again, and a bank that keeps ids (routed-owner over a
// database) applies the transfer at most once and answers the retry with
// the first answer. Other designs ignore it.
const RequestIDHeader = "x-request-id"

// requestID is the call's first non-empty RequestIDHeader, or "".
func requestID(ctx context.Context) string {
	for _, v := range metadata.ValueFromIncomingContext(ctx, RequestIDHeader) {
		if v != "" {
			return v
		}
	}
	return ""
}
