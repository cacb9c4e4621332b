package summary_test

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/summary"
)

// Merging the histograms of two repetitions gives the percentiles of both.
func ExampleMergeHDR() {
	var reps []*summary.Summary
	for _, d := range []time.Duration{time.Millisecond, 3 * time.Millisecond} {
		h := summary.NewHistogram()
		_ = h.RecordValues(d.Microseconds(), 50)
		enc, _ := summary.EncodeHDR(h)
		reps = append(reps, &summary.Summary{HDR: enc})
	}
	h, _ := summary.MergeHDR(reps...)
	fmt.Println(h.TotalCount(), "calls, p99", summary.LatencyOf(h).P99, "ms")
	// Output: 100 calls, p99 3.001 ms
}
