// Package load is locklab's Go load driver: it drives a locklab server with
// the workloads of workloads.json — the same file the k6 scripts read, so
// the two drivers cannot drift — and summarises the run in the
// driver-neutral locklab.load-summary/v1 document (package summary) that k6
// and the runner write too.
//
// Why a second driver: on a 2-CPU machine k6 spends more CPU per call than
// the server it measures, so it, not the server, sets the throughput. The
// Go driver costs a fraction of that: its calls go over HTTP/2 connections
// of its own (h2.go: x/net/http2's framing and HPACK, the headers and
// frames grpc-go's client sends), where grpc-go's client cost about as much
// CPU a call as the server; setup's calls use grpc-go's generated stubs.
//
// Run drives one run:
//
//   - the closed model (Config.Model "closed"): Callers goroutines call back
//     to back over Conns connections (default one each, as k6's VUs);
//   - the open model ("open"): calls are due at Rate per second whatever the
//     latency, at most Callers in flight; each call is timed from when it
//     was due, not from when a caller got to it, so a stalled server shows
//     as latency, not as fewer calls (no coordinated omission); late and
//     dropped calls are counted.
//
// Every answer is checked as the k6 scripts check it (an OK with a
// consistent body, a refusal the bank scenario expects, or an unexpected
// error). Latencies go into HDR histograms (hdrhistogram-go), carried
// encoded in the summary so that repetitions merge exactly (summary.MergeHDR).
// Accounts and keys can be Zipf-skewed (Zipf, θ < 1) and the share of reads
// set (Config.ReadRatio). summary.Read reads any driver's summary.
//
// cmd/load is the command; docs/load.md describes the flags, the models and
// the schema.
package load
