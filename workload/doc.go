// Package workload holds the sequential state machines that locklab's designs
// wrap: a counter, a bank and a key-value map. Each is plain Go with no locks
// and no goroutines; package store makes it safe for concurrent use.
//
// Every command validates its input before it touches state, so a refused
// command leaves the machine exactly as it was. Errors wrap one of the kind
// sentinels (ErrInvalid, ErrNotFound, ErrInsufficientFunds, ErrOverflow), which
// the server maps to gRPC status codes. The specific errors are preallocated so
// that a refusal costs no allocation on the hot path.
package workload
