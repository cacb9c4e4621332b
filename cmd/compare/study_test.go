package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/run"
	"github.com/locklab/locklab/internal/lab/study"
)

// scratch is a throw-away row: a catalogue with it must show it everywhere
// the real rows are shown.
var scratch = study.Study{
	Name: "scratch", Engine: study.Runner, Out: "scratch", Budget: time.Minute,
	Plans: []study.Plan{{Sub: "one", Args: "-workloads counter -driver go -vus 10 -modes mutex,noop -aa=false -reps 2 -duration 1s"}},
	Desc:  "a row of a test",
}

// TestAThrowAwayStudyIsEverywhere: a row added to the catalogue is listed
// (make help prints the listing), indexed, estimated within its budget and
// run by -study; without it (the control) none of these knows the name.
func TestAThrowAwayStudyIsEverywhere(t *testing.T) {
	with := append(slices.Clone(study.Studies), scratch)
	took, known, err := estimate(scratch)
	require.NoError(t, err)
	require.True(t, known)
	assert.LessOrEqual(t, took, scratch.Budget, "budget")

	row := regexp.MustCompile(`(?m)^  scratch +` + regexp.QuoteMeta(formatEstimate(took)) + ` +docs/results/scratch/ +a row of a test$`)
	assert.Regexp(t, row, listing(with), "listing")
	assert.NotRegexp(t, row, listing(study.Studies), "the control: listing")
	mk, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^help:.*\n(\t.*\n)*\t@\$\(GO\) run ./cmd/compare -study list\n`, string(mk), "make help prints the listing")

	assert.Contains(t, study.Index(with), "| scratch | [`scratch/one/`](scratch/one/report.md) | `make study NAME=scratch` | a row of a test |", "index")
	assert.NotContains(t, study.Index(study.Studies), "NAME=scratch", "the control: index")

	s, err := newStudyRunFrom(with, "scratch", []string{"-study", "scratch", "-reps", "3"}, "")
	require.NoError(t, err, "flag")
	require.Len(t, s.plans, 1)
	assert.Equal(t, filepath.Join(study.Dir, "scratch", "one"), s.plans[0].cfg.Out)
	assert.Equal(t, 3, s.plans[0].cfg.Reps, "the command line's flags are added to the plan's")
	_, err = newStudyRunFrom(study.Studies, "scratch", []string{"-study", "scratch"}, "")
	assert.ErrorContains(t, err, `-study "scratch": want list, index or one of the studies`, "the control: flag")
}

// TestStudyIndexIsFresh: the index block of docs/results/README.md is what
// the catalogue generates (`go run ./cmd/compare -study index` rewrites it),
// and it opens the page, before its first section. The control: the block
// of a catalogue with one more row differs.
func TestStudyIndexIsFresh(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("../..", indexPage))
	require.NoError(t, err)
	fresh, err := study.WithIndex(string(page), study.Index(study.Studies))
	require.NoError(t, err)
	assert.Equal(t, fresh, string(page), "docs/results/README.md's index is stale: run go run ./cmd/compare -study index")
	stale, err := study.WithIndex(string(page), study.Index(append(slices.Clone(study.Studies), scratch)))
	require.NoError(t, err)
	assert.NotEqual(t, stale, string(page), "the control")

	begin := strings.Index(string(page), study.IndexBegin)
	first := regexp.MustCompile(`(?m)^## `).FindIndex(page)
	require.NotNil(t, first)
	assert.Less(t, begin, first[0], "the index opens the page")
	assert.Less(t, strings.Count(string(page[:begin]), "\n"), 5, "the index opens the page")
}

// TestStudyFlag: -study NAME lays out every plan of the row with the other
// flags added and its -out under the row's folder (or under -out); list and
// index take no other flag; a bad name, a bad added flag or -study inside
// a plan are clear errors.
func TestStudyFlag(t *testing.T) {
	cores, err := study.Lookup(study.Studies, "cores")
	require.NoError(t, err)
	for _, args := range [][]string{{"-study", "cores", "-reps", "2"}, {"-reps", "2", "-study=cores"}, {"--study", "cores", "-reps=2"}} {
		c, err := parseFlags(args, io.Discard)
		require.NoError(t, err, args)
		require.NotNil(t, c.study, args)
		require.Len(t, c.study.plans, len(cores.Plans))
		for i, p := range c.study.plans {
			assert.Equal(t, cores.Folder(cores.Plans[i]), p.cfg.Out)
			assert.Equal(t, 2, p.cfg.Reps)
		}
	}
	c, err := parseFlags([]string{"-study", "cores", "-out", "/tmp/scratch"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join("/tmp/scratch", cores.Plans[0].Sub), c.study.plans[0].cfg.Out, "-out moves the study's folder")

	var out bytes.Buffer
	c, err = parseFlags([]string{"-study", "list"}, io.Discard)
	require.NoError(t, err)
	require.NoError(t, c.run(context.Background(), &out, io.Discard))
	for _, s := range study.Studies {
		assert.Regexp(t, `(?m)^  `+regexp.QuoteMeta(s.Name)+` `, out.String())
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-study", "soak"}, `-study "soak": want list, index or one of the studies:`},
		{[]string{"-study", "list", "-reps", "2"}, "-study list takes no other flag"},
		{[]string{"-study", "cores", "-reps", "0"}, "-study cores: plan"},
		{[]string{"-study", "cores", "-out="}, "-study cores -out: give a folder"},
		{[]string{"-study", "seed-bank", "-reps", "2"}, "-study seed-bank runs no plan of the runner, only cmd/seeds"},
	} {
		_, err := parseFlags(tt.args, io.Discard)
		assert.ErrorContains(t, err, tt.want, tt.args)
	}
	_, err = parseFlags([]string{"-study", "seed-bank", "-server", "bin/locklab", "-k6", "bin/k6"}, io.Discard)
	assert.NoError(t, err, "the control: the binaries make study gives every study")
	_, err = parseFlagsAs([]string{"-study", "cores"}, io.Discard, study.Runner)
	assert.ErrorContains(t, err, "a plan names no other study")
}

// TestStudyBadNameExits2: main exits 2 on an unknown study, listing the
// studies, and runs nothing.
func TestStudyBadNameExits2(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-study", "soak") // main, through TestMain
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	got, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "want an exit status, got %v: %s", err, got)
	assert.Equal(t, 2, ee.ExitCode())
	for _, s := range study.Studies {
		assert.Contains(t, string(got), "  "+s.Name+" ")
	}
}

// TestStudySeedsStep: a seed row's step runs cmd/seeds through the go
// command with {out} and {server} filled in and the study's command in
// LOCKLAB_COMMAND. A stand-in go command records what it was asked; the
// control: a row without a seeds step runs nothing.
func TestStudySeedsStep(t *testing.T) {
	dir := t.TempDir()
	fakeGo := filepath.Join(dir, "go")
	record := filepath.Join(dir, "asked")
	require.NoError(t, os.WriteFile(fakeGo, []byte("#!/bin/sh\necho \"$LOCKLAB_COMMAND|$*\" >> "+record+"\n"), 0o755))
	t.Setenv("GO", fakeGo)
	t.Setenv("LOCKLAB_COMMAND", "make study NAME=seed-x")
	row := study.Study{Name: "seed-x", Engine: study.Seed, Out: "seeds/x", SeedArgs: "bank -out {out} -server {server}", Desc: "a row of a test"}
	cat := append(slices.Clone(study.Studies), row)
	s, err := newStudyRunFrom(cat, "seed-x", []string{"-study", "seed-x", "-server", "/srv/locklab"}, "")
	require.NoError(t, err)
	require.NoError(t, s.run(context.Background(), io.Discard, io.Discard))
	got, err := os.ReadFile(record)
	require.NoError(t, err)
	assert.Equal(t, "make study NAME=seed-x|run ./cmd/seeds bank -out docs/results/seeds/x -server /srv/locklab\n", string(got))

	row.Name, row.SeedArgs, row.Engine, row.Plans, row.Out = "plain", "", study.Runner, nil, "plain"
	assert.Nil(t, row.Seeds(row.Root(), "/srv/locklab"), "the control")
}

// TestBurstStartsAndStops: a Burst row's background load runs in a process
// group of its own, busy on the CPUs, and stopping it leaves no process of
// the group. The control: before the stop, the group is there.
func TestBurstStartsAndStops(t *testing.T) {
	t.Chdir("../..") // the script's path is the repository's
	t.Setenv("BURST_ON", "0.2")
	t.Setenv("BURST_EVERY", "0.4")
	var warn bytes.Buffer
	stop, pgid, err := startBurstGroup(&warn)
	require.NoError(t, err)
	time.Sleep(300 * time.Millisecond)
	assert.NotEmpty(t, running(t, pgid), "the control: the load runs")
	stop()
	assert.Eventually(t, func() bool { return len(running(t, pgid)) == 0 }, 2*time.Second, 20*time.Millisecond,
		"the load stopped: %s", warn.String())
}

// running are the processes of the group pgid that have not exited (a
// zombie waits for its parent, or for init, to collect it: it runs nothing).
func running(t *testing.T, pgid int) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	require.NoError(t, err)
	var out []string
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces, not ')'.
		_, rest, ok := strings.Cut(string(b), ") ")
		fields := strings.Fields(rest)
		if ok && len(fields) > 2 && fields[2] == strconv.Itoa(pgid) && fields[0] != "Z" {
			out = append(out, f)
		}
	}
	return out
}

// TestStudyRunsEveryPlan runs a throw-away study of two small plans against
// the real server and Go driver: each plan writes its sub-folder, the runs
// of an earlier run there go first (isolated or side by side), and each plan's meta.json names the
// study's command and the plan.
func TestStudyRunsEveryPlan(t *testing.T) {
	server, _, loadBin := binaries(t)
	base := "-measure isolated -driver go -workloads counter -vus 2 -duration 1s -warmup 0 -reps 1 -aa=false -max-foreign 100% -seed 7"
	row := study.Study{Name: "scratch", Engine: study.Runner, Out: "scratch", Desc: "a row of a test", Plans: []study.Plan{
		{Sub: "a", Args: base + " -modes mutex,noop"},
		{Sub: "b", Args: base + " -modes inputQ,noop -baseline inputQ"},
	}}
	out := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(out, "a"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(out, "a", record.RunsArchive), []byte("an earlier run"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(out, "a", record.VolumeName(2)), []byte("its second volume"), 0o644))
	for _, f := range []string{run.DuetMetaFile, run.DuetRoundsFile} { // an earlier side-by-side run's
		require.NoError(t, os.WriteFile(filepath.Join(out, "a", f), []byte("an earlier run"), 0o644))
	}
	t.Setenv("LOCKLAB_COMMAND", "make study NAME=scratch")
	s, err := newStudyRunFrom(append(slices.Clone(study.Studies), row), "scratch",
		[]string{"-study", "scratch", "-server", server, "-load", loadBin, "-out", out}, "")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var progress strings.Builder
	require.NoError(t, s.run(ctx, &progress, &progress), progress.String())
	for _, p := range row.Plans {
		dir := filepath.Join(out, p.Sub)
		assert.NoFileExists(t, filepath.Join(dir, record.RunsArchive), "the earlier run's archive went")
		assert.NoFileExists(t, filepath.Join(dir, record.VolumeName(2)), "every volume of it")
		assert.NoFileExists(t, filepath.Join(dir, run.DuetMetaFile), "and its side-by-side records")
		assert.NoFileExists(t, filepath.Join(dir, run.DuetRoundsFile))
		assert.DirExists(t, filepath.Join(dir, record.RunsDir))
		meta, err := record.LoadMeta(os.DirFS(dir))
		require.NoError(t, err)
		assert.Equal(t, "make study NAME=scratch: compare "+p.Args, meta.Command)
	}
}

// folderProblem says why a results folder does not hold one run's records
// alone, or "": side-by-side records (duet.json) beside an isolated run's
// (meta.json) or its archive, or a volume no archive begins.
func folderProblem(dir string) string {
	has := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	volumes, err := record.Volumes(dir)
	switch {
	case err != nil:
		return err.Error()
	case has(run.DuetMetaFile) && has(record.MetaFile):
		return "side-by-side records beside an isolated run's " + record.MetaFile
	case has(run.DuetMetaFile) && len(volumes) > 0:
		return "side-by-side records beside an isolated run's archive"
	}
	return ""
}

// TestCommittedStudiesHoldOneRun: every folder under docs/results holds
// the records of one run, as a study's run leaves it (clearEarlierRun);
// the controls are folders holding an earlier run's files beside a new
// one's.
func TestCommittedStudiesHoldOneRun(t *testing.T) {
	root := filepath.Join("..", "..", study.Dir)
	n := 0
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		n++
		assert.Empty(t, folderProblem(p), "%s: an earlier run's files left beside the latest (a study's run clears them)", p)
		return nil
	}))
	require.Greater(t, n, 20)

	plant := func(names ...string) string {
		dir := t.TempDir()
		for _, f := range names {
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644))
		}
		return dir
	}
	assert.Empty(t, folderProblem(plant(run.DuetMetaFile, run.DuetRoundsFile)))
	assert.Empty(t, folderProblem(plant(record.MetaFile, record.RunsArchive, record.VolumeName(2))))
	assert.Contains(t, folderProblem(plant(run.DuetMetaFile, record.MetaFile)), "beside an isolated run's meta.json")
	assert.Contains(t, folderProblem(plant(run.DuetMetaFile, record.RunsArchive)), "beside an isolated run's archive")
	assert.NotEmpty(t, folderProblem(plant(run.DuetMetaFile, record.VolumeName(2))), "a volume no archive begins")
}
