package main

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Meta is what a reader needs to reproduce a comparison: the command, the
// configuration (every factor swept, the CPU split), the machine and the
// versions.
type Meta struct {
	Command       string      `json:"command"`
	Started       time.Time   `json:"started"`
	Finished      time.Time   `json:"finished"`
	Workloads     []string    `json:"workloads"`
	Modes         []string    `json:"modes"`
	Drivers       []string    `json:"drivers"`
	Model         string      `json:"model"`
	Levels        []int       `json:"levels"`
	H2loadLevels  []int       `json:"h2load_levels,omitempty"`
	Conns         int         `json:"conns"`
	Factors       FactorSpace `json:"factors"`
	NA            []NA        `json:"not_applicable,omitempty"`
	Duration      string      `json:"duration"`
	Warmup        string      `json:"warmup"`
	Reps          int         `json:"reps"`
	ServerCPUs    []int       `json:"server_cpus"` // empty: not pinned
	DriverCPUs    []int       `json:"driver_cpus"`
	CPUs          int         `json:"cpus"`
	CPUModel      string      `json:"cpu_model"`
	MemTotal      string      `json:"mem_total"`
	Kernel        string      `json:"kernel"`
	GoVersion     string      `json:"go_version"`
	K6Version     string      `json:"k6_version,omitempty"`
	H2loadVersion string      `json:"h2load_version,omitempty"`
	GitCommit     string      `json:"git_commit"`
	GitDirty      bool        `json:"git_dirty"`
	Hostname      string      `json:"hostname"`
	MaxVUsOpen    int         `json:"max_vus_open,omitempty"`
}

func newMeta(cfg Config) Meta {
	m := Meta{
		Command:    cfg.Command,
		Started:    time.Now().UTC(),
		Model:      cfg.Model,
		Modes:      cfg.Modes,
		Drivers:    cfg.Drivers,
		Levels:     cfg.Levels,
		Conns:      cfg.Conns,
		Factors:    cfg.Factors,
		NA:         naCells(cfg),
		Duration:   cfg.Duration.String(),
		Warmup:     cfg.Warmup.String(),
		Reps:       cfg.Reps,
		ServerCPUs: cfg.ServerCPUs,
		DriverCPUs: cfg.DriverCPUs,
		CPUs:       runtime.NumCPU(),
		GoVersion:  runtime.Version(),
	}
	if cfg.Model == "open" {
		m.MaxVUsOpen = cfg.MaxVUs
	}
	for _, w := range cfg.Workloads {
		m.Workloads = append(m.Workloads, w.Name)
	}
	m.CPUModel = procField("/proc/cpuinfo", "model name")
	m.MemTotal = procField("/proc/meminfo", "MemTotal")
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.Hostname, _ = os.Hostname()
	for _, d := range cfg.Drivers {
		switch d {
		case "k6":
			m.K6Version = firstLine(output(cfg.K6, "version"))
		case "h2load":
			m.H2loadVersion = firstLine(output(cfg.H2load, "--version"))
			m.H2loadLevels = cfg.H2loadLevels
		}
	}
	m.GitCommit = firstLine(output("git", "rev-parse", "--short", "HEAD"))
	m.GitDirty = output("git", "status", "--porcelain", "--untracked-files=no") != ""
	return m
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
