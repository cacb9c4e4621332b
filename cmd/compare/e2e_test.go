package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/run"
)

// built are the real server and Go driver, built once for the package's
// tests into binDir (TestMain makes it and removes it).
var built struct {
	once         sync.Once
	server, load string
	err          error
}

// binaries builds the real server and Go driver (once) and finds (or
// builds) the pinned k6, so the runner is tested against the programs it
// drives.
func binaries(t *testing.T) (server, k6, loadBin string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	built.once.Do(func() {
		server, loadBin := filepath.Join(binDir, "locklab"), filepath.Join(binDir, "load")
		if out, err := exec.Command("go", "build", "-o", server, root).CombinedOutput(); err != nil {
			built.err = fmt.Errorf("build server: %v: %s", err, out)
			return
		}
		if out, err := exec.Command("go", "build", "-o", loadBin, filepath.Join(root, "cmd", "load")).CombinedOutput(); err != nil {
			built.err = fmt.Errorf("build cmd/load: %v: %s", err, out)
			return
		}
		built.server, built.load = server, loadBin
	})
	require.NoError(t, built.err)
	k6 = filepath.Join(root, "bin", "k6")
	if _, err := os.Stat(k6); err != nil {
		cmd := exec.Command("go", "build", "-o", k6, "go.k6.io/k6")
		cmd.Dir = filepath.Join(root, "tools")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "build k6: %s", out)
	}
	return built.server, k6, built.load
}

// h2loadBinary finds h2load; the test fails, not skips, without it.
func h2loadBinary(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("h2load")
	require.NoError(t, err, "no h2load on PATH: run `make deb-h2load` (installs Debian's nghttp2-client)")
	return p
}

func TestCompareEndToEnd(t *testing.T) {
	server, k6, loadBin := binaries(t)
	out := t.TempDir()
	cmd, err := parseFlags([]string{
		"-driver", "go,k6,h2load", "-workloads", "counter,bank-B", "-modes", "mutex,inputQ,noop", "-vus", "3", "-h2load-vus", "4",
		// A warm-up shorter than k6's shortest scenario: the k6 runs warm
		// up for a second (warmupFor), the others for 200 ms.
		"-duration", "1s", "-warmup", "200ms", "-reps", "1", "-seed", "7",
		// Tests run beside each other: nothing is spoiled here (the
		// gate's own test is in internal/lab/run).
		"-max-foreign", "100%",
		"-server", server, "-k6", k6, "-load", loadBin, "-h2load", h2loadBinary(t), "-scripts", "../../k6", "-out", out,
	}, os.Stderr)
	require.NoError(t, err)
	cmd.cfg.Command = "compare (test)"
	// Block 1's drawn order of the arms: the modes and the A/A control's
	// second mutex.
	arm := paired.Order(7, 1, append(slices.Clone(cmd.cfg.Modes), "mutex"+plan.TwinSuffix))[0]
	id := func(driver string, vus int) string {
		mode, twin := strings.CutSuffix(arm, plan.TwinSuffix)
		s := fmt.Sprintf("-counter-%s-%s-vus%d-rep1", driver, mode, vus)
		if twin {
			s += "-aa"
		}
		return s
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var progress strings.Builder
	require.NoError(t, cmd.run(ctx, &progress, &progress), progress.String())

	p := progress.String()
	assert.Contains(t, p, "locklab compare: 20 runs")
	assert.Contains(t, p, "warning: -reps 1: the report will judge", "one block is too few for any verdict")
	assert.Contains(t, p, "machine before the first block:")
	assert.Contains(t, p, "[1/20] 001"+id("go", 3))
	assert.Contains(t, p, "[5/20] 005"+id("k6", 3))
	assert.Contains(t, p, "[9/20] 009"+id("h2load", 4))
	assert.Contains(t, p, "[20/20]")
	assert.Contains(t, p, "left")
	assert.Contains(t, p, "gate: 0 of 5 block cells spoiled by foreign CPU and rerun, 0 dropped")

	records, err := record.Load(os.DirFS(out))
	require.NoError(t, err)
	require.Len(t, records, 20)
	bankBRefusals := map[string]int64{} // scenario B's refused overdrafts, per design
	for _, r := range records {
		assert.Empty(t, r.Problems, r.ID)
		assert.Equal(t, 0, r.ServerExit, r.ID)
		assert.Greater(t, r.Result.Calls, int64(0), r.ID)
		assert.Greater(t, r.DriverProc.CPUSeconds, 0.0, r.ID)
		assert.Greater(t, r.ServerProc.WallSeconds, 0.0, r.ID)
		assert.True(t, r.ServerSet.Sampled() && r.DriverSet.Sampled(), "the CPU sets were read from /proc/stat: %s", r.ID)
		assert.Equal(t, cmd.cfg.ServerCPUs, r.ServerSet.CPUs, r.ID)
		assert.Contains(t, record.Classes, r.Derived.Class, r.ID)
		assert.Equal(t, cmd.cfg.ServerCPUs, r.ServerProc.CPUs, r.ID)
		assert.NotEmpty(t, r.Checks, r.ID)
		for _, c := range r.Checks {
			assert.True(t, c.OK, "%s: %s %s", r.ID, c.Name, c.Detail)
		}
		if r.Mode != "noop" {
			assert.Greater(t, r.Derived.ServerCPUPerCallUs, 0.0, r.ID)
		}
		if r.Driver == "go" {
			assert.NotEmpty(t, r.Result.HDR, "the Go driver keeps its histogram: %s", r.ID)
		}
		if r.Driver == "h2load" {
			assert.NotEmpty(t, r.Result.HDR, "h2load's per-request log becomes a histogram: %s", r.ID)
			if r.Mode != "noop" {
				assert.Contains(t, r.Checks[len(r.Checks)-1].Detail, "h2load saw", "the counter equals h2load's calls: %s", r.ID)
			}
		}
		if r.Workload == "bank-B" && r.Mode != "noop" { // noop keeps no balances to refuse
			// Per design, not per run: a short run on a loaded machine may
			// end before any account runs dry (a k6 run with none was seen).
			bankBRefusals[r.Mode] += r.Result.ExpectedRefusals
		}
		for _, f := range []string{".summary.json", "." + r.Driver + ".log", ".warmup.log", ".server.log"} {
			assert.FileExists(t, filepath.Join(out, "runs", r.ID+f))
		}
		// Attribution is off by default: no profile, no metrics endpoint.
		assert.Nil(t, r.Attribution, r.ID)
		assert.NoFileExists(t, filepath.Join(out, "runs", r.ID+".cpu.pprof"))
		log, err := os.ReadFile(filepath.Join(out, "runs", r.ID+".server.log"))
		require.NoError(t, err)
		assert.NotContains(t, string(log), "metrics on", "no -metrics-addr: %s", r.ID)
	}
	for mode, n := range bankBRefusals {
		assert.Positive(t, n, "scenario B refuses overdrafts: %s", mode)
	}
	assert.NotEmpty(t, bankBRefusals, "the plan runs scenario B")
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	require.NoError(t, err)
	for _, want := range []string{"## counter · go driver", "## bank-B · go driver", "## counter · k6 driver", "## counter · h2load driver", "## bank-B · k6 driver",
		"### counter · h2load · 4 callers", "mutex (1 runs)", "inputQ (1 runs)", "noop (1 runs)", "## Headline", "too few blocks (n=1)", "| mutex (A/A) | mutex |",
		" counter.increment |", " bank.transfer |", " bank.balance |", "runs by class"} {
		assert.Contains(t, string(md), want)
	}
	assert.NotContains(t, string(md), "## Problems")
	page, err := os.ReadFile(filepath.Join(out, "report.html"))
	require.NoError(t, err)
	assert.Greater(t, strings.Count(string(page), chartSrc), 6)
	assert.FileExists(t, filepath.Join(out, "figures.json"))
	meta, _, err := record.LoadDir(out)
	require.NoError(t, err)
	require.NotNil(t, meta.Seed)
	assert.Equal(t, 7, *meta.Seed, "meta.json records the seed")
	assert.Equal(t, "mutex", meta.Baseline)
	require.NotNil(t, meta.Gate, "meta.json records the gate")
	assert.Equal(t, 1.0, meta.Gate.MaxForeign)
	assert.Equal(t, "mutex", meta.Gate.Twin)
	assert.Positive(t, meta.Gate.QuietSeconds, "the machine was watched before the first block")
	for _, r := range records {
		assert.GreaterOrEqual(t, r.Derived.Foreign, 0.0, "every run's foreign CPU is measured: %s", r.ID)
	}
}

func TestPreflight(t *testing.T) {
	server, k6, _ := binaries(t)
	base := []string{"-driver", "k6", "-server", server, "-k6", k6, "-scripts", "../../k6"}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown mode", []string{"-modes", "mutex,spinlock"}, `unknown mode "spinlock"; ` + server + " serves: mutex, rwmutex"},
		{"missing k6", []string{"-k6", "/nonexistent/k6"}, "/nonexistent/k6 not found: run `make k6` first"},
		{"missing go driver", []string{"-driver", "go", "-load", "/nonexistent/load"}, "/nonexistent/load not found: run `make build` first"},
		{"missing h2load", []string{"-driver", "h2load", "-h2load", "/nonexistent/h2load"}, "/nonexistent/h2load not found: run `make deb-h2load` first"},
		{"missing server", []string{"-server", "/nonexistent/locklab"}, "/nonexistent/locklab not found: run `make build` first"},
		{"missing script", []string{"-scripts", t.TempDir()}, "workload counter:"},
		{"no such run to profile", []string{"-profile", "999"}, `-profile "999": no such run`},
		{"baseline not among every mode", []string{"-modes", "all", "-baseline", "spinlock"}, "-baseline spinlock is not among -modes (mutex,rwmutex,"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, err := parseFlags(append(append([]string{}, base...), tt.args...), os.Stderr)
			require.NoError(t, err)
			err = run.Preflight(cmd.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
	cmd, err := parseFlags(base, os.Stderr)
	require.NoError(t, err)
	assert.NoError(t, run.Preflight(cmd.cfg), "the control: a good configuration passes")
}

// TestCompareFactorsEndToEnd: the factors reach the server (a write-ahead
// log in a fresh directory, critical-section work) and a mode that cannot
// log is n/a, not a failure.
func TestCompareFactorsEndToEnd(t *testing.T) {
	server, _, loadBin := binaries(t)
	out := t.TempDir()
	progress := runCompare(t,
		// Isolated runs: the factors' records, n/a cells and files are
		// what this test checks (TestDuetEndToEnd checks side-by-side rounds).
		"-measure", "isolated", "-driver", "go", "-workloads", "counter", "-modes", "mutex,noop", "-vus", "2",
		"-work", "10us", "-durability", "wal", "-duration", "1s", "-warmup", "0", "-reps", "1", "-aa=false", "-max-foreign", "100%",
		"-server", server, "-load", loadBin, "-out", out,
	)
	assert.Contains(t, progress, "n/a: counter × noop: noop cannot run with a write-ahead log")

	records, err := record.Load(os.DirFS(out))
	require.NoError(t, err)
	require.Len(t, records, 1)
	r := records[0]
	assert.Equal(t, "001-counter-go-mutex-vus2-w10us-wal-rep1", r.ID)
	assert.Equal(t, plan.DefaultPoint().With("work", "10µs").With("durability", "wal"), r.Factors)
	assert.Empty(t, r.Problems)
	st, err := r.ServerStats()
	require.NoError(t, err)
	assert.Equal(t, "wal", st.GetDurability(), "the server ran with its log")
	assert.Equal(t, int64(10_000), st.GetWorkNs(), "and with the work")
	assert.Equal(t, uint64(st.GetCounterValue()), st.GetWalRecords(), "one record a logged increment")
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "## counter · go driver · work 10µs, durability wal, skew 0, read ratio default")
	assert.Contains(t, string(md), "| calls/s | ")
	assert.Contains(t, string(md), " | n/a |")
}

// chartSrc starts every chart's image: html/template writes the '+' of the
// media type as an entity, which the browser reads back as '+'.
const chartSrc = `src="data:image/svg&#43;xml;base64,`
