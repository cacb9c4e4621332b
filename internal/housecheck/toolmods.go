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
	inBlock := false
	for line := range strings.Lines(string(mod)) {
		line, _, _ = strings.Cut(line, "//")
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "require" && f[1] == "(":
			inBlock = true
		case inBlock && len(f) == 1 && f[0] == ")":
			inBlock = false
		case inBlock && len(f) == 2:
			out[f[0]] = f[1]
		case !inBlock && len(f) == 3 && f[0] == "require":
			out[f[1]] = f[2]
		}
	}
	return out
}
