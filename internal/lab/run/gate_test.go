package run

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/cpuset"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
	"github.com/locklab/locklab/summary"
)

// writeProcStat writes a /proc/stat of two CPUs, in the kernel's ticks
// (USER_HZ = 100): busy and idle ticks per CPU.
func writeProcStat(t *testing.T, dir string, busy0, idle0, busy1, idle1 int) procfs.FS {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	stat := fmt.Sprintf("cpu  %d 0 0 %d 0 0 0 0 0 0\ncpu0 %d 0 0 %d 0 0 0 0 0 0\ncpu1 %d 0 0 %d 0 0 0 0 0 0\n"+
		"intr 0\nctxt 1000\nbtime 1700000000\nprocesses 100\nprocs_running 1\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n",
		busy0+busy1, idle0+idle1, busy0, idle0, busy1, idle1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644))
	fs, err := procfs.NewFS(dir)
	require.NoError(t, err)
	return fs
}

// gateProcs is fakeProcs whose measured runs also read two fake /proc/stat
// snapshots a second apart: the server's CPU 0 busy for the server's 0.95
// s plus whatever foreign(job) says something else took, the driver's CPU
// 1 for its 0.2 s.
type gateProcs struct {
	fakeProcs
	t       *testing.T
	foreign func(job Job) float64
	n       int
}

func (p *gateProcs) drive(ctx context.Context, cfg Config, d Driver, job Job, pid int) (*summary.Summary, DriverRun, error) {
	res, run, err := p.fakeProcs.drive(ctx, cfg, d, job, pid)
	if err != nil || job.Warmup {
		return res, run, err
	}
	p.n++
	dir := p.t.TempDir()
	f := int(100 * p.foreign(job))
	a := writeProcStat(p.t, filepath.Join(dir, "a"), 1000, 1000, 1000, 1000)
	b := writeProcStat(p.t, filepath.Join(dir, "b"), 1000+95+f, 1000+5-f, 1000+20, 1000+80)
	ca, err := cpuset.Read(a)
	require.NoError(p.t, err)
	cb, err := cpuset.Read(b)
	require.NoError(p.t, err)
	run.ServerSet = cb.Set(job.Place.Server).Minus(ca.Set(job.Place.Server))
	run.DriverSet = cb.Set(job.Place.Driver).Minus(ca.Set(job.Place.Driver))
	return res, run, nil
}

// TestGateRerunsOrDropsExactlyTheSpoiledCell: of four blocks, block 2's
// first attempt ran beside another process (its inputQ run lost 30% of the
// server's CPU) and its second attempt was clean; block 3 was busy every
// time. The runner reruns block 2's cell once and block 3's until -reruns
// runs out, keeps every attempt's records, and the report analyses blocks
// 1, 2 (its second attempt) and 4. The control, a clean machine, reruns
// nothing.
func TestGateRerunsOrDropsExactlyTheSpoiledCell(t *testing.T) {
	cfg := testConfig(t, func(o *Options) {
		o.Workloads, o.Modes, o.Drivers, o.VUs, o.Reps = "counter", "mutex,inputQ", "go", "10", 4
		o.AA, o.Reruns = false, 2
	})
	cfg.Duration, cfg.Warmup = time.Second, 0
	specs := layout(cfg)
	require.Len(t, specs, 8)
	busy := func(job Job) float64 {
		switch {
		case job.Spec.Rep == 2 && job.Spec.Attempt <= 1 && job.Spec.Mode == "inputQ":
			return 0.30
		case job.Spec.Rep == 3:
			return 0.20
		}
		return 0.01
	}
	for _, tt := range []struct {
		name           string
		foreign        func(Job) float64
		runs           int
		rerun, dropped int
		kept           map[int]int // block → attempt the report analyses
	}{
		{name: "spoiled blocks", foreign: busy, runs: 8 + 2 + 2*2, rerun: 2, dropped: 1, kept: map[int]int{1: 1, 2: 2, 4: 1}},
		{name: "control: a quiet machine", foreign: func(Job) float64 { return 0.01 }, runs: 8, kept: map[int]int{1: 1, 2: 1, 3: 1, 4: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := cfg
			cfg.Out = t.TempDir()
			p := &gateProcs{fakeProcs: fakeProcs{admin: &fakeAdmin{}, applied: 500, acked: 500}, t: t, foreign: tt.foreign}
			runs, err := runPlan(t.Context(), cfg, p, specs, new(nopWriter))
			require.NoError(t, err)
			assert.Len(t, runs, tt.runs, "every attempt ran")
			files, err := filepath.Glob(filepath.Join(cfg.Out, "runs", "*.json"))
			require.NoError(t, err)
			assert.Len(t, files, tt.runs, "every attempt's record is kept")
			for _, r := range runs {
				if r.Rep == 2 && r.Mode == "inputQ" && r.Attempt <= 1 && tt.rerun > 0 {
					assert.InDelta(t, 0.30, r.Derived.Foreign, 0.01, "the record measures the foreign CPU")
					assert.NotEmpty(t, cfg.Gate.Spoils(r))
				}
			}
			meta := newMeta(cfg, nil)
			kept := map[int]int{}
			rep, err := report.New(meta, runs)
			require.NoError(t, err)
			for _, g := range rep.Groups {
				for _, id := range g.Runs {
					for _, r := range runs {
						if r.ID == id {
							kept[r.Rep] = max(r.Attempt, 1)
						}
					}
				}
			}
			assert.Equal(t, tt.kept, kept)
			reread, err := record.Load(os.DirFS(cfg.Out))
			require.NoError(t, err)
			assert.Len(t, reread, tt.runs)
		})
	}
}

// lockedBuffer is a buffer a goroutine may write while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex // protects b
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type nopWriter struct{}

func (*nopWriter) Write(b []byte) (int, error) { return len(b), nil }

// TestCellsFollowTheLayout: the gate reruns what the analysis pairs — one
// workload, driver, factor combination and level of one block, every arm.
func TestCellsFollowTheLayout(t *testing.T) {
	cfg := testConfig(t, func(o *Options) { o.Reps, o.AA = 2, true })
	specs := layout(cfg)
	cs := cells(specs)
	assert.Len(t, cs, 2*5, "five groups in each of two blocks")
	for _, c := range cs {
		assert.Len(t, c, len(cfg.Modes)+1, "every mode and the A/A twin")
		twins := 0
		for _, s := range c {
			assert.Equal(t, c[0].Cell(), s.Cell())
			if s.Twin {
				twins++
				assert.Equal(t, cfg.Baseline, s.Mode)
				assert.Contains(t, s.ID, "-aa")
			}
		}
		assert.Equal(t, 1, twins)
	}
	r := specs[0].Retry()
	assert.Equal(t, 2, r.Attempt)
	assert.Equal(t, specs[0].ID+"-try2", r.ID)
	assert.Equal(t, specs[0].ID+"-try3", r.Retry().ID)
	assert.Equal(t, specs[0].Cell(), r.Cell(), "an attempt is the same cell")
}

// TestLabLockWaits: a second runner waits for the first and says so; it
// starts once the first lets go.
func TestLabLockWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	release, err := labLock(t.Context(), path, new(nopWriter))
	require.NoError(t, err)
	var said lockedBuffer
	got := make(chan func(), 1)
	go func() {
		r, err := labLock(context.Background(), path, &said)
		assert.NoError(t, err)
		got <- r
	}()
	select {
	case <-got:
		t.Fatal("the second runner did not wait for the first")
	case <-time.After(200 * time.Millisecond):
	}
	assert.Contains(t, said.String(), "waiting for another locklab runner")
	release()
	select {
	case r := <-got:
		r()
	case <-time.After(5 * time.Second):
		t.Fatal("the second runner never started")
	}
	// A waiting runner that is cancelled gives up.
	release, err = labLock(t.Context(), path, new(nopWriter))
	require.NoError(t, err)
	defer release()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err = labLock(ctx, path, new(nopWriter))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

// TestQuietCheck reads the machine's sets without running anything.
func TestQuietCheck(t *testing.T) {
	fs, err := procfs.NewDefaultFS()
	require.NoError(t, err)
	s, d, err := quietCheck(t.Context(), fs, []int{0}, []int{1}, 50*time.Millisecond)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, s, 0.0)
	assert.LessOrEqual(t, s, 1.0)
	assert.GreaterOrEqual(t, d, 0.0)
	assert.LessOrEqual(t, d, 1.0)
}

var _ = plan.TwinSuffix

// TestSecondStageAddsBlocksOnce: -precision sizes the plan from the first
// stage's widest primary interval and runs the added blocks once, numbered
// after the first stage's runs; a target already met adds none (the
// control).
func TestSecondStageAddsBlocksOnce(t *testing.T) {
	for _, tt := range []struct {
		name      string
		precision string
		added     int
	}{
		{name: "too wide: up to -max-blocks", precision: "0.01%", added: 3},
		{name: "control: already precise enough", precision: "40%", added: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t, func(o *Options) {
				o.Workloads, o.Modes, o.Drivers, o.VUs, o.Reps = "counter", "mutex,inputQ", "go", "10", 5
				o.Precision, o.MaxBlocks = tt.precision, 8
			})
			cfg.Duration, cfg.Warmup, cfg.Out = time.Second, 0, t.TempDir()
			// The fake driver's calls differ from block to block, so the
			// first stage's intervals have a width to size.
			p := &gateProcs{fakeProcs: fakeProcs{admin: &fakeAdmin{}, applied: 500, acked: 500}, t: t, foreign: func(Job) float64 { return 0.01 }}
			specs := layout(cfg)
			meta := newMeta(cfg, nil)
			runs, err := runPlan(t.Context(), cfg, p, specs, new(nopWriter))
			require.NoError(t, err)
			for i, r := range runs {
				r.Derived.CallsPerSec *= 1 + 0.05*float64(i%3)
			}
			more, err := secondStage(t.Context(), cfg, p, testCatalog(), &meta, specs, runs, new(nopWriter))
			require.NoError(t, err)
			assert.Len(t, more, tt.added*len(cfg.Modes))
			assert.Equal(t, tt.added, meta.Gate.Added)
			for i, r := range more {
				assert.Greater(t, r.Rep, cfg.Reps, "only new blocks: %s", r.ID)
				assert.Equal(t, len(specs)+1+i, r.Index, "numbered after the first stage")
			}
		})
	}
}
