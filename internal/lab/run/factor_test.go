package run

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
	"github.com/locklab/locklab/summary"
)

// cpusFactor is a throw-away factor shaped like a server CPU count: it moves
// the server's CPU set (and so its GOMAXPROCS) and tells every program
// something, so that one row is seen to reach everything.
func cpusFactor() *plan.Factor {
	return &plan.Factor{
		Name: "test-cpus", JSON: "test_cpus", Label: "test cpus", Default: "1",
		Usage: "server CPUs (a test's factor)",
		Parse: func(it string) (string, error) {
			n, err := strconv.Atoi(it)
			if err != nil || n < 1 || n > 2 {
				return "", fmt.Errorf("-test-cpus: %q is not 1 or 2", it)
			}
			return it, nil
		},
		Encode: func(v string) any { n, _ := strconv.Atoi(v); return n },
		Decode: func(raw json.RawMessage) (string, error) {
			var n int
			err := json.Unmarshal(raw, &n)
			return strconv.Itoa(n), err
		},
		ID:     func(v string) string { return "-cpus" + v },
		Server: func(v string, _ plan.RunDirs) []string { return []string{"-test-cpus", v} },
		Go:     func(v string) []string { return []string{"-test-cpus", v} },
		K6:     func(v string) []string { return []string{"TEST_CPUS=" + v} },
		H2load: func(v string) []string { return []string{"--test-cpus=" + v} },
		Place: func(v string, p *plan.Placement) {
			n, _ := strconv.Atoi(v)
			p.Server = []int{0, 1}[:n]
		},
	}
}

// register adds a factor to the table for one test.
func register(t *testing.T, f *plan.Factor) {
	t.Helper()
	saved := plan.Factors
	plan.Factors = append(slices.Clip(saved), f)
	t.Cleanup(func() { plan.Factors = saved })
}

// TestAFactorIsOneRow registers a factor and sees it in the plan, the run
// ids, every program's arguments, the CPU placement, meta.json, the records
// and the report's headings: nothing else was edited.
func TestAFactorIsOneRow(t *testing.T) {
	register(t, cpusFactor())
	cfg := testConfig(t, func(o *Options) {
		o.Workloads, o.Modes, o.Drivers, o.VUs, o.H2loadVUs, o.Reps = "counter", "mutex", "go,k6,h2load", "10", "10", 1
		o.Factors = map[string]string{"test-cpus": "1,2"}
	})
	assert.Equal(t, []string{"1", "2"}, cfg.Factors.Values("test-cpus"))
	specs := layout(cfg)
	var ids []string
	for _, s := range specs {
		ids = append(ids, s.ID)
	}
	assert.Equal(t, []string{
		"001-counter-go-mutex-vus10-rep1", "002-counter-go-mutex-vus10-cpus2-rep1",
		"003-counter-k6-mutex-vus10-rep1", "004-counter-k6-mutex-vus10-cpus2-rep1",
		"005-counter-h2load-mutex-vus10-rep1", "006-counter-h2load-mutex-vus10-cpus2-rep1",
	}, ids, "the default keeps short names")

	two := specs[1]
	assert.Equal(t, "2", two.Factors.Get("test-cpus"))
	assert.Contains(t, strings.Join(serverArgs(two, "/d", ""), " "), "-test-cpus 2")
	assert.NotContains(t, strings.Join(serverArgs(specs[0], "/d", ""), " "), "-test-cpus", "a default is not told")
	job := Job{Spec: two, Addr: "a:1", Duration: time.Second, Scratch: t.TempDir(), Place: two.Factors.Place(cfg.base())}
	argv, _, err := goDriver{}.Command(cfg, job)
	require.NoError(t, err)
	assert.Contains(t, strings.Join(argv, " "), "-test-cpus 2")
	assert.Contains(t, k6Env(cfg, job), "TEST_CPUS=2")
	argv, _, err = h2loadDriver{}.Command(cfg, job)
	require.NoError(t, err)
	assert.Contains(t, argv, "--test-cpus=2")
	assert.Equal(t, plan.Placement{Server: []int{0, 1}, Driver: []int{1}}, job.Place, "the row moves the server's CPUs")
	assert.Equal(t, 2, cfg.gomaxprocs(job.Place.Server))

	// meta.json and the records carry it, and read it back.
	meta := newMeta(cfg, nil)
	b, err := json.Marshal(meta)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"test_cpus":[1,2]`)
	var back record.Meta
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, cfg.Factors, back.Factors)
	rec := fakeRecord(t, two)
	b, err = json.Marshal(rec)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"test_cpus":2`)
	var r2 record.Run
	require.NoError(t, json.Unmarshal(b, &r2))
	assert.Equal(t, two.Factors, r2.Factors)

	// The report's headings name it.
	rep, err := report.New(meta, []*record.Run{fakeRecord(t, specs[0]), rec})
	require.NoError(t, err)
	md := rep.Markdown()
	assert.Contains(t, md, "## counter · go driver · work 0s, durability none, skew 0, read ratio default, server CPUs half, attribution off, test cpus 2")
	assert.Contains(t, md, "factors: work 0s, durability none, skew 0, read ratio default, server CPUs half, attribution off, test cpus 1, 2;")

	// Its parser guards the flag (the control).
	o := defaultOptions()
	o.Factors = map[string]string{"test-cpus": "3"}
	_, err = NewConfig(o, 2)
	assert.ErrorContains(t, err, `-test-cpus: "3" is not 1 or 2`)
}

// fakeRecord is a run record as runOne would write it, without processes.
func fakeRecord(t *testing.T, spec plan.Spec) *record.Run {
	t.Helper()
	r := &record.Run{Spec: spec,
		Result:     &summary.Summary{Schema: summary.Schema, Driver: spec.Driver, Model: "closed", DurationS: 1, Calls: 100, CallsPerS: 100, OK: 100, LatencyMs: summary.LatencyMs{P50: 1, P99: 2, P999: 3, Max: 4}},
		ServerProc: record.ProcUsage{CPUs: []int{0}, CPUSeconds: 1, WallSeconds: 1},
		DriverProc: record.ProcUsage{CPUs: []int{1}, CPUSeconds: 0.5, WallSeconds: 1},
		Stats:      json.RawMessage(`{"mode":"mutex","storeBacked":true,"requests":"100","cpuSeconds":1,"windowSeconds":1,"rssBytes":"1048576"}`),
	}
	var err error
	r.Derived, err = record.Derive(r)
	require.NoError(t, err)
	return r
}
