package run

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/summary"
)

// The version the runner accepts is the one tools/ghz/go.mod builds.
func TestGhzVersionIsPinned(t *testing.T) {
	mod, err := os.ReadFile("../../../tools/ghz/go.mod")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(ghzModule) + ` (v\S+)`).FindSubmatch(mod)
	require.NotNil(t, m, "tools/ghz/go.mod requires %s", ghzModule)
	assert.Equal(t, GhzVersion, string(m[1]))
}

func ghzSpec(level int, model string) plan.Spec {
	return plan.Spec{ID: "t", Workload: "counter", Driver: "ghz", Mode: "mutex", Model: model, Level: level, Rep: 1}
}

func TestGhzCommand(t *testing.T) {
	t.Setenv(GhzEnv, "/opt/ghz")
	cfg := Config{Conns: 4, MaxVUs: 200}
	job := Job{Spec: ghzSpec(100, "closed"), Addr: "127.0.0.1:1", Duration: 2 * time.Second, Scratch: "/s",
		Place: plan.Placement{Server: []int{0}, Driver: []int{1}}}
	flags := func(argv []string) map[string]string {
		m := map[string]string{}
		for i, a := range argv {
			if strings.HasPrefix(a, "-") && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
				m[a] = argv[i+1]
			} else if strings.HasPrefix(a, "-") {
				m[a] = ""
			}
		}
		return m
	}
	tests := []struct {
		name   string
		d      ghzDriver
		job    func(Job) Job
		want   map[string]string
		absent []string
	}{
		{"closed, for a duration", ghzDriver{}, func(j Job) Job { return j },
			map[string]string{"-c": "100", "--connections": "4", "-z": "2s", "--duration-stop": "wait", "--cpus": "1", "-o": "/s/ghz.json",
				"--call": "locklab.v1.CounterService/Increment"},
			[]string{"-n", "--rps"}},
		{"counted", ghzDriver{Total: 500}, func(j Job) Job { return j },
			map[string]string{"-n": "500", "-c": "100"}, []string{"-z"}},
		{"a counted run's warm-up runs for its duration", ghzDriver{Total: 500}, func(j Job) Job { j.Warmup = true; return j },
			map[string]string{"-z": "2s", "-o": "/s/ghz-warmup.json"}, []string{"-n"}},
		{"open", ghzDriver{}, func(j Job) Job { j.Spec = ghzSpec(1000, "open"); return j },
			map[string]string{"--rps": "1000", "--async": "", "-c": "200", "--connections": "4"}, nil},
		{"fewer workers than connections", ghzDriver{}, func(j Job) Job { j.Spec = ghzSpec(2, "closed"); return j },
			map[string]string{"-c": "2", "--connections": "2"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, env, err := tt.d.Command(cfg, tt.job(job))
			require.NoError(t, err)
			assert.Empty(t, env)
			assert.Equal(t, "/opt/ghz", argv[0])
			assert.Equal(t, "127.0.0.1:1", argv[len(argv)-1])
			got := flags(argv)
			for k, v := range tt.want {
				assert.Contains(t, got, k)
				assert.Equal(t, v, got[k], k)
			}
			for _, k := range tt.absent {
				assert.NotContains(t, got, k)
			}
		})
	}
	_, _, err := ghzDriver{Case: "get"}.Command(cfg, Job{Spec: plan.Spec{Workload: "kv", Model: "closed", Level: 1}})
	assert.ErrorContains(t, err, "kv/get", "a case ghz cannot send")
}

func TestGhzServes(t *testing.T) {
	for _, w := range plan.Workloads() {
		assert.Equal(t, w.Kind == "counter", ghzDriver{}.Serves(w, "closed"), w.Name)
	}
	assert.True(t, slices.ContainsFunc(Drivers, func(d Driver) bool { return d.Name() == "ghz" }))
}

// Result reads a real ghz report (the counter, 40 ms) into the summary and
// writes it where the runner keeps it.
func TestGhzResult(t *testing.T) {
	scratch := t.TempDir()
	b, err := os.ReadFile("../../ghz/testdata/increment.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(scratch, "ghz.json"), b, 0o644))
	job := Job{Spec: ghzSpec(2, "closed"), Scratch: scratch, Summary: filepath.Join(scratch, "out.summary.json")}
	res, err := ghzDriver{}.Result(Config{}, job)
	require.NoError(t, err)
	assert.Equal(t, int64(262), res.AckedIncrementDelta)
	back, err := summary.Read(job.Summary)
	require.NoError(t, err)
	assert.Equal(t, res.Calls, back.Calls)

	_, err = ghzDriver{}.Result(Config{}, Job{Spec: ghzSpec(2, "closed"), Scratch: t.TempDir()})
	assert.ErrorIs(t, err, os.ErrNotExist, "no report: the run left nothing")
}

// Bad input: no binary, a binary that is not ghz, another ghz version.
func TestGhzCheck(t *testing.T) {
	t.Chdir("../../..") // the repository's root, where proto/ is
	t.Setenv(GhzEnv, filepath.Join(t.TempDir(), "ghz"))
	assert.ErrorContains(t, ghzDriver{}.Check(Config{}), "make ghz", "no binary")

	self, err := os.Executable()
	require.NoError(t, err)
	t.Setenv(GhzEnv, self)
	assert.ErrorContains(t, ghzDriver{}.Check(Config{}), "is not ghz", "a Go binary of another program")

	assert.ErrorContains(t, ghzPinned("bin/ghz", "v0.120.0"), "is ghz v0.120.0; the runner reads ghz "+GhzVersion)
	assert.NoError(t, ghzPinned("bin/ghz", GhzVersion), "the control: the pinned version passes")

	t.Chdir(t.TempDir())
	assert.ErrorContains(t, ghzDriver{}.Check(Config{}), "repository's root", "no proto/ here")
}

// The preflight runs the drivers' checks: -driver ghz with a wrong binary
// fails before any run.
func TestCheckDrivers(t *testing.T) {
	t.Chdir("../../..")
	t.Setenv(GhzEnv, filepath.Join(t.TempDir(), "ghz"))
	assert.Error(t, checkDrivers(Config{Config: plan.Config{Drivers: []string{"go", "ghz"}}}))
	assert.NoError(t, checkDrivers(Config{Config: plan.Config{Drivers: []string{"go"}}}), "the control: no ghz, no check")
}

// recordingProcs is fakeProcs that keeps the driver each job was given.
type recordingProcs struct {
	*fakeProcs
	drivers []Driver
}

func (p *recordingProcs) drive(ctx context.Context, cfg Config, d Driver, job Job, pid int) (*summary.Summary, DriverRun, error) {
	p.drivers = append(p.drivers, d)
	return p.fakeProcs.drive(ctx, cfg, d, job, pid)
}

// A counted run is runOne's with ghz told the case and the count, for the
// warm-up and the measured run; meta.json and the records are what
// record.LoadDir reads.
func TestRunCountedWithoutProcesses(t *testing.T) {
	cfg, err := NewCountedConfig("bin/locklab", t.TempDir(), 100*time.Millisecond, 4, false)
	require.NoError(t, err)
	runs := []Counted{
		{Spec: plan.Spec{Index: 1, ID: "a", Workload: "counter", Driver: "ghz", Mode: "mutex", Model: "closed", Level: 20, Rep: 1}, Total: 500},
		{Spec: plan.Spec{Index: 2, ID: "b", Workload: "counter", Driver: "ghz", Mode: "inputQ", Model: "closed", Level: 20, Rep: 1}, Case: "increment", Total: 1000},
		{Spec: plan.Spec{Index: 3, ID: "c", Workload: "bank-A", Driver: "ghz", Mode: "mutex", Model: "closed", Level: 20, Rep: 1,
			Factors: plan.DefaultPoint().With(plan.Backend, "mysql").With(plan.Cache, "redis")}, Case: "balance-one", Total: 10},
	}
	p := &recordingProcs{fakeProcs: &fakeProcs{admin: &fakeAdmin{}, applied: 500, acked: 500}}
	var out strings.Builder
	recs, err := runCounted(t.Context(), cfg, p, runs, &out)
	require.NoError(t, err)
	require.Len(t, recs, 3)
	require.Len(t, p.drivers, 6, "a warm-up and a measured run each")
	assert.Equal(t, ghzDriver{Total: 500}, p.drivers[1])
	assert.Equal(t, ghzDriver{Case: "increment", Total: 1000}, p.drivers[3])
	meta, loaded, err := record.LoadDir(cfg.Out)
	require.NoError(t, err)
	assert.Equal(t, []string{"mutex", "inputQ"}, meta.Modes)
	assert.Equal(t, []string{"ghz"}, meta.Drivers)
	require.Len(t, loaded, 3)
	assert.Equal(t, "b", loaded[1].ID)
	assert.Contains(t, out.String(), "[2/3] b: 1000 calls")
	assert.Equal(t, []string{"memory", "mysql"}, meta.Factors.Values(plan.Backend), "meta.json says the factors the runs took")
	assert.Equal(t, []string{"none", "redis"}, meta.Factors.Values(plan.Cache))
	assert.NotEmpty(t, meta.MariaDBVersion, "a run over a database: its version")
	assert.NotEmpty(t, meta.RedisVersion, "a run through the cache: its version")
	assert.Equal(t, "redis", loaded[2].Factors.Get(plan.Cache), "the record keeps the run's cache")
}

// Bad input is refused before any run.
func TestCountedPreflight(t *testing.T) {
	t.Chdir("../../..")
	server := filepath.Join(t.TempDir(), "locklab")
	// A stand-in server that lists two modes, as -list-modes does, and
	// db-rowlock under -backend mysql.
	require.NoError(t, os.WriteFile(server, []byte("#!/bin/sh\necho 'mutex counter bank kv'\necho 'inputQ counter bank kv'\n"+
		"[ \"$2 $3\" = '-backend mysql' ] && echo 'db-rowlock bank'\nexit 0\n"), 0o755))
	cfg, err := NewCountedConfig(server, t.TempDir(), 0, 0, false)
	require.NoError(t, err)
	ok := Counted{Spec: plan.Spec{ID: "a", Workload: "bank-A", Driver: "ghz", Mode: "mutex", Level: 20}, Case: "transfer", Total: 500}
	tests := []struct {
		name string
		edit func(*Counted)
		want string
	}{
		{"another driver", func(c *Counted) { c.Driver = "go" }, "ghz's, not"},
		{"no calls", func(c *Counted) { c.Total = 0 }, "0 calls"},
		{"no concurrency", func(c *Counted) { c.Level = 0 }, "concurrency 0"},
		{"unknown mode", func(c *Counted) { c.Mode = "spinlock" }, `unknown mode "spinlock"`},
		{"unknown workload", func(c *Counted) { c.Workload = "queue" }, `unknown workload "queue"`},
		{"no id", func(c *Counted) { c.ID = "" }, "its own id"},
		{"a mode only over a database, in memory", func(c *Counted) { c.Mode = "db-rowlock" }, `unknown mode "db-rowlock"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			assert.ErrorContains(t, countedPreflight(cfg, []Counted{c}), tt.want)
		})
	}
	assert.ErrorContains(t, countedPreflight(cfg, []Counted{ok, ok}), "its own id", "two runs, one id")
	assert.ErrorContains(t, countedPreflight(cfg, nil), "no counted run")
	t.Setenv(GhzEnv, filepath.Join(t.TempDir(), "ghz"))
	assert.ErrorContains(t, countedPreflight(cfg, []Counted{ok}), "make ghz", "the control: a good run fails only for want of ghz")
	overDB := ok
	overDB.Mode, overDB.Factors = "db-rowlock", plan.DefaultPoint().With(plan.Backend, "mysql")
	assert.ErrorContains(t, countedPreflight(cfg, []Counted{overDB}), "make ghz", "db-rowlock over a database is known: only ghz is missing")
	_, err = NewCountedConfig(server, "", -time.Second, 0, false)
	assert.ErrorContains(t, err, "warm-up")
}
