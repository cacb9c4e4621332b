// Package storebench turns the raw output of BenchmarkStore (go test -bench
// Store ./store, rounds of it concatenated) into the store's benchmark
// report, docs/results/store/: store.md — the time per command of every
// design × op × parallelism × critical-section length × CPU count, with a
// row whose runs fall into two clusters shown as both; the designs' speed
// targets and a "which design when" ranking, each judged on 95% intervals
// (of the median, or of the per-round ratio of two designs); the
// allocation check — and its two pictures, drawn by package chart:
// store-cs.svg, ns/op against the critical section per design, and
// store-cpus.svg, ns/op against CPUs per design.
//
// It is the lab's report of the store alone, as package report is of the
// server under load: it reads with x/perf's benchfmt and benchmath, judges
// with the lab's paired statistics and draws with the lab's charts.
// Command benchreport is its flags; `make bench-store` runs the rounds and
// then the command.
package storebench
