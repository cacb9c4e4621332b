package run

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/summary"
)

// doorProcs is fakeProcs as an engine outside the package sees it: through
// Procs and Server, the doors engine.go opens.
type doorProcs struct{ *fakeProcs }

func (d doorProcs) StartServer(cfg Config, bin string, args []string, cpus []int, logPath string) (Server, error) {
	s, err := d.startServer(cfg, bin, args, cpus, logPath)
	if err != nil {
		return nil, err
	}
	return outer{s}, nil
}

func (d doorProcs) Drive(ctx context.Context, cfg Config, dr Driver, job Job, pid int) (*summary.Summary, DriverRun, error) {
	return d.drive(ctx, cfg, dr, job, pid)
}

// TestRunOneThroughTheDoors: a run through RunOne and an outside Procs is
// the run runOne makes through the seam itself, the same record bar its
// times; the control, increments acknowledged but not applied, fails
// through the doors as it does inside, so the doors pass the fakes'
// figures on rather than their own.
func TestRunOneThroughTheDoors(t *testing.T) {
	cfg := testConfig(t, func(o *Options) {
		o.Workloads, o.Modes, o.Drivers, o.VUs, o.Reps = "counter", "mutex", "go", "10", 1
	})
	spec := layout(cfg)[0]
	for _, applied := range []int64{500, 499} {
		inside := &fakeProcs{admin: &fakeAdmin{}, applied: applied, acked: 500}
		want, err := runOne(t.Context(), cfg, inside, spec, t.TempDir())
		require.NoError(t, err)
		door := &fakeProcs{admin: &fakeAdmin{}, applied: applied, acked: 500}
		got, err := RunOne(t.Context(), cfg, doorProcs{door}, spec, t.TempDir())
		require.NoError(t, err)
		assert.Equal(t, inside.args, door.args, "the same server flags")
		assert.Len(t, door.jobs, len(inside.jobs), "the warm-up and the measured run")
		assert.Equal(t, 1, door.admin.resets)
		assert.Equal(t, want.Problems, got.Problems)
		assert.Equal(t, want.Checks, got.Checks)
		assert.Equal(t, applied != 500, got.Failed(), "applied %d of 500", applied)
	}
}

// TestStartServerTakesTheRunsFlags: StartServer gives the server the run's
// own flags with an engine's after them, on the CPUs the run's factors
// place it on, and hands back a server the engine stops; the control is
// the same spec with no extra flags, whose server gets none.
func TestStartServerTakesTheRunsFlags(t *testing.T) {
	cfg := testConfig(t, func(o *Options) {
		o.Workloads, o.Modes, o.Drivers, o.VUs, o.Reps = "counter", "mutex", "go", "10", 1
	})
	spec := layout(cfg)[0]
	for _, extra := range [][]string{{"-max-calls", "10"}, nil} {
		p := &fakeProcs{admin: &fakeAdmin{}}
		dataDir := t.TempDir()
		srv, place, err := StartServer(cfg, doorProcs{p}, spec, dataDir, extra, "")
		require.NoError(t, err)
		assert.Equal(t, append(serverArgs(spec, dataDir, ""), extra...), p.args)
		assert.Equal(t, spec.Factors.Place(cfg.base()), place)
		assert.NotEmpty(t, srv.Address())
		code, _ := srv.Stop()
		assert.Zero(t, code)
	}
}

// TestMachineIsTheProcesses: the machine's Procs reaches runOne as the
// processes it always ran, not through an adapter.
func TestMachineIsTheProcesses(t *testing.T) {
	assert.Equal(t, procs(processes{}), inner(Machine()))
	assert.IsType(t, innerProcs{}, inner(doorProcs{&fakeProcs{}}), "the control: any other Procs is adapted")
}
