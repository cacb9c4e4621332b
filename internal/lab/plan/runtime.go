package plan

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Runtime is the name of the factor that chooses the Go runtime the server
// is built with: a toolchain and, optionally, experiments, each value a
// server binary of its own. A verdict measured on one Go release may not
// hold on the next (a new runtime mutex, a new garbage collector, a new
// allocator), and this factor asks.
//
// Its values are arms (Factor.Arm): every block runs every design on every
// runtime, in the block's drawn order, so that each design is compared with
// the others on each runtime and with itself across runtimes, block by
// block. The driver is the same program for every runtime: only the server
// changes.
const Runtime = "runtime"

// RuntimeLocal is the default: the -server binary as it is (make build's,
// by the go command's own toolchain); the runner builds nothing for it.
const RuntimeLocal = "local"

var (
	// toolchainName is a Go toolchain as GOTOOLCHAIN names one: go1.26.8,
	// go1.27rc1; or local.
	toolchainName = regexp.MustCompile(`^(local|go1\.[0-9]+(\.[0-9]+|(rc|beta)[0-9]+))$`)
	// experimentName is a GOEXPERIMENT item: nogreenteagc.
	experimentName = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
)

// runtimeFactor is the row of Factors. A value is a toolchain with its
// experiments joined by +, sorted, so that two spellings are one value:
// "go1.27.3", "go1.26.8+nogreenteagc", "local+nogreenteagc".
var runtimeFactor = &Factor{
	Name: Runtime, JSON: "runtime", Label: "runtime", Default: RuntimeLocal,
	Usage: "comma-separated Go runtimes of the server, each a toolchain (go1.26.8, go1.27.3; local: the -server binary as built) " +
		"with optional experiments joined by + (go1.26.8+nogreenteagc); the runner builds a server for every value but local " +
		"(GOTOOLCHAIN, GOEXPERIMENT) and runs every design on every runtime in each block",
	Parse:       parseRuntime,
	Encode:      func(v string) any { return v },
	Decode:      decodeString,
	ID:          func(v string) string { return "-rt" + strings.ReplaceAll(v, "+", ".") },
	Arm:         true,
	OmitDefault: true,
}

// parseRuntime reads one item of -runtime. Whether the toolchain exists
// and knows the experiments is the build's to say (the runner builds every
// value before any run).
func parseRuntime(it string) (string, error) {
	parts := strings.Split(it, "+")
	tc, exps := parts[0], parts[1:]
	if !toolchainName.MatchString(tc) {
		return "", fmt.Errorf("-runtime: %q: %q is not a Go toolchain name (go1.26.8, go1.27rc1) or local", it, tc)
	}
	for _, e := range exps {
		if !experimentName.MatchString(e) {
			return "", fmt.Errorf("-runtime: %q: %q is not a GOEXPERIMENT name (lower-case letters and digits, e.g. nogreenteagc)", it, e)
		}
	}
	slices.Sort(exps)
	if len(slices.Compact(slices.Clone(exps))) != len(exps) {
		return "", fmt.Errorf("-runtime: %q names an experiment twice", it)
	}
	return strings.Join(append([]string{tc}, exps...), "+"), nil
}

// RuntimeBuild splits a -runtime value into what the go command is given:
// GOTOOLCHAIN and GOEXPERIMENT (comma-separated, "" for none).
func RuntimeBuild(v string) (toolchain, experiments string) {
	parts := strings.Split(v, "+")
	return parts[0], strings.Join(parts[1:], ",")
}
