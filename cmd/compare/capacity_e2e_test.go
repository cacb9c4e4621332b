package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/capacity"
	"github.com/locklab/locklab/internal/lab/record"
)

// TestCapacityEndToEnd runs a small capacity study against the real server
// and Go driver: the floor sets the objective (in meta.json and the
// report), the search runs every design at the rate, and the overload phase
// passes the tap's bound (-max-calls) to a real server, whose invariants
// hold over both phases.
func TestCapacityEndToEnd(t *testing.T) {
	server, _, loadBin := binaries(t)
	out := t.TempDir()
	cmd, err := parseFlags([]string{
		"-study", "capacity", "-modes", "inputQ,noop", "-baseline", "inputQ", "-rates", "300", "-reps", "1", "-refine", "0", "-seed", "7",
		"-duration", "1s", "-warmup", "200ms", "-overload-for", "500ms", "-recover-for", "500ms", "-policies", "max-calls",
		// A loose objective, so that the design passes and the overload
		// phase runs; tests run beside each other, so nothing is spoiled.
		"-floor-multiple", "20", "-max-foreign", "100%",
		"-server", server, "-load", loadBin, "-out", out,
	}, os.Stderr)
	require.NoError(t, err)
	cmd.cfg.Command = "compare -study capacity (test)"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var progress strings.Builder
	require.NoError(t, cmd.run(ctx, &progress, &progress), progress.String())
	assert.Contains(t, progress.String(), "objective: p99<=")

	meta, err := record.LoadMeta(os.DirFS(out))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(meta.Objective, "p99<="), meta.Objective)
	assert.Contains(t, meta.ObjectiveFrom, "-floor-multiple")
	c, ok, err := capacity.LoadCapacity(os.DirFS(out))
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, c.Floors, 1)
	assert.Equal(t, meta.Objective, c.SLO)
	slo, err := capacity.ParseSLO(c.SLO)
	require.NoError(t, err)
	// The floor times the multiple, rounded up to a tenth of a millisecond
	// less a hair (capacity.FloorObjective): 117.1 stays 117.1 when the product
	// reads 117.10000000000001.
	want := 20 * c.Floors[0].P99Ms
	assert.GreaterOrEqual(t, slo.BoundMs(), want-1e-6, "the objective is the floor times the multiple")
	assert.Less(t, slo.BoundMs(), want+0.1, "rounded up by less than a tenth of a millisecond")

	var overloads int
	for _, o := range c.Overruns {
		if o.NA != "" {
			continue
		}
		overloads++
		assert.Equal(t, "max-calls", o.Policy)
		assert.Positive(t, o.Bound)
		assert.Empty(t, o.Spoiled)
	}
	assert.Equal(t, 1, overloads, "inputQ under the tap's bound in the one block")
	records, err := record.Load(os.DirFS(out))
	require.NoError(t, err)
	for _, r := range records {
		assert.Empty(t, r.Problems, r.ID)
		for _, ch := range r.Checks {
			assert.True(t, ch.OK, "%s: %s %s", r.ID, ch.Name, ch.Detail)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "The objective's bound comes from the harness's floor")
	assert.Contains(t, string(md), "| counter | inputQ | max-calls |")
}
