package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/locklab/locklab/internal/lab/cpuset"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
)

// cells cuts a block-ordered plan into its cells: the runs of one
// workload, driver, factor combination and level in one block, which the
// analysis compares with each other and the gate reruns together. Layout
// puts them next to each other.
func cells(specs []plan.Spec) [][]plan.Spec {
	var out [][]plan.Spec
	for i, s := range specs {
		if i == 0 || s.Cell() != specs[i-1].Cell() {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], s)
	}
	return out
}

// gateTally counts what the gate did.
type gateTally struct {
	cells, rerun, dropped, spoiledRuns int
}

func (t gateTally) String() string {
	return fmt.Sprintf("%d of %d block cells spoiled by foreign CPU and rerun, %d dropped after every rerun (%d spoiled runs)",
		t.rerun, t.cells, t.dropped, t.spoiledRuns)
}

// runCells runs every cell of the plan through the gate: a cell with a
// spoiled run runs again, every run of it, in the same order, up to
// Gate.Reruns more times; every attempt's records are kept. Progress goes
// to out.
func runCells(ctx context.Context, cfg Config, p procs, specs []plan.Spec, runsDir string, out io.Writer, tally *gateTally, start time.Time, planned int, done *int) ([]*record.Run, error) {
	var runs []*record.Run
	for _, cell := range cells(specs) {
		tally.cells++
		for attempt := 0; ; attempt++ {
			var why []string
			for _, spec := range cell {
				rec, err := runOne(ctx, cfg, p, spec, runsDir)
				if err != nil {
					return runs, fmt.Errorf("run %s: %w", spec.ID, err)
				}
				if err := record.WriteJSON(filepath.Join(runsDir, spec.ID+".json"), rec); err != nil {
					return runs, err
				}
				runs = append(runs, rec)
				*done++
				elapsed := time.Since(start)
				left := time.Duration(float64(elapsed) / float64(*done) * float64(max(0, planned-*done)))
				line := headline(rec)
				if w := cfg.Gate.Spoils(rec); w != "" {
					line += ", SPOILED: " + w
					why = append(why, spec.ID+": "+w)
					tally.spoiledRuns++
				}
				fmt.Fprintf(out, "[%d/%d] %s\n        %s | elapsed %s, about %s left\n",
					*done, planned, spec.ID, line, elapsed.Round(time.Second), left.Round(time.Second))
			}
			if len(why) == 0 {
				break
			}
			if attempt == 0 {
				tally.rerun++
			}
			if attempt >= cfg.Gate.Reruns {
				tally.dropped++
				fmt.Fprintf(out, "gate: block %d's cell dropped after %d attempts (%s)\n", cell[0].Rep, attempt+1, strings.Join(why, "; "))
				break
			}
			fmt.Fprintf(out, "gate: block %d's cell runs again (%s)\n", cell[0].Rep, strings.Join(why, "; "))
			for i := range cell {
				cell[i] = cell[i].Retry()
			}
			planned += len(cell)
		}
	}
	return runs, nil
}

// quietCheck reads the machine's CPU sets over d while the lab runs
// nothing of its own: how busy the machine is before the first block.
// The runner's own CPU over the same time is taken out.
func quietCheck(ctx context.Context, fs procfs.FS, server, driver []int, d time.Duration) (srv, drv float64, err error) {
	a, err := cpuset.Read(fs)
	if err != nil {
		return 0, 0, err
	}
	self0, _ := procCPUSeconds(os.Getpid())
	select {
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	case <-time.After(d):
	}
	b, err := cpuset.Read(fs)
	if err != nil {
		return 0, 0, err
	}
	self1, _ := procCPUSeconds(os.Getpid())
	self := self1 - self0
	s, dr := b.Set(server).Minus(a.Set(server)), b.Set(driver).Minus(a.Set(driver))
	// The runner is not pinned: its own CPU is taken from the set that
	// showed more, a bound on its share either way.
	if s.Foreign(0) >= dr.Foreign(0) {
		return s.Foreign(self), dr.Foreign(0), nil
	}
	return s.Foreign(0), dr.Foreign(self), nil
}

// checkQuiet watches the machine before the first block (quietCheck),
// records what it saw in g and says so; a busy machine is warned of.
func checkQuiet(ctx context.Context, cfg Config, g *record.Gate, out, warn io.Writer) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return
	}
	base := cfg.base()
	if g.QuietServer, g.QuietDriver, err = quietCheck(ctx, fs, base.Server, base.Driver, quietFor); err != nil {
		return
	}
	g.QuietSeconds = quietFor.Seconds()
	fmt.Fprintf(out, "machine before the first block: something else kept the server's CPUs %.0f%% and the driver's %.0f%% busy over %s (the gate spoils a run over %.0f%%)\n",
		100*g.QuietServer, 100*g.QuietDriver, quietFor, 100*g.MaxForeign)
	if max(g.QuietServer, g.QuietDriver) > g.MaxForeign {
		fmt.Fprintln(warn, "warning: the machine is busy with something else; runs beside it will be spoiled and rerun, and the report may withhold its verdicts")
	}
}

// lockPoll is how often a waiting runner tries the lock again.
const lockPoll = 100 * time.Millisecond

// lockPath is the machine's one-lab-at-a-time lock file.
func lockPath() string {
	return filepath.Join(os.TempDir(), "locklab.lock")
}

// labLock takes the machine's lab lock, as perflock does: a second runner
// on the same machine waits for the first, saying so, since two at once
// would measure each other. The lock is the kernel's (flock), so it goes
// with the process however it ends. The release function drops it.
func labLock(ctx context.Context, path string, out io.Writer) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("lab lock %s: %w", path, err)
	}
	release = func() { f.Close() } // closing the last descriptor releases the flock
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		writeHolder(f)
		return release, nil
	}
	holder, _ := os.ReadFile(path)
	fmt.Fprintf(out, "waiting for another locklab runner to finish (%s holds %s): two on one machine would measure each other\n",
		cmp.Or(strings.TrimSpace(string(holder)), "a process"), path)
	// Polled, not a blocking flock, so that the wait ends with ctx.
	tick := time.NewTicker(lockPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-tick.C:
		}
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lab lock %s: %w", path, err)
		}
	}
	fmt.Fprintln(out, "the other runner finished; starting")
	writeHolder(f)
	return release, nil
}

func writeHolder(f *os.File) {
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(fmt.Sprintf("pid %d (%s)\n", os.Getpid(), strings.Join(os.Args, " "))), 0)
}

// addedReps is the plan's blocks from first+1 to last, numbered after the
// runs already laid out (next is the first index to give).
func addedReps(specs []plan.Spec, first, last, next int) []plan.Spec {
	var out []plan.Spec
	for _, s := range specs {
		if s.Rep > first && s.Rep <= last {
			out = append(out, s.Renumbered(next+len(out)))
		}
	}
	return out
}
