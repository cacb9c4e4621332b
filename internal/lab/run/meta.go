package run

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/workload/dbbank/dbinst"
)

func newMeta(cfg Config, na []plan.NA) record.Meta {
	m := record.Meta{
		Command:    cfg.Command,
		Started:    time.Now().UTC(),
		Model:      cfg.Model,
		Modes:      cfg.Modes,
		Drivers:    cfg.Drivers,
		Levels:     cfg.Levels,
		Conns:      cfg.Conns,
		Factors:    cfg.Factors,
		NA:         na,
		Duration:   cfg.Duration.String(),
		Warmup:     cfg.Warmup.String(),
		Reps:       cfg.Reps,
		Seed:       &cfg.Seed,
		Baseline:   cfg.Baseline,
		ServerCPUs: cfg.ServerCPUs,
		DriverCPUs: cfg.DriverCPUs,
		ShareCPUs:  cfg.ShareCPUs,
		CPUs:       runtime.NumCPU(),
		GoVersion:  runtime.Version(),
		Runtimes:   cfg.Builds,
		Gate:       new(record.Gate),
	}
	*m.Gate = cfg.Gate
	if cfg.Model == "open" {
		m.MaxVUsOpen = cfg.MaxVUs
	}
	for _, w := range cfg.Workloads {
		m.Workloads = append(m.Workloads, w.Name)
	}
	m.CPUModel, m.Kernel = hostFacts()
	m.MemTotal = procField("/proc/meminfo", "MemTotal")
	m.Hostname, _ = os.Hostname()
	for _, name := range cfg.Drivers {
		d, _ := LookupDriver(name)
		switch name {
		case "k6":
			m.K6Version = d.Version(cfg)
		case "h2load":
			m.H2loadVersion = d.Version(cfg)
			m.H2loadLevels = cfg.H2loadLevels
		}
	}
	if slices.ContainsFunc(cfg.Factors.Values(plan.Backend), plan.OverDatabase) {
		m.MariaDBVersion = dbinst.MariaDBVersion()
	}
	if slices.ContainsFunc(cfg.Factors.Values(plan.Cache), plan.Cached) {
		m.RedisVersion = dbinst.RedisVersion()
	}
	m.GitCommit, m.GitDirty = workTree()
	return m
}

// workTree is the commit HEAD names and whether the code has changed
// since (gitDirty).
func workTree() (commit string, dirty bool) {
	return firstLine(output("git", "rev-parse", "--short", "HEAD")), gitDirty("")
}

// ResultsDir is where the repository keeps committed results. Changes
// under it are data, not code: a study that replaces its own folder there
// (make study NAME=...) still runs the commit it names.
const ResultsDir = "docs/results"

// gitDirty reports whether the work tree in dir ("" for the current
// directory) has uncommitted changes to tracked files outside ResultsDir
// and other than Markdown: changes to the code that the commit alone
// would not name. Prose (README.md, docs/) is not built into anything a
// run starts; a golden file (*.golden) is a test's and counts as code.
func gitDirty(dir string) bool {
	args := []string{"status", "--porcelain", "--untracked-files=no", "--", ":(top)", ":(top,exclude)" + ResultsDir, ":(top,exclude,glob)**/*.md"}
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	return output("git", args...) != ""
}

// hostFacts is what a results folder records of the machine it was measured
// on: its CPU's model name ("" where /proc/cpuinfo names none, as on many
// arm64 kernels) and the kernel's release. The same code can answer
// differently on another CPU model, so a reader comparing two folders
// reads them here.
func hostFacts() (cpuModel, kernel string) {
	cpuModel = procField("/proc/cpuinfo", "model name")
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(b))
	}
	return cpuModel, kernel
}

func procField(path, key string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func output(name string, args ...string) string {
	var out bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout = &out
	if cmd.Run() != nil {
		return ""
	}
	return strings.TrimSpace(out.String())
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
