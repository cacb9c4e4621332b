package capacity

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/summary"
)

// How the study reads a run it made: the parts of its engine (package
// run) that are functions of a run's record alone.
// Judge is a run's point of the curve: met the objective or not, and
// whether the driver offered the rate at all.
func Judge(slo SLO, rec *record.Run) CapPoint {
	pt := CapPoint{Workload: rec.Workload, Driver: rec.Driver, Mode: rec.Mode, Block: rec.Rep, Rate: rec.Level, RunID: rec.ID}
	pt.Pass, pt.Why = slo.Verdict(float64(rec.Level), rec.Result)
	if rec.Failed() {
		pt.Pass, pt.Why = false, "the run failed: "+strings.Join(rec.Problems, "; ")
	}
	if rec.Result != nil && rec.Result.Dropped > 0 && rec.Derived.Class == record.ClassLoadBound {
		pt.Beyond = fmt.Sprintf("%s dropped %d calls using %.0f%% of its CPUs", rec.Driver, rec.Result.Dropped, 100*rec.Derived.DriverUtil)
	}
	return pt
}

// Recovery is the time from the start of the phase after an overload to
// the start of the first interval from which on every interval with calls
// met the objective's latency bound (its p99; the timeline has p50 and p99
// only, so an objective on another percentile is read at p99, the stricter
// for p50 to p95). ok false when the last interval did not.
func Recovery(slo SLO, s *summary.Summary) (float64, bool) {
	if s == nil || len(s.Timeline) == 0 {
		return 0, false
	}
	bound := slo.BoundMs()
	from := -1
	for i, p := range s.Timeline {
		switch {
		case p.Calls == 0:
		case p.P99Ms <= bound:
			if from < 0 {
				from = i
			}
		default:
			from = -1
		}
	}
	if from < 0 {
		return 0, false
	}
	return s.Timeline[from].StartS, true
}
