package main

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/lab/duet"
	"github.com/locklab/locklab/internal/lab/run"
)

// Side by side, the rounds go on until the primaries are precise: these
// are -measure duet's defaults where the flags were not given.
const (
	// duetWindow is a round's window under the Go driver: measured for
	// the same time in three window studies, 2-s rounds gave a narrower
	// A/A floor than 1-s ones in 7 of their 10 groups (docs/methodology.md, "a
	// round's window", make study NAME=window).
	duetWindow = 2 * time.Second
	// duetH2loadWindow is the window of a group h2load drives: for the
	// same time, 4-s rounds gave the narrowest A/A floor and inputQ
	// intervals as narrow as or narrower than 1-s and 2-s ones in the
	// latest window study, and 2-s rounds narrower ones than 1-s in the
	// two before it (docs/methodology.md, "a round's window", make study
	// NAME=window).
	duetH2loadWindow = 4 * time.Second
	duetRounds       = 10
	duetPrecision    = "2%"
	// duetBudget is the side-by-side rounds' budget. Since the Go driver
	// is ended once its window is read (internal/lab/run, endMarked), a
	// Go round takes about 0.3 s less, so 5 min 30 s holds about as many
	// rounds as 6 minutes did, and make compare keeps half a minute more
	// for a fresh clone's build on a slow machine (docs/decisions.md,
	// "Every A/A floor within the precision, together").
	duetBudget = 5*time.Minute + 30*time.Second
	// duetJobBudget bounds the whole job when -started says when it began:
	// make compare promises its result within 8 minutes, its build
	// included, and a fresh clone's build took 1 to 2.6 minutes here, more
	// on a slow hour than the half minute duetBudget leaves it. The rounds'
	// budget is what is left of it, at most duetBudget; the runner's last
	// rounds and its report take seconds.
	duetJobBudget = 7*time.Minute + 40*time.Second
	// duetMostRounds is -max-blocks side by side, in -reps: each group
	// adds rounds until its own intervals are precise, so a noisy group
	// may take more than the isolated runner's three times, within the
	// time budget.
	duetMostRounds = 6
)

// duetFlags declares -measure and the duet's flags; the function it
// returns applies the duet's defaults once the flags are parsed.
func duetFlags(fs *flag.FlagSet, o *run.Options) func(given map[string]bool) error {
	fs.StringVar(&o.Measure, "measure", run.MeasureDuet, "how the arms run: "+strings.Join(run.Measures, " or ")+
		"; duet runs every arm of a group at the same moment, each server with an equal share of the server CPUs (-duet-cpu), in rounds (-reps rounds at first, "+
		duetWindow.String()+" each, "+duetH2loadWindow.String()+" under h2load, unless -duration, then each group until its own intervals reach -precision "+duetPrecision+" unless given, at most "+fmt.Sprint(duetMostRounds)+" times -reps unless -max-blocks, within -time-budget "+duetBudget.String()+"); "+
		"plans it does not apply to run isolated, and say why")
	var started int64
	fs.Int64Var(&started, "started", 0, "duet with the default -time-budget: when the job that runs the comparison started, in Unix seconds (make compare passes its own start), so that the rounds' budget is what is left of "+duetJobBudget.String()+" from then, at most "+duetBudget.String()+" (0: from the runner's start)")
	fs.DurationVar(&o.Known, "known", run.DefaultKnown, "duet: the known-answer arm, the baseline with this much spin added to every call (0: none)")
	fs.Float64Var(&o.ServerShare, "server-share", run.DefaultShare, "duet with -duet-cpu quota: the share of the server CPUs the arms' quotas add up to")
	fs.StringVar(&o.DuetCPU, "duet-cpu", run.DuetCPUs[0], "duet: how the arms share the server CPUs: "+strings.Join(run.DuetCPUs, ", ")+
		" (weight: groups of equal weight, a fair share each with no throttling, and where the flag is not given a group whose drivers cannot keep up under weights runs under quotas if they keep up there; turns: one server at a time holds them, in turns of -duet-turn, the others stopped; quota: an equal fixed quota each, -server-share of the CPUs in all; none: the control, their threads compete)")
	fs.DurationVar(&o.DuetTurn, "duet-turn", 0, "duet with -duet-cpu turns: how long each arm holds the server CPUs before the next takes them ("+run.MinTurn.String()+" to "+run.MaxTurn.String()+"; default "+run.DefaultTurn.String()+")")
	fs.StringVar(&o.DuetSched, "duet-sched", run.DuetScheds[0], "duet: how the servers' threads are scheduled: "+strings.Join(run.DuetScheds, ", ")+
		" (batch: SCHED_BATCH, a server woken by a call does not preempt another arm's on the CPU; normal: the kernel's default, a waking thread may; default batch, and normal where the plan is over a database, where batch was not measured)")
	fs.Var(sliceFlag{&o.DuetSlice}, "duet-slice", "duet: each server thread's scheduler slice, the same for every arm ("+run.MinSlice.String()+" to "+run.MaxSlice.String()+", or kernel: the kernel's own, about a millisecond; default "+run.DefaultSlice.String()+" where the kernel keeps a custom slice, Linux 6.12 or later, and the kernel's own where it does not or the plan is over a database; given, a slice the kernel does not keep is refused): a longer one switches among the arms' servers less often")
	fs.StringVar(&o.DuetMetrics, "duet-metrics", "", "duet: the metrics every comparison is judged on, of "+strings.Join(duet.MetricNames(), ", ")+
		" (default "+strings.Join(duet.DefaultMetricNames(), ",")+"); p99 is the callers' tail over each round's window")
	return func(given map[string]bool) error {
		if given["server-share"] && !(o.ServerShare > 0 && o.ServerShare <= 1) {
			return fmt.Errorf("-server-share %v: want a share in (0, 1] of the server CPUs for all arms together", o.ServerShare)
		}
		var since time.Duration
		if given["started"] {
			since = time.Since(time.Unix(started, 0))
			if started <= 0 || since < -time.Minute {
				return fmt.Errorf("-started %d: want the job's start in Unix seconds, not in the future", started)
			}
		}
		if o.Measure != run.MeasureDuet {
			return nil
		}
		if !given["duet-cpu"] {
			o.DuetCPU = "" // weight, and quotas for a group whose drivers cannot keep up under weights
		}
		if !given["duet-sched"] {
			o.DuetSched = "" // batch, and the kernel's default over a database
		}
		if !given["duration"] {
			o.Duration = duetWindow
			o.DriverWindows = map[string]time.Duration{"h2load": duetH2loadWindow}
		}
		if !given["reps"] {
			o.Reps = duetRounds
		}
		if !given["precision"] {
			o.Precision = duetPrecision
		}
		if !given["time-budget"] {
			o.TimeBudget = duetBudget
			if given["started"] {
				// At least a second: a budget of 0 would be none. The
				// first -reps rounds run whatever the budget.
				o.TimeBudget = max(time.Second, min(duetBudget, duetJobBudget-max(0, since)))
			}
		}
		if !given["max-blocks"] {
			o.MaxBlocks = min(100, duetMostRounds*o.Reps)
		}
		return nil
	}
}

// sliceFlag is -duet-slice: a duration, or kernel (or 0) for the
// kernel's own slice (run.SliceKernel); not given, run.DefaultSlice.
type sliceFlag struct{ d *time.Duration }

func (f sliceFlag) String() string {
	switch {
	case f.d == nil || *f.d == 0:
		return ""
	case *f.d == run.SliceKernel:
		return "kernel"
	}
	return f.d.String()
}

func (f sliceFlag) Set(v string) error {
	if v == "kernel" {
		*f.d = run.SliceKernel
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("want a duration or kernel")
	}
	if d == 0 {
		d = run.SliceKernel
	}
	*f.d = d
	return nil
}
