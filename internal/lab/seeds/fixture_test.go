package seeds

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/server"
	"github.com/locklab/locklab/summary"
)

// -update rewrites the golden files from what the code renders now; read
// the diff before committing it.
var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// fx is one fixture run: what the renderers read of a record.
type fx struct {
	id, mode, workload, driver string
	level                      int
	calls                      int64
	seconds                    float64
	serverUtil, driverUtil     float64 // of their one CPU each
	lat                        summary.LatencyMs
	kase                       string
	refusals, unexpected       int64
	perSecond                  []int64
	k6                         *summary.K6Details
	problems                   []string
	cache                      string // "": the bank in memory; else over a database with this -cache
}

// run builds the record, with the server's stats and both processes' CPU
// use, and derives its figures and class as record.Load would.
func (f fx) run(t *testing.T, index int) *record.Run {
	t.Helper()
	w, ok := plan.LookupWorkload(f.workload)
	require.True(t, ok, f.workload)
	res := &summary.Summary{Schema: summary.Schema, Driver: f.driver, Workload: w.Kind, Scenario: w.Scenario, Model: "closed",
		Callers: f.level, DurationS: f.seconds, Calls: f.calls, CallsPerS: float64(f.calls) / f.seconds,
		OK: f.calls - f.refusals - f.unexpected, ExpectedRefusals: f.refusals, UnexpectedErrors: f.unexpected,
		LatencyMs: f.lat, PerSecond: f.perSecond, K6: f.k6}
	if f.kase != "" {
		res.ByCase = map[string]summary.CaseStats{f.kase: {Count: f.calls}}
	}
	stats, err := protojson.Marshal(&locklabv1.GetStatsResponse{Mode: f.mode, StoreBacked: true, Requests: uint64(f.calls),
		CpuSeconds: f.serverUtil * f.seconds, WindowSeconds: f.seconds})
	require.NoError(t, err)
	pt := plan.DefaultPoint()
	if f.cache != "" {
		pt = pt.With(plan.Backend, server.BackendMySQL).With(plan.Cache, f.cache)
	}
	r := &record.Run{
		Spec: plan.Spec{Index: index, ID: f.id, Workload: f.workload, Scenario: w.Scenario, Driver: f.driver, Mode: f.mode,
			Model: "closed", Level: f.level, Rep: 1, Factors: pt},
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Result: res, Stats: stats, Problems: f.problems,
		ServerProc: record.ProcUsage{CPUs: []int{0}, CPUSeconds: f.serverUtil * f.seconds, WallSeconds: f.seconds},
		DriverProc: record.ProcUsage{CPUs: []int{1}, CPUSeconds: f.driverUtil * f.seconds, WallSeconds: f.seconds},
	}
	r.Derived, err = record.Derive(r)
	require.NoError(t, err)
	return r
}

func runs(t *testing.T, fxs ...fx) []*record.Run {
	out := make([]*record.Run, len(fxs))
	for i, f := range fxs {
		out[i] = f.run(t, i+1)
	}
	return out
}

var fixtureMeta = record.Meta{Command: "make seed-x", CPUs: 2, ServerCPUs: []int{0}, DriverCPUs: []int{1},
	Duration: "5s", Warmup: "1s", Reps: 1, Conns: 4}

// golden compares got with testdata/name.golden (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./internal/lab/seeds -update once to create it")
	assert.Equal(t, string(want), got, "%s differs: if the change is meant, go test ./internal/lab/seeds -update", path)
}
