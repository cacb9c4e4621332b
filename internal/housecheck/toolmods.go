package housecheck

import (
	"fmt"
	"slices"
	"strings"
)

// ToolsModule is the go.mod that pins k6, benchstat and protoc's Go
// plugins. It requires the modules k6 shares with the server (grpc,
// protobuf, x/net, the Prometheus client, go-redis, …) at the versions the
// main go.mod requires, so that a build compiles each shared package once
// for both: `make test` builds k6 and the server from one build cache, and
// a package at another version is another compile. (tools/ghz/go.mod is
// apart on purpose: its dependencies may not move k6's. ghz v0.121.0 also
// builds with go.mod's grpc, but compiles no less so: that grpc's xDS
// packages, which ghz imports, cost what its own older grpc does.)
const ToolsModule = "tools/go.mod"

// SharedVersions names every module that both go.mod files require at
// different versions: what the main go.mod requires, what the tools' one
// does. The files are read line by line, as `go mod` writes them: a
// require block or a one-line require, "path version" and any comment.
func SharedVersions(mainMod, toolsMod []byte) []Problem {
	m, t := requires(mainMod), requires(toolsMod)
	var problems []Problem
	for path, want := range m {
		if got, ok := t[path]; ok && got != want {
			problems = append(problems, Problem{Path: ToolsModule, Why: fmt.Sprintf("requires %s %s, go.mod %s: a shared package would be compiled twice", path, got, want)})
		}
	}
	slices.SortFunc(problems, func(a, b Problem) int { return strings.Compare(a.Why, b.Why) })
	return problems
}

// requires maps each module a go.mod requires to its version.
func requires(mod []byte) map[string]string {
	out := map[string]string{}
	for _, r := range requirements(mod) {
		out[r.path] = r.version
	}
	return out
}

// requirement is one module a go.mod requires.
type requirement struct {
	path, version string
	indirect      bool // marked "// indirect"
}

// requirements are the modules a go.mod requires, in its order.
func requirements(mod []byte) []requirement {
	var out []requirement
	inBlock := false
	for line := range strings.Lines(string(mod)) {
		line, comment, _ := strings.Cut(line, "//")
		indirect := strings.TrimSpace(comment) == "indirect"
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "require" && f[1] == "(":
			inBlock = true
		case inBlock && len(f) == 1 && f[0] == ")":
			inBlock = false
		case inBlock && len(f) == 2:
			out = append(out, requirement{f[0], f[1], indirect})
		case !inBlock && len(f) == 3 && f[0] == "require":
			out = append(out, requirement{f[1], f[2], indirect})
		}
	}
	return out
}

// IndirectMarkers names every module go.mod marks wrongly: "// indirect"
// on a module a package of the module imports (tests included), or none on
// a module that no package imports, as `go mod tidy` would mark them.
// imports are the import paths of the module's packages and their tests.
func IndirectMarkers(mod []byte, imports []string) []Problem {
	reqs := requirements(mod)
	imported := map[string]bool{}
	for _, imp := range imports {
		// The longest module path the import is in: a module may sit
		// inside another's path (a/b and a/b/v2).
		best := ""
		for _, r := range reqs {
			if (imp == r.path || strings.HasPrefix(imp, r.path+"/")) && len(r.path) > len(best) {
				best = r.path
			}
		}
		if best != "" {
			imported[best] = true
		}
	}
	var problems []Problem
	for _, r := range reqs {
		switch {
		case r.indirect && imported[r.path]:
			problems = append(problems, Problem{Path: "go.mod", Why: r.path + " is marked indirect, but the module imports it"})
		case !r.indirect && !imported[r.path]:
			problems = append(problems, Problem{Path: "go.mod", Why: r.path + " is required directly, but no package of the module imports it"})
		}
	}
	return problems
}
