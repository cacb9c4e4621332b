package housecheck

import (
	"bytes"
	"cmp"
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// A Package is one package of the module as the layering check sees it.
type Package struct {
	Path    string   // import path, relative to the module: "load", "internal/lab/run"; "" the root
	Main    bool     // a command
	Imports []string // the module's packages it imports (not its tests), relative as Path
}

// Lab is the comparison runner's tree: it sits on top of the libraries it
// measures, so that none of them depends on the way the lab measures them.
const Lab = "internal/lab"

// Shared is a package of Lab that libraries may import, and why.
type Shared struct{ Path, Why string }

// LabShared are the packages of Lab that a library outside it may import,
// each with its reason; every other package of Lab is the runner's alone.
var LabShared = []Shared{
	{
		Path: Lab + "/paired",
		Why:  "the paired statistics: storeverdict judges a user's own benchmark rounds with the lab's own rules, not a copy of them",
	},
	{
		Path: Lab + "/cpuset",
		Why:  "the machine's foreign CPU from /proc/stat and the gate's default share: storeverdict's gate on a user's rounds is the runner's rule and arithmetic, not a copy of them",
	},
}

// ServerFree are packages of Lab that must not link the server's code
// (ServerCode), directly or through another package, each with its reason.
var ServerFree = []Shared{
	{
		Path: Lab + "/plan",
		Why:  "the plan names the server's backends, caches and pool (package backend) and links none of its code: the record and the report read the plan, and need not build the server, its database driver and its cache client",
	},
}

// Slices are the lab's feature packages, each with its reason: a feature's
// plan, run, record and report parts in one package. The packages every
// feature shares (Common) know a feature only through an interface
// (report.Part, report.Kind); package render holds the one list of them.
var Slices = []Shared{
	{
		Path: Lab + "/capacity",
		Why:  "the open-loop capacity study: its objective, ladder and knee finder, capacity.json and its own report",
	},
	{
		Path: Lab + "/cores",
		Why:  "the cores section: the bound where it was measured, the mean-value model and the crossover it predicts (its maths are bottleneck's and mva's)",
	},
	{
		Path: Lab + "/why",
		Why:  "the Why section: where each design's server CPU went in the profiled runs, and what profiling cost (the fold itself is attrib's)",
	},
	{
		Path: Lab + "/latencyledger",
		Why:  "the ledger's section: where each call's time went by state in the traced runs, the store's clocks, and what tracing cost (the trace's reading is ledger's)",
	},
}

// SliceKits are packages of Lab that several slices share and no common
// package needs, each with its reason: they sit between Common and Slices,
// and the common packages must reach them no more than a slice, so that
// the report carries only what every report shares.
var SliceKits = []Shared{
	{
		Path: Lab + "/instrumented",
		Why:  "what the sections over instrumented runs share (the Why's profiled runs, the ledger's traced ones): the cells where only some runs speak, differences paired by block, medians, and what the instrument cost",
	},
}

// Common are the packages of Lab that every feature builds on, and that
// must reach no package of Slices, through any chain of imports: a feature
// added or removed changes its slice and render's list, not them.
var Common = []string{Lab + "/plan", Lab + "/record", Lab + "/report"}

// Runner is the lab's package that starts processes on the machine: the
// server, the drivers, the CPU sampling.
const Runner = Lab + "/run"

// RunnerFree are packages of Lab that must not link the runner (Runner),
// directly or through another package, each with its reason: a results
// folder is enough to rebuild every report, so what reads one starts no
// process.
var RunnerFree = []Shared{
	{
		Path: Lab + "/render",
		Why:  "the one list of the report's parts and kinds: -rerender and -pack build every report from a folder through it",
	},
	{
		Path: Lab + "/capacity",
		Why:  "the capacity study's record and report, which render lists: its engine, which drives the runner, is the sub-package capacity/runner",
	},
}

// ServerCode are the server's packages (each with the packages under it):
// the server and its command's code, and the bank over a database.
var ServerCode = []string{"server", "workload/dbbank"}

// ServerInternal are internal packages outside the server's own tree
// that the server's public packages (ServerCode) may import, each with its
// reason. The server's own internal packages (server/internal/...) need no
// row: they are its implementation, as the go command reads internal/.
var ServerInternal = []Shared{
	{
		Path: "internal/work",
		Why:  "the critical section's calibrated work (the server's -work): the runner's attribution and ledger tests spin it to check known answers, so it cannot live under server/internal/",
	},
}

// Layers checks the module's import graph. Five rules hold:
//
//   - A public package (a library outside internal/) imports no internal
//     package but its own (under its own tree, server/internal/... for
//     server) and, for the server's packages, those ServerInternal names:
//     a public package would otherwise lean on code with no promise of
//     stability that it does not own.
//   - A library (any package but a command) outside Lab imports from Lab
//     only what LabShared names.
//   - A package ServerFree names reaches no package of ServerCode, through
//     any chain of imports.
//   - A package Common names reaches no package of Slices or SliceKits,
//     through any chain of imports.
//   - A package RunnerFree names reaches no Runner, through any chain of
//     imports.
//
// Commands may import anything; tests are not counted.
func Layers(pkgs []Package) []Problem {
	var out []Problem
	for _, sf := range ServerFree {
		if chain := reach(pkgs, sf.Path, isServer); chain != nil {
			out = append(out, Problem{Path: display(sf.Path), Why: "links the server's code: " + strings.Join(chain, " -> ")})
		}
	}
	for _, c := range Common {
		if chain := reach(pkgs, c, isSlice); chain != nil {
			out = append(out, Problem{Path: display(c), Why: "imports a feature's slice: " + strings.Join(chain, " -> ")})
		} else if chain := reach(pkgs, c, isSliceKit); chain != nil {
			out = append(out, Problem{Path: display(c), Why: "imports what only slices share: " + strings.Join(chain, " -> ")})
		}
	}
	for _, rf := range RunnerFree {
		if chain := reach(pkgs, rf.Path, func(p string) bool { return p == Runner }); chain != nil {
			out = append(out, Problem{Path: display(rf.Path), Why: "links the runner: " + strings.Join(chain, " -> ")})
		}
	}
	for _, p := range pkgs {
		if p.Main {
			continue
		}
		for _, imp := range p.Imports {
			switch {
			case !isInternal(p.Path) && isInternal(imp) && !ownInternal(p.Path, imp) && !serverInternal(p.Path, imp):
				out = append(out, Problem{Path: display(p.Path), Why: "a public package imports the internal package " + imp})
			case !under(p.Path, Lab) && under(imp, Lab) && !slices.ContainsFunc(LabShared, func(e Shared) bool { return e.Path == imp }):
				out = append(out, Problem{Path: display(p.Path), Why: "a library imports the runner's " + imp + " (" + Lab + " is imported by commands and by itself)"})
			}
		}
	}
	return out
}

// ownInternal reports whether imp is an internal package of p's own tree:
// the folder that holds imp's internal/ holds p too.
func ownInternal(p, imp string) bool {
	root, _, ok := strings.Cut("/"+imp+"/", "/internal/")
	if !ok {
		return false // the module's root internal/ is nobody's own
	}
	root = strings.TrimPrefix(root, "/")
	return root != "" && under(p, root)
}

// serverInternal reports whether p is the server's and imp one of
// ServerInternal.
func serverInternal(p, imp string) bool {
	return isServer(p) && slices.ContainsFunc(ServerInternal, func(e Shared) bool { return e.Path == imp })
}

// isServer reports whether p is one of ServerCode's packages.
func isServer(p string) bool {
	return slices.ContainsFunc(ServerCode, func(s string) bool { return under(p, s) })
}

// isSlice reports whether p is one of Slices' packages.
func isSlice(p string) bool {
	return slices.ContainsFunc(Slices, func(s Shared) bool { return under(p, s.Path) })
}

// isSliceKit reports whether p is one of SliceKits' packages.
func isSliceKit(p string) bool {
	return slices.ContainsFunc(SliceKits, func(s Shared) bool { return under(p, s.Path) })
}

// reach is the first chain of imports from the package from to one that
// match accepts (from first), or nil if none does.
func reach(pkgs []Package, from string, match func(string) bool) []string {
	imports := map[string][]string{}
	for _, p := range pkgs {
		imports[p.Path] = p.Imports
	}
	seen := map[string]bool{from: true}
	var walk func(chain []string) []string
	walk = func(chain []string) []string {
		for _, imp := range imports[chain[len(chain)-1]] {
			next := append(slices.Clone(chain), imp)
			if match(imp) {
				return next
			}
			if !seen[imp] {
				seen[imp] = true
				if found := walk(next); found != nil {
					return found
				}
			}
		}
		return nil
	}
	return walk([]string{from})
}

// isInternal reports whether p (relative to the module) is under an
// internal/ folder, as the go command reads the word.
func isInternal(p string) bool {
	return slices.Contains(strings.Split(p, "/"), "internal")
}

// under reports whether p is dir or inside it.
func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// display names a package in a Problem; "" is the module's root.
func display(p string) string { return "package " + cmp.Or(p, "(root)") }

// ListPackages runs `go list` in root: every package of the module, with the
// module's packages it imports, paths relative to the module.
func ListPackages(root string) ([]Package, error) {
	module, err := goList(root, "-m")
	if err != nil {
		return nil, err
	}
	module = strings.TrimSpace(module)
	listing, err := goList(root, "-f", "{{.ImportPath}}\t{{.Name}}\t{{join .Imports \" \"}}", "./...")
	if err != nil {
		return nil, err
	}
	rel := func(p string) (string, bool) {
		if p == module {
			return "", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	var pkgs []Package
	for line := range strings.Lines(listing) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("go list: unexpected line %q", line)
		}
		path, ok := rel(f[0])
		if !ok {
			return nil, fmt.Errorf("go list: %s is not in module %s", f[0], module)
		}
		p := Package{Path: path, Main: f[1] == "main"}
		for imp := range strings.FieldsSeq(f[2]) {
			if r, ok := rel(imp); ok {
				p.Imports = append(p.Imports, r)
			}
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// ListImports runs `go list` in root: every import path the module's
// packages and their tests import, each once.
func ListImports(root string) ([]string, error) {
	listing, err := goList(root, "-test=false", "-f", `{{join .Imports "\n"}}
{{join .TestImports "\n"}}
{{join .XTestImports "\n"}}`, "./...")
	if err != nil {
		return nil, err
	}
	var out []string
	for imp := range strings.FieldsSeq(listing) {
		out = append(out, imp)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func goList(root string, args ...string) (string, error) {
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list %s in %s: %v: %s", strings.Join(args, " "), root, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return string(out), nil
}
