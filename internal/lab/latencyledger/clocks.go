package latencyledger

import (
	"math"
	"slices"

	"github.com/locklab/locklab/internal/lab/instrumented"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
)

// The store's own clocks (store.SerialStats, through GetStats into each
// run's serial figures): the second instrument beside the ledger's trace,
// read the same way for lock and owner designs.

const clocksHowToRead = "The store's own clocks, from the same runs: how long a command waited before the design's serial " +
	"resource took it — the lock wait of a lock design (from asking for the lock to holding it), the mailbox age of an " +
	"owner design (from entering the owner's queue to the owner taking it), the time from publishing to being taken by a " +
	"combiner for combining: one quantity for every design, timed by the store itself, one command in the serial meter's " +
	"sample_every (16 unless the server was told otherwise), without a trace. The quantiles are the store's histogram's (within 1/16). The mean batch is the " +
	"commands the serial resource took in one go: an owner's run between two empty queues, inputQ-batch's group, " +
	"combining's pass; a lock takes one command per hold and has none. Each design's column is the median over its " +
	"runs with the clocks; a difference is the mean of the per-block differences with its 95% t interval. The ledger's " +
	"view is the handler's and covers the whole call; the clocks cover the store's wait alone."

// clockPart is one of the clocks' figures in a run; ok is false where the
// run does not have it (a server without the clocks, a design without a
// wait or a batch).
type clockPart struct {
	name  string
	unit  report.Unit
	value func(s *record.Serial) (float64, bool)
}

var clockParts = []clockPart{
	{"wait p50 (lock wait, mailbox age)", report.UnitUs, func(s *record.Serial) (float64, bool) { return s.WaitP50Us, s.HasWait() }},
	{"wait p99", report.UnitUs, func(s *record.Serial) (float64, bool) { return s.WaitP99Us, s.HasWait() }},
	{"wait mean", report.UnitUs, func(s *record.Serial) (float64, bool) { return s.WaitMeanUs, s.HasWait() }},
	{"mean batch (commands)", report.UnitRatio, func(s *record.Serial) (float64, bool) { return s.MeanBatch(), s.HasWait() && s.Batches > 0 }},
}

// clockOf reads a part from a run: NaN where the run lacks it, which
// pairedDifference leaves out.
func clockOf(p clockPart) func(r *record.Run) (float64, error) {
	return func(r *record.Run) (float64, error) {
		if r.Derived.Serial == nil {
			return math.NaN(), nil
		}
		v, ok := p.value(r.Derived.Serial)
		if !ok {
			return math.NaN(), nil
		}
		return v, nil
	}
}

// withClock are the runs that have a part.
func withClock(runs []*record.Run, p clockPart) []*record.Run {
	return slices.DeleteFunc(slices.Clone(runs), func(r *record.Run) bool {
		v, _ := clockOf(p)(r)
		return math.IsNaN(v)
	})
}

// clocksTable is the clocks' figures of a cell's designs, a row each, with
// the paired differences between designs that both have them; ok is false
// when no run of the cell has the clocks (records from before them).
func clocksTable(wc instrumented.CellRuns) (t report.Rows, ok bool, err error) {
	var modes []string
	for _, m := range wc.Modes {
		if len(withClock(wc.Runs[m], clockParts[0])) > 0 {
			modes = append(modes, m)
		}
	}
	if len(modes) == 0 {
		return report.Rows{}, false, nil
	}
	header := []string{"clock"}
	for _, m := range modes {
		header = append(header, m)
	}
	var pairs []report.Pair
	for _, p := range wc.Pairs {
		if slices.Contains(modes, p.Design) && slices.Contains(modes, p.Against) {
			pairs = append(pairs, p)
			header = append(header, p.Design+" − "+p.Against)
		}
	}
	t = report.Rows{Header: header}
	for _, pt := range clockParts {
		row := []string{pt.name}
		for _, m := range modes {
			s, err := instrumented.MedianOf(withClock(wc.Runs[m], pt), clockOf(pt))
			if err != nil {
				return report.Rows{}, false, err
			}
			row = append(row, report.FmtCI(s, pt.unit.Format))
		}
		for _, p := range pairs {
			e, ok, err := instrumented.PairedDifference(wc.Runs[p.Design], wc.Runs[p.Against], clockOf(pt))
			if err != nil {
				return report.Rows{}, false, err
			}
			if !ok {
				row = append(row, "—")
				continue
			}
			row = append(row, instrumented.FmtDifference(e, pt.unit))
		}
		t.Rows = append(t.Rows, row)
	}
	return t, true, nil
}
