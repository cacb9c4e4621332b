package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/seeds"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func seedsCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := runCmd(context.Background(), args, &out, &errOut)
	return out.String() + errOut.String(), err
}

// Bad input: a clear message and the usage status, nothing written.
func TestBadInput(t *testing.T) {
	empty := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", nil, "want a subcommand"},
		{"unknown subcommand", []string{"queue"}, "want a subcommand"},
		{"ladder without -in", []string{"ladder"}, "-in is required"},
		{"ladder of an empty folder", []string{"ladder", "-in", empty}, "meta.json"},
		{"unknown flag", []string{"bank", "-out", empty, "-colour", "red"}, "flag provided but not defined"},
		{"rpcx with no requests", []string{"rpcx", "-out", empty, "-requests", "0"}, "-requests 0"},
		{"rpcx beyond a million", []string{"rpcx", "-out", empty, "-requests", "1000001"}, "want 1..1000000"},
		{"bank with an empty mode list", []string{"bank", "-out", empty, "-modes", ","}, "-modes"},
		{"bank over an unknown backend", []string{"bank", "-out", empty, "-backend", "postgres"}, `-backend "postgres": want memory or mysql`},
		{"ngrinder without -after", []string{"ngrinder", "-before", empty, "-out", empty}, "-after is required"},
		{"ngrinder of empty folders", []string{"ngrinder", "-before", empty, "-after", empty, "-out", empty}, "meta.json"},
		{"stub of an unknown seed", []string{"stub", "-out", empty, "-seed", "nope"}, `-seed "nope"`},
		{"ghz-summary of an unknown case", []string{"ghz-summary", "-workload", "kv", "-case", "get", "-in", "x", "-out", "y"}, "kv/get"},
		{"an extra argument", []string{"stub", "-out", empty, "-seed", "bank", "extra"}, `unexpected argument "extra"`},
		{"replicas without -out", []string{"replicas"}, "want a server binary and a folder"},
		{"replicas of one block", []string{"replicas", "-out", empty, "-blocks", "1"}, "blocks 1"},
		{"replicas of a design without the bank", []string{"replicas", "-out", empty, "-design", "atomic"}, `design "atomic"`},
		{"replicas over the database behind no front", []string{"replicas", "-out", empty, "-db-front", "nope"}, `no front "nope"`},
		{"replicas over the database with none", []string{"replicas", "-out", empty, "-db-replicas", "-1"}, "-1 replicas over the database"},
		{"replicas of one block of every design", []string{"replicas", "-out", empty, "-design-blocks", "1"}, "every design's rounds: 1 blocks"},
		{"replicas rendered from an empty folder", []string{"replicas", "-render", empty}, "results.json"},
		{"ghz-run without -addr", []string{"ghz-run", "-workload", "counter", "-out", "x"}, "-addr is required"},
		{"ghz-run of a case ghz cannot send", []string{"ghz-run", "-workload", "kv", "-case", "get", "-addr", "127.0.0.1:1", "-out", "x"}, "kv/get"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := seedsCmd(t, tt.args...)
			require.ErrorIs(t, err, errUsage, out)
			assert.Contains(t, err.Error()+out, tt.want)
		})
	}
	entries, err := os.ReadDir(empty)
	require.NoError(t, err)
	assert.Empty(t, entries, "bad input writes nothing")
	_, err = seedsCmd(t, "-h")
	assert.ErrorIs(t, err, flag.ErrHelp)
}

// ghz-run refuses a missing ghz before calling anything.
func TestGhzRunWithoutGhz(t *testing.T) {
	t.Chdir("../..") // ghz reads proto/ from the repository's root
	t.Setenv("GHZ", filepath.Join(t.TempDir(), "ghz"))
	out, err := seedsCmd(t, "ghz-run", "-workload", "counter", "-addr", "127.0.0.1:1", "-out", filepath.Join(t.TempDir(), "s.json"))
	require.ErrorIs(t, err, errUsage, out)
	assert.ErrorContains(t, err, "make ghz")
}

// writeLadder writes a results folder of two k6 runs of the counter.
func writeLadder(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "runs"), 0o755))
	require.NoError(t, record.WriteJSON(filepath.Join(dir, "meta.json"), record.Meta{Command: "make study NAME=seed-ladder", Duration: "5s", Warmup: "1s", Reps: 1, CPUs: 2}))
	for i, mode := range []string{"mutex", "inputQ"} {
		stats, err := protojson.Marshal(&locklabv1.GetStatsResponse{Mode: mode, StoreBacked: true, Requests: 1000, CpuSeconds: 1, WindowSeconds: 5})
		require.NoError(t, err)
		r := record.Run{Spec: plan.Spec{Index: i + 1, ID: mode, Workload: "counter", Driver: "k6", Mode: mode, Model: "closed", Level: 10, Rep: 1},
			Started: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Stats: stats,
			Result: &summary.Summary{Schema: summary.Schema, Driver: "k6", Workload: "counter", Model: "closed", DurationS: 5, Calls: 1000, OK: 1000,
				K6: &summary.K6Details{Iterations: 1000, TestRunDurationMs: 5000}},
			ServerProc: record.ProcUsage{CPUs: []int{0}, CPUSeconds: 1, WallSeconds: 5},
			DriverProc: record.ProcUsage{CPUs: []int{1}, CPUSeconds: 4.9, WallSeconds: 5}}
		require.NoError(t, record.WriteJSON(filepath.Join(dir, "runs", mode+".json"), r))
	}
}

// ladder -in reads a folder with record.Load and writes its README.
func TestLadderPage(t *testing.T) {
	dir := t.TempDir()
	writeLadder(t, dir)
	out, err := seedsCmd(t, "ladder", "-in", dir)
	require.NoError(t, err, out)
	b, err := os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "| iterations | 1000 200.000000/s† | 1000 200.000000/s† |", "the k6 runs, both load-bound (98% of k6's CPU)")
	assert.Contains(t, string(b), seeds.Placeholder)
}

// ladder -in reads a packed folder's runs.tar.gz as it reads runs/.
func TestLadderPagePacked(t *testing.T) {
	dir, packed := t.TempDir(), t.TempDir()
	writeLadder(t, dir)
	writeLadder(t, packed)
	files := map[string][]byte{}
	for _, mode := range []string{"mutex", "inputQ"} {
		b, err := os.ReadFile(filepath.Join(packed, "runs", mode+".json"))
		require.NoError(t, err)
		files["runs/"+mode+".json"] = b
	}
	tree, err := record.MemFS(files)
	require.NoError(t, err)
	var arc bytes.Buffer
	require.NoError(t, record.WriteArchive(&arc, tree))
	require.NoError(t, os.WriteFile(filepath.Join(packed, record.RunsArchive), arc.Bytes(), 0o644))
	require.NoError(t, os.RemoveAll(filepath.Join(packed, "runs")))

	for _, d := range []string{dir, packed} {
		out, err := seedsCmd(t, "ladder", "-in", d)
		require.NoError(t, err, out)
	}
	want, err := os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(packed, "README.md"))
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))

	require.NoError(t, os.WriteFile(filepath.Join(packed, record.RunsArchive), arc.Bytes()[:arc.Len()-3], 0o644))
	out, err := seedsCmd(t, "ladder", "-in", packed)
	require.ErrorIs(t, err, errUsage, "the control: a truncated archive is refused: %s", out)
	assert.Contains(t, err.Error(), filepath.Join(packed, record.RunsArchive))
}

// ngrinder compares two folders; a folder compared with itself changes by 0%.
func TestNGrinderPage(t *testing.T) {
	dir := t.TempDir()
	writeLadder(t, filepath.Join(dir, "a"))
	out, err := seedsCmd(t, "ngrinder", "-before", filepath.Join(dir, "a"), "-after", filepath.Join(dir, "a"), "-out", dir)
	require.ErrorIs(t, err, errUsage, "the folder holds two groups (mutex and inputQ): %s", out)

	for _, m := range []string{"mutex", "inputQ"} {
		sub := filepath.Join(dir, m)
		writeLadder(t, sub)
		other := map[string]string{"mutex": "inputQ", "inputQ": "mutex"}[m]
		require.NoError(t, os.Remove(filepath.Join(sub, "runs", other+".json")))
	}
	out, err = seedsCmd(t, "ngrinder", "-before", filepath.Join(dir, "mutex"), "-after", filepath.Join(dir, "inputQ"), "-out", dir)
	require.NoError(t, err, out)
	b, err := os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "| TPS (calls/s, median of runs) | 200 | 200 | +0% |")
}

// ghz-summary turns a real ghz report into the summary e2e.sh checks.
func TestGhzSummary(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "s.json")
	out, err := seedsCmd(t, "ghz-summary", "-workload", "bank", "-case", "transfer", "-scenario", "B", "-in", "../../internal/ghz/testdata/transfer-B.json", "-out", dst)
	require.NoError(t, err, out)
	s, err := summary.Read(dst)
	require.NoError(t, err)
	assert.Equal(t, int64(35), s.ExpectedRefusals)

	_, err = seedsCmd(t, "ghz-summary", "-workload", "bank", "-case", "transfer", "-in", "/nonexistent", "-out", dst)
	assert.Error(t, err)
	assert.False(t, errors.Is(err, errUsage), "a missing report is not a usage error")
}

func TestStub(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bank")
	_, err := seedsCmd(t, "stub", "-out", dir, "-seed", "bank")
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	s, _ := seeds.Lookup("bank")
	assert.Equal(t, s.Stub(), string(b))
}
