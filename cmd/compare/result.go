package main

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/locklab/locklab/load"
)

// Result is one measured run as every driver reports it: the
// locklab.load-summary/v1 document (load.Summary; written by cmd/load, by the
// k6 scripts, and by the runner itself for h2load). The runner, the
// invariant checks and the report read only this.
type Result = load.Summary

// readSummary reads a driver's summary file in either schema: the
// driver-neutral one, or the first wave's k6 one, converted.
func readSummary(path string) (*Result, error) { return load.ReadSummary(path) }

// histogram decodes a result's HDR histogram (µs); nil when it has none.
func histogram(r *Result) (*hdrhistogram.Histogram, error) { return load.DecodeHDR(r.HDR) }

// newLatencyHistogram is the Go driver's histogram geometry, so that h2load's
// histograms merge with its.
func newLatencyHistogram() *hdrhistogram.Histogram { return load.NewHistogram() }

// setHistogram fills a Result's latency figures, curve and HDR field from a
// histogram in µs, as the Go driver does.
func setHistogram(r *Result, h *hdrhistogram.Histogram) error {
	if h.TotalCount() == 0 {
		return nil
	}
	r.LatencyMs = load.LatencyOf(h)
	r.Percentiles = load.PercentilesOf(h)
	if c, ok := r.ByCase["increment"]; ok {
		c.P50Ms, c.P99Ms = r.LatencyMs.P50, r.LatencyMs.P99
		r.ByCase["increment"] = c
	}
	enc, err := load.EncodeHDR(h)
	if err != nil {
		return fmt.Errorf("h2load: %w", err)
	}
	r.HDR = enc
	return nil
}
