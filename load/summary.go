package load

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/locklab/locklab/internal/summary"
)

// The summary this driver writes is the runner's driver-neutral schema
// (package internal/summary); these names keep load's API whole for callers
// outside the module.
const SummarySchema = summary.Schema

type (
	// Summary is one load run, whatever drove it (docs/load.md).
	Summary = summary.Summary
	// K6Details is the k6-only part of a k6 run's summary.
	K6Details = summary.K6Details
	// CaseStats is one case's share of a run.
	CaseStats = summary.CaseStats
	// LatencyMs is the latency distribution of a run's calls, in ms.
	LatencyMs = summary.LatencyMs
)

// ReadSummary reads a locklab.load-summary/v1 document.
func ReadSummary(path string) (*Summary, error) { return summary.Read(path) }

// ParseSummary is ReadSummary on bytes.
func ParseSummary(b []byte) (*Summary, error) { return summary.Parse(b) }

// NewHistogram returns an empty latency histogram (µs) of the geometry every
// driver and MergeHDR use.
func NewHistogram() *hdrhistogram.Histogram { return summary.NewHistogram() }

// EncodeHDR renders h as the Summary's HDR field.
func EncodeHDR(h *hdrhistogram.Histogram) (string, error) { return summary.EncodeHDR(h) }

// DecodeHDR reads a Summary's HDR field; nil for "".
func DecodeHDR(s string) (*hdrhistogram.Histogram, error) { return summary.DecodeHDR(s) }

// MergeHDR adds the histograms of several summaries (see summary.MergeHDR).
func MergeHDR(sums ...*Summary) (*hdrhistogram.Histogram, error) { return summary.MergeHDR(sums...) }

// LatencyOf summarises a latency histogram (µs).
func LatencyOf(h *hdrhistogram.Histogram) LatencyMs { return summary.LatencyOf(h) }

// PercentilesOf is h's percentile curve, ending at the maximum.
func PercentilesOf(h *hdrhistogram.Histogram) [][2]float64 { return summary.PercentilesOf(h) }

// recordUs adds one latency, clamped into the histogram's range.
func recordUs(h *hdrhistogram.Histogram, d time.Duration) {
	us := max(int64(d/time.Microsecond), summary.HistMinUs)
	_ = h.RecordValue(min(us, summary.HistMaxUs)) // in range: cannot fail
}

// ms turns a histogram value (µs) into milliseconds.
func ms(us int64) float64 { return float64(us) / 1000 }
