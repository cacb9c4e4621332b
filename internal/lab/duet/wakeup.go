package duet

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// WakeupCost is what one wake-up cost a server, read from the A/A pair.
// The twin and the baseline run the same code on the same calls, so in a
// round the twin's CPU per call can differ from the baseline's only by how
// its work was split and by the process's own luck. Regressing the one
// difference on the other's wake-ups per call, round by round, gives the
// CPU a wake-up cost (the slope) and the share of the pair's spread in CPU
// per call that the wake-ups account for (R²): the part of the A/A floor
// that a machine whose context switches cost less would not have.
type WakeupCost struct {
	// PerWakeup is the slope, in seconds of server CPU a wake-up; Lo and
	// Hi its 95% interval.
	PerWakeup, Lo, Hi float64
	// R2 is the share of the differences' variance the fit explains.
	R2 float64
	// N is the rounds the fit used.
	N int
}

// minWakeupRounds is the fewest rounds a fit is made from.
const minWakeupRounds = 6

// fitWakeupCost fits dc (the twin's CPU per call less the baseline's, in
// seconds) on dw (its wake-ups per call less the baseline's) by least
// squares, with the slope's 1−alpha interval; false where the rounds are
// too few or the wake-ups did not vary.
func fitWakeupCost(dw, dc []float64, alpha float64) (WakeupCost, bool) {
	n := len(dw)
	if n < minWakeupRounds || n != len(dc) {
		return WakeupCost{}, false
	}
	// The sums of squares, from the variances the fit reads: the spread of
	// the wake-ups, and what the fit leaves of the CPU's.
	sxx := stat.Variance(dw, nil) * float64(n-1)
	if sxx == 0 {
		return WakeupCost{}, false
	}
	a, b := stat.LinearRegression(dw, dc, nil, false)
	r2 := stat.RSquared(dw, dc, nil, a, b)
	ssr := (1 - r2) * stat.Variance(dc, nil) * float64(n-1)
	se := math.Sqrt(ssr / float64(n-2) / sxx)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 2)}.Quantile(1 - alpha/2)
	return WakeupCost{PerWakeup: b, Lo: b - t*se, Hi: b + t*se, R2: r2, N: n}, true
}
