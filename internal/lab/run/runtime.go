package run

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
)

// serverPackage is the server's main package, which every -runtime value
// builds: the module's root, found from the working directory (the
// runner runs inside the module, as make does).
const serverPackage = "github.com/locklab/locklab"

// goCommand is the go command that builds the servers: the one on PATH,
// which fetches any other toolchain GOTOOLCHAIN names through the module
// proxy, once, into the module cache.
const goCommand = "go"

// buildRuntimes builds a server binary for every -runtime value but local
// (the -server binary as it is), before any run, and reads `go version -m`
// of each, the -server binary's too. A value that cannot be built stops
// the comparison, naming it with the go command's own words. The binaries
// live beside -server, one folder per value (bin/runtime/go1.27.3/locklab):
// each build reruns go build, which the go command's cache makes quick
// when nothing changed, so a binary is never older than the code.
func buildRuntimes(cfg Config) ([]record.RuntimeBuild, error) {
	var out []record.RuntimeBuild
	for _, v := range cfg.Factors.Values(plan.Runtime) {
		b := record.RuntimeBuild{Runtime: v, Binary: cfg.Server}
		if v != plan.RuntimeLocal {
			b.Toolchain, b.Experiments = plan.RuntimeBuild(v)
			b.Binary = filepath.Join(filepath.Dir(cfg.Server), "runtime", v, "locklab")
			if err := buildServer(b); err != nil {
				return nil, err
			}
		}
		var err error
		b.BuildInfo, err = buildInfo(b.Binary)
		switch {
		case err != nil && v != plan.RuntimeLocal:
			return nil, fmt.Errorf("-runtime %s: %w", v, err)
		case err != nil:
			// The -server binary: preflight says so if it is missing; one
			// that go cannot read is recorded without its build.
		case b.Toolchain != "" && b.Toolchain != plan.RuntimeLocal && !strings.HasPrefix(b.Version(), b.Toolchain):
			return nil, fmt.Errorf("-runtime %s: asked GOTOOLCHAIN=%s, the go command built %q", v, b.Toolchain, b.Version())
		}
		out = append(out, b)
	}
	return out, nil
}

// buildServer runs GOTOOLCHAIN=<toolchain> GOEXPERIMENT=<experiments> go
// build. Both are set, so that the caller's environment cannot add an
// experiment or pick another toolchain behind the value's back.
func buildServer(b record.RuntimeBuild) error {
	if err := os.MkdirAll(filepath.Dir(b.Binary), 0o755); err != nil {
		return fmt.Errorf("-runtime %s: %w", b.Runtime, err)
	}
	cmd := exec.Command(goCommand, "build", "-o", b.Binary, serverPackage)
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN="+b.Toolchain, "GOEXPERIMENT="+b.Experiments)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("-runtime %s: cannot build the server (GOTOOLCHAIN=%s GOEXPERIMENT=%s go build %s): %v: %s",
			b.Runtime, b.Toolchain, b.Experiments, serverPackage, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// buildInfo is `go version -m` of a binary, read by the go command's own
// toolchain.
func buildInfo(bin string) (string, error) {
	cmd := exec.Command(goCommand, "version", "-m", bin)
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go version -m %s: %v: %s", bin, err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// serverFor is the server binary of a run at pt: its runtime's build, or
// -server.
func (cfg Config) serverFor(pt plan.Point) (string, error) {
	v := pt.Get(plan.Runtime)
	for _, b := range cfg.Builds {
		if b.Runtime == v {
			return b.Binary, nil
		}
	}
	if v == plan.RuntimeLocal {
		return cfg.Server, nil
	}
	return "", fmt.Errorf("-runtime %s: no server was built for it", v)
}
