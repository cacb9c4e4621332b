package run

import (
	"cmp"
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/locklab/locklab/internal/ghz"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/summary"
)

// GhzVersion is the only ghz the runner accepts: the version tools/ghz/go.mod
// pins (ghz_test.go checks that the two agree), read back from the binary's
// build information, since a ghz built from source reports "dev" to
// --version.
const GhzVersion = "v0.121.0"

// ghzModule is ghz's module path, as a binary's build information names it.
const ghzModule = "github.com/bojand/ghz"

// GhzEnv names the environment variable that overrides the ghz binary
// (bin/ghz, where `make ghz` builds it).
const GhzEnv = "GHZ"

// ghzDriver is ghz, the bank seed's load generator. It sends one method per
// run: in a comparison, the counter's Increment (the one workload whose
// whole mix is one method); the seeds choose other cases and a fixed number
// of calls (RunCounted).
type ghzDriver struct {
	Case  string // the workload's case; "": its first case ghz can send
	Total int    // > 0: the measured run sends exactly Total calls (ghz -n)
}

func (ghzDriver) Name() string { return "ghz" }
func (ghzDriver) Doc() string {
	return "ghz " + GhzVersion + " (the bank seed's tool; make ghz): one method per run, the counter's Increment"
}

// Serves: a comparison's workload is a mix of methods except the counter's.
// The open model is ghz's --rps with --async: calls start at the rate
// whether or not earlier ones have answered.
func (ghzDriver) Serves(wl plan.Workload, _ string) bool { return wl.Kind == "counter" }

func (ghzDriver) Binary(Config) (path, hint string) { return ghzBinary(), "make ghz" }

func ghzBinary() string { return cmp.Or(os.Getenv(GhzEnv), "bin/ghz") }

// GhzBinary is the ghz the runner runs: $GHZ, else bin/ghz.
func GhzBinary() string { return ghzBinary() }

// CheckGhz is the preflight's check of ghz, for programs that run it
// themselves.
func CheckGhz() error { return ghzDriver{}.Check(Config{}) }

// ghzBuild is the version of ghz a binary was built from.
func ghzBuild(path string) (string, error) {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: not a Go binary with build information (%w): run `make ghz`", path, err)
	}
	if info.Main.Path == ghzModule {
		return info.Main.Version, nil
	}
	for _, d := range info.Deps {
		if d.Path == ghzModule {
			return d.Version, nil
		}
	}
	return "", fmt.Errorf("%s is not ghz (built from %s): run `make ghz`", path, info.Main.Path)
}

// Check refuses a ghz of another version than the pinned one, and a working
// directory without the API's .proto, which ghz reads.
func (ghzDriver) Check(Config) error {
	proto := filepath.Join(ghz.ProtoDir, ghz.Proto)
	if _, err := os.Stat(proto); err != nil {
		return fmt.Errorf("ghz reads the API from %s: run from the repository's root (%w)", proto, err)
	}
	path := ghzBinary()
	v, err := ghzBuild(path)
	if err != nil {
		return err
	}
	return ghzPinned(path, v)
}

func ghzPinned(path, version string) error {
	if version != GhzVersion {
		return fmt.Errorf("%s is ghz %s; the runner reads ghz %s's output: run `make ghz`", path, version, GhzVersion)
	}
	return nil
}

func (ghzDriver) Version(Config) string {
	v, err := ghzBuild(ghzBinary())
	if err != nil {
		return ""
	}
	return "ghz " + v
}

// ghzReport is where ghz writes its JSON report: scratch, since it holds
// every call (tens of bytes each) and the summary keeps what matters.
func ghzReport(job Job) string {
	if job.Warmup {
		return filepath.Join(job.Scratch, "ghz-warmup.json")
	}
	return filepath.Join(job.Scratch, "ghz.json")
}

// Command: closed, the level is ghz's concurrency (-c), spread over the
// runner's connections; open, the level is the rate. The warm-up runs for
// its duration; the measured run too (-z, every call in flight at the end
// waited for and counted, so the counter check is exact), or for Total calls.
func (d ghzDriver) Command(cfg Config, job Job) ([]string, []string, error) {
	s := job.Spec
	call, err := ghz.Lookup(s.WorkloadDef().Kind, d.Case, s.Scenario)
	if err != nil {
		return nil, nil, err
	}
	argv := append([]string{ghzBinary()}, call.Args()...)
	workers := s.Level
	if s.Model == "open" {
		workers = min(cfg.MaxVUs, s.Level)
		argv = append(argv, "--rps", strconv.Itoa(s.Level), "--async")
	}
	conns := workers
	if cfg.Conns > 0 {
		conns = min(cfg.Conns, workers)
	}
	argv = append(argv, "-c", strconv.Itoa(workers), "--connections", strconv.Itoa(conns))
	argv = append(argv, "--cpus", strconv.Itoa(cfg.gomaxprocs(job.Place.Driver))) // ghz sets GOMAXPROCS itself
	if d.Total > 0 && !job.Warmup {
		argv = append(argv, "-n", strconv.Itoa(d.Total))
	} else {
		argv = append(argv, "-z", job.Duration.String(), "--duration-stop", "wait")
	}
	return append(argv, "-O", "json", "-o", ghzReport(job), job.Addr), nil, nil
}

// Result reads ghz's report and writes the summary, as the other drivers do.
func (d ghzDriver) Result(cfg Config, job Job) (*summary.Summary, error) {
	call, err := ghz.Lookup(job.Spec.WorkloadDef().Kind, d.Case, job.Spec.Scenario)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(ghzReport(job))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rep, err := ghz.ReadReport(f)
	if err != nil {
		return nil, err
	}
	res, err := rep.Summary(call, job.Spec.Scenario, d.Version(cfg))
	if err != nil {
		return nil, err
	}
	if job.Summary != "" {
		if err := res.WriteFile(job.Summary); err != nil {
			return nil, err
		}
	}
	return res, nil
}
