package load

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/locklab/locklab/summary"
)

// recordUs adds one latency, clamped into the histogram's range.
func recordUs(h *hdrhistogram.Histogram, d time.Duration) {
	us := max(int64(d/time.Microsecond), summary.HistMinUs)
	_ = h.RecordValue(min(us, summary.HistMaxUs)) // in range: cannot fail
}

// ms turns a histogram value (µs) into milliseconds.
func ms(us int64) float64 { return float64(us) / 1000 }
