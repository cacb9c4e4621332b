package paired

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
)

// Differences returns the per-block differences treatment[i] − baseline[i],
// for a metric whose ratio means nothing because either side can be zero or
// near it (a category of CPU a design does not use, such as the channels of
// a lock design). The slices are indexed by block and must be equally long;
// every value must be finite (zero and negative values are allowed).
func Differences(treatment, baseline []float64) ([]float64, error) {
	if len(treatment) != len(baseline) {
		return nil, fmt.Errorf("paired: %d treatment blocks but %d baseline blocks; want one of each per block", len(treatment), len(baseline))
	}
	if len(treatment) == 0 {
		return nil, errNoValues
	}
	d := make([]float64, len(treatment))
	for i := range treatment {
		t, b := treatment[i], baseline[i]
		if !finite(t) || !finite(b) {
			return nil, fmt.Errorf("paired: block %d has treatment %v and baseline %v; want finite values", i, t, b)
		}
		d[i] = t - b
	}
	return d, nil
}

func finite(x float64) bool { return !math.IsInf(x, 0) && !math.IsNaN(x) }

// Difference is the size of a design's effect over the blocks on the
// difference scale (0 is no effect, in the metric's own unit).
type Difference struct {
	// N is the number of blocks.
	N int
	// Mean is the mean difference; Lo and Hi bound its Confidence-level t
	// interval. With one block the interval is unbounded: −Inf, +Inf.
	Mean, Lo, Hi float64
	// Median is the median difference (the mean of the middle two for
	// even N).
	Median float64
	// SD is the sample standard deviation of the differences: the noise
	// left between blocks after pairing. Zero with one block.
	SD float64
}

// EstimateDifference computes the effect of per-block differences (see
// Differences). The interval assumes the differences are independent and
// roughly normal, as Estimate does of log ratios; the mean is additive, so
// the mean differences of parts add up to the mean difference of their
// sum, which is what lets a difference be split among categories.
func EstimateDifference(diffs []float64) (Difference, error) {
	return EstimateDifferenceAt(diffs, Confidence)
}

// EstimateDifferenceAt is EstimateDifference with an interval of the
// given level (0 < level < 1) instead of Confidence: one of k intervals
// read together, each at 1 − (1 − Confidence)/k, so that all of them
// hold their true values with Confidence (Bonferroni).
func EstimateDifferenceAt(diffs []float64, level float64) (Difference, error) {
	if !(level > 0 && level < 1) {
		return Difference{}, fmt.Errorf("paired: interval level %v; want one between 0 and 1", level)
	}
	if len(diffs) == 0 {
		return Difference{}, errNoValues
	}
	for i, d := range diffs {
		if !finite(d) {
			return Difference{}, fmt.Errorf("paired: difference %d is %v; want a finite value", i, d)
		}
	}
	n := len(diffs)
	e := Difference{N: n, Median: median(diffs)}
	if n == 1 {
		e.Mean, e.Lo, e.Hi = diffs[0], math.Inf(-1), math.Inf(1)
		return e, nil
	}
	mean, sd := stat.MeanStdDev(diffs, nil)
	half := tQuantile(1-(1-level)/2, n-1) * sd / math.Sqrt(float64(n))
	e.Mean, e.Lo, e.Hi, e.SD = mean, mean-half, mean+half, sd
	return e, nil
}

// Contains says whether the interval holds the difference d.
func (e Difference) Contains(d float64) bool { return e.Lo <= d && d <= e.Hi }
