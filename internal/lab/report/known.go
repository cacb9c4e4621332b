package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
)

// KnownSpin is the known answer measured isolated: a design with the
// call work's spin (plan.CallWork, an arm factor) against itself at the
// first value the plan swept, from the same blocks, on server CPU per
// call. The spin is outside every store and timed by the clock, so the CPU
// it adds to a call is its length: True, beside the measured Diff.
type KnownSpin struct {
	Cell Cell
	Mode string
	// True and Diff are in µs, Diff paired by block (its t interval).
	True float64
	Diff paired.Difference
}

// Inside says whether the true value lies in the measured interval.
func (k KnownSpin) Inside() bool { return k.Diff.Lo <= k.True && k.True <= k.Diff.Hi }

// knownSpins are every design's known answers where the plan swept the
// call work; none where it did not, or where a pair has fewer than 3
// blocks.
func (rep *Report) knownSpins() ([]KnownSpin, error) {
	vals := rep.Meta.Factors.Values(plan.CallWork)
	if len(vals) < 2 {
		return nil, nil
	}
	first, err := spinOf(vals[0])
	if err != nil {
		return nil, err
	}
	var out []KnownSpin
	for _, c := range rep.cells() {
		v := c.Factors.Get(plan.CallWork)
		if v == vals[0] {
			continue
		}
		spin, err := spinOf(v)
		if err != nil {
			return nil, err
		}
		base := c
		base.Factors = c.Factors.With(plan.CallWork, vals[0])
		for _, mode := range rep.Meta.Modes {
			d, a := rep.group(c.Section, c.Level, mode), rep.group(base.Section, base.Level, mode)
			if d == nil || a == nil {
				continue
			}
			dv, av, err := blockValues(d, a, mServerCPUPerCall)
			if err != nil {
				return nil, err
			}
			if len(dv) < 3 {
				continue
			}
			diffs, err := paired.Differences(dv, av)
			if err != nil {
				return nil, err
			}
			e, err := paired.EstimateDifference(diffs)
			if err != nil {
				return nil, err
			}
			out = append(out, KnownSpin{Cell: c, Mode: mode, True: float64(spin-first) / float64(time.Microsecond), Diff: e})
		}
	}
	return out, nil
}

// spinOf reads a call-work value.
func spinOf(v string) (time.Duration, error) {
	if v == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("report: call work %q: %w", v, err)
	}
	return d, nil
}

// knownSentence is the headline's paragraph on the known answers, "" for
// a plan without them.
func (rep *Report) knownSentence() (string, error) {
	ks, err := rep.knownSpins()
	if err != nil || len(ks) == 0 {
		return "", err
	}
	var parts []string
	inside := 0
	for _, k := range ks {
		where := "outside"
		if k.Inside() {
			where, inside = "inside", inside+1
		}
		parts = append(parts, fmt.Sprintf("%s, %s: %+.2f µs [%+.2f, %+.2f] (true %+.2f µs, %s)",
			rep.cellName(k.Cell), k.Mode, k.Diff.Mean, k.Diff.Lo, k.Diff.Hi, k.True, where))
	}
	return fmt.Sprintf("The known answer, isolated: each design with the call work's spin against itself without it, in the same blocks, "+
		"the server CPU it added to a call (mean of the per-block differences, 95%% t interval), beside the spin's length; inside in %d of %d: %s.",
		inside, len(ks), strings.Join(parts, "; ")), nil
}
