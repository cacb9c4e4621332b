package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// binaries builds the real server and finds (or builds) the pinned k6, so the
// runner is tested against the programs it drives.
func binaries(t *testing.T) (server, k6 string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	server = filepath.Join(t.TempDir(), "locklab")
	out, err := exec.Command("go", "build", "-o", server, root).CombinedOutput()
	require.NoError(t, err, "build server: %s", out)
	k6 = filepath.Join(root, "bin", "k6")
	if _, err := os.Stat(k6); err != nil {
		cmd := exec.Command("go", "build", "-o", k6, "go.k6.io/k6")
		cmd.Dir = filepath.Join(root, "tools")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "build k6: %s", out)
	}
	return server, k6
}

func TestCompareEndToEnd(t *testing.T) {
	server, k6 := binaries(t)
	out := t.TempDir()
	cfg, err := parseFlags([]string{
		"-workloads", "counter,bank-B", "-modes", "mutex,inputQ,noop", "-vus", "3",
		"-duration", "1s", "-warmup", "1s", "-reps", "2",
		"-server", server, "-k6", k6, "-scripts", "../../k6", "-out", out,
	}, os.Stderr)
	require.NoError(t, err)
	cfg.Command = "compare (test)"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var progress strings.Builder
	require.NoError(t, run(ctx, cfg, &progress), progress.String())

	p := progress.String()
	assert.Contains(t, p, "[1/12] 001-counter-mutex-vus3-rep1")
	assert.Contains(t, p, "[12/12]")
	assert.Contains(t, p, "left")

	records, err := loadRecords(out)
	require.NoError(t, err)
	require.Len(t, records, 12)
	for _, r := range records {
		assert.Empty(t, r.Problems, r.ID)
		assert.Equal(t, 0, r.ServerExit, r.ID)
		assert.Greater(t, r.Summary.Iterations.Count, 0.0, r.ID)
		assert.Greater(t, r.K6.CPUSeconds, 0.0, r.ID)
		assert.NotEmpty(t, r.Checks, r.ID)
		for _, c := range r.Checks {
			assert.True(t, c.OK, "%s: %s %s", r.ID, c.Name, c.Detail)
		}
		if r.Mode != "noop" {
			assert.Greater(t, r.Derived.ServerCPUPerReqU, 0.0, r.ID)
		}
		if r.Workload == "bank-B" && r.Mode != "noop" { // noop keeps no balances to refuse
			assert.Greater(t, r.Summary.ExpectedRefusals, 0.0, "scenario B refuses overdrafts: %s", r.ID)
		}
		for _, f := range []string{".k6.json", ".k6.log", ".warmup.log", ".server.log"} {
			assert.FileExists(t, filepath.Join(out, "runs", r.ID+f))
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	require.NoError(t, err)
	for _, want := range []string{"## Workload counter", "## Workload bank-B", "### counter at 3 VUs",
		"mutex (2 runs)", "inputQ (2 runs)", "noop (2 runs)", "Verdict:", " counter.increment |", " bank.transfer |", " bank.balance |"} {
		assert.Contains(t, string(md), want)
	}
	assert.NotContains(t, string(md), "## Problems")
	page, err := os.ReadFile(filepath.Join(out, "report.html"))
	require.NoError(t, err)
	assert.Equal(t, 6, strings.Count(string(page), "data:image/svg+xml;base64,"))
	assert.FileExists(t, filepath.Join(out, "figures.json"))
	assert.FileExists(t, filepath.Join(out, "meta.json"))
}

func TestPreflight(t *testing.T) {
	server, k6 := binaries(t)
	base := []string{"-server", server, "-k6", k6, "-scripts", "../../k6"}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown mode", []string{"-modes", "mutex,spinlock"}, `unknown mode "spinlock"; ` + server + " serves: "},
		{"missing k6", []string{"-k6", "/nonexistent/k6"}, "/nonexistent/k6 not found: run `make k6` first"},
		{"missing server", []string{"-server", "/nonexistent/locklab"}, "/nonexistent/locklab not found: run `make build` first"},
		{"missing script", []string{"-scripts", t.TempDir()}, "workload counter:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseFlags(append(append([]string{}, base...), tt.args...), os.Stderr)
			require.NoError(t, err)
			err = preflight(cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}
