// Package server serves locklab's gRPC API (proto/locklab/v1) over the stores
// of one mode: every request becomes a command value for a workload machine,
// the mode's design (package store) applies it, and the one function toStatus
// maps what comes back to a gRPC status code.
//
// A mode is a design applied to every workload (mutex, inputQ), or noop, which
// answers the data RPCs without touching any store so that a report can show
// the ceiling of the harness beside the designs.
//
// The server measures itself for AdminService/GetStats without adding a lock
// to the request path: per-RPC status counts and the time spent inside the
// store are atomics and lock-free Prometheus histograms, kept per measurement
// window (a Reset starts a new window). See metrics.go.
package server
