package housecheck

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLayersOfTheModule is the check itself, over the module's packages as
// `go list` reads them.
func TestLayersOfTheModule(t *testing.T) {
	pkgs, err := ListPackages(repoRoot(t))
	require.NoError(t, err, "the check needs the go command")
	var public, lab int
	for _, p := range pkgs {
		if !p.Main && !isInternal(p.Path) {
			public++
		}
		if under(p.Path, Lab) {
			lab++
		}
	}
	require.Greater(t, public, 5, "go list listed the public packages")
	require.Greater(t, lab, 3, "go list listed the runner's packages")
	for _, p := range Layers(pkgs) {
		t.Error(p)
	}
}

// TestLayersCatchesBackArrows is the control: a small graph with a public
// package importing an internal one, a library importing the runner, and
// the arrows that are allowed beside them (a command importing anything, a
// public package importing a public one, the runner importing itself and a
// library importing what LabShared names). Only the planted arrows may be
// reported.
func TestLayersCatchesBackArrows(t *testing.T) {
	require.NotEmpty(t, LabShared)
	pkgs := []Package{
		{Path: "load", Imports: []string{"summary", "internal/summary"}},
		{Path: "", Main: true, Imports: []string{"server", "internal/ghz"}},
		{Path: "server", Imports: []string{"store", Lab + "/run"}},
		{Path: "cmd/compare", Main: true, Imports: []string{Lab + "/run", "internal/summary"}},
		{Path: Lab + "/run", Imports: []string{Lab + "/report", "load", "internal/ghz"}},
		{Path: "internal/ghz", Imports: []string{"load", Lab + "/plan"}},
		{Path: "internal/storeverdict", Imports: []string{LabShared[0].Path}},
		{Path: "store/storetest", Imports: []string{"store"}},
	}
	assert.Equal(t, []Problem{
		{Path: "package load", Why: "a public package imports the internal package internal/summary"},
		{Path: "package server", Why: "a public package imports the internal package " + Lab + "/run"},
		{Path: "package internal/ghz", Why: "a library imports the runner's " + Lab + "/plan (" + Lab + " is imported by commands and by itself)"},
	}, Layers(pkgs))
}

// TestLayersCatchServerCodeInThePlan is the control of the third rule: the
// plan reaching the server directly, or through another package, is named
// with the chain; the plan importing package backend and the runner
// importing the server are not.
func TestLayersCatchServerCodeInThePlan(t *testing.T) {
	plan := Lab + "/plan"
	require.Contains(t, ServerFree, Shared{Path: plan, Why: ServerFree[0].Why})
	clean := []Package{
		{Path: plan, Imports: []string{"backend", "load", "store"}},
		{Path: "load", Imports: []string{"summary"}},
		{Path: Lab + "/run", Imports: []string{plan, "server/serve"}},
		{Path: "server/serve", Imports: []string{"server", "backend"}},
	}
	assert.Empty(t, Layers(clean))
	direct := append(slices.Clone(clean), Package{Path: plan, Imports: []string{"backend", "workload/dbbank"}})
	direct = slices.Delete(direct, 0, 1)
	assert.Equal(t, []Problem{{Path: "package " + plan, Why: "links the server's code: " + plan + " -> workload/dbbank"}}, Layers(direct))
	through := append(slices.Clone(clean), Package{Path: "store", Imports: []string{"server/calltrace"}})
	assert.Equal(t, []Problem{{Path: "package " + plan, Why: "links the server's code: " + plan + " -> store -> server/calltrace"}}, Layers(through))
}

// TestLayersCatchASliceInTheCommonPackages is the control of the fourth
// rule: the report reaching a feature's slice, directly or through another
// package, is named with the chain; the slice importing the report, and
// render importing both, are not.
func TestLayersCatchASliceInTheCommonPackages(t *testing.T) {
	require.NotEmpty(t, Slices)
	feature, common := Slices[0].Path, Common[len(Common)-1]
	clean := []Package{
		{Path: feature, Imports: []string{common, Lab + "/record"}},
		{Path: Lab + "/render", Imports: []string{feature, common}},
		{Path: common, Imports: []string{Lab + "/paired"}},
	}
	assert.Empty(t, Layers(clean))
	direct := append(slices.Clone(clean), Package{Path: common, Imports: []string{feature}})
	direct = slices.Delete(direct, 2, 3)
	assert.Equal(t, []Problem{{Path: "package " + common, Why: "imports a feature's slice: " + common + " -> " + feature}}, Layers(direct))
	through := append(slices.Clone(clean), Package{Path: Lab + "/paired", Imports: []string{feature}})
	assert.Equal(t, []Problem{{Path: "package " + common, Why: "imports a feature's slice: " + common + " -> " + Lab + "/paired -> " + feature}}, Layers(through))
}

// TestLayersCatchASliceKitInTheCommonPackages is the control of the fourth
// rule's second half: the report reaching what only slices share, directly
// or through another package, is named with the chain; a slice importing
// it is not.
func TestLayersCatchASliceKitInTheCommonPackages(t *testing.T) {
	require.NotEmpty(t, SliceKits)
	kit, feature, common := SliceKits[0].Path, Slices[0].Path, Common[len(Common)-1]
	clean := []Package{
		{Path: feature, Imports: []string{kit, common}},
		{Path: kit, Imports: []string{common, Lab + "/paired"}},
		{Path: common, Imports: []string{Lab + "/paired"}},
	}
	assert.Empty(t, Layers(clean))
	direct := append(slices.Clone(clean), Package{Path: common, Imports: []string{kit}})
	direct = slices.Delete(direct, 2, 3)
	assert.Equal(t, []Problem{{Path: "package " + common, Why: "imports what only slices share: " + common + " -> " + kit}}, Layers(direct))
	through := append(slices.Clone(clean), Package{Path: Lab + "/paired", Imports: []string{kit}})
	assert.Equal(t, []Problem{{Path: "package " + common, Why: "imports what only slices share: " + common + " -> " + Lab + "/paired -> " + kit}}, Layers(through))
}

func TestSliceKitsHoldTheirReasons(t *testing.T) {
	for _, s := range SliceKits {
		assert.True(t, under(s.Path, Lab), "%s is not in %s", s.Path, Lab)
		assert.NotEmpty(t, s.Why, s.Path)
		assert.False(t, isSlice(s.Path) || slices.Contains(Common, s.Path), "%s is a kit and a slice or common", s.Path)
	}
}

// TestLayersCatchTheRunnerInAReader is the control of the fifth rule: a
// reader of results folders reaching the runner, directly or through
// another package, is named with the chain; the capacity study's engine
// importing both the runner and the slice is not.
func TestLayersCatchTheRunnerInAReader(t *testing.T) {
	require.NotEmpty(t, RunnerFree)
	reader := RunnerFree[len(RunnerFree)-1].Path
	clean := []Package{
		{Path: reader, Imports: []string{Lab + "/report"}},
		{Path: reader + "/runner", Imports: []string{reader, Runner}},
		{Path: Runner, Imports: []string{Lab + "/render"}},
		{Path: Lab + "/report", Imports: []string{Lab + "/record"}},
	}
	assert.Empty(t, Layers(clean))
	direct := append(slices.Clone(clean), Package{Path: reader, Imports: []string{Lab + "/report", Runner}})
	direct = slices.Delete(direct, 0, 1)
	assert.Equal(t, []Problem{{Path: "package " + reader, Why: "links the runner: " + reader + " -> " + Runner}}, Layers(direct))
	through := append(slices.Clone(clean), Package{Path: Lab + "/record", Imports: []string{Runner}})
	assert.Equal(t, []Problem{{Path: "package " + reader, Why: "links the runner: " + reader + " -> " + Lab + "/report -> " + Lab + "/record -> " + Runner}}, Layers(through))
}

func TestRunnerFreeHoldTheirReasons(t *testing.T) {
	for _, s := range RunnerFree {
		assert.True(t, under(s.Path, Lab), "%s is not in %s", s.Path, Lab)
		assert.NotEmpty(t, s.Why, s.Path)
		assert.NotEqual(t, Runner, s.Path)
	}
}

func TestSlicesHoldTheirReasons(t *testing.T) {
	for _, s := range Slices {
		assert.True(t, under(s.Path, Lab), "%s is not in %s", s.Path, Lab)
		assert.NotEmpty(t, s.Why, s.Path)
		assert.False(t, slices.Contains(Common, s.Path), "%s is both a slice and common", s.Path)
	}
}

func TestServerFreeHoldTheirReasons(t *testing.T) {
	for _, s := range ServerFree {
		assert.True(t, under(s.Path, Lab), "%s is not in %s", s.Path, Lab)
		assert.NotEmpty(t, s.Why, s.Path)
	}
}

func TestLabSharedHoldTheirReasons(t *testing.T) {
	for _, s := range LabShared {
		assert.True(t, under(s.Path, Lab), "%s is not in %s", s.Path, Lab)
		assert.NotEmpty(t, s.Why, s.Path)
	}
}

// TestLayersLetTheServerOwnItsInternals is the control of the first rule's
// exceptions: the server importing its own server/internal/ packages and
// what ServerInternal names passes; another public package importing
// either, and the server importing another tree's internal package, do not.
func TestLayersLetTheServerOwnItsInternals(t *testing.T) {
	require.NotEmpty(t, ServerInternal)
	shared := ServerInternal[0].Path
	clean := []Package{
		{Path: "server", Imports: []string{"server/internal/wal", "server/internal/durable", shared}},
		{Path: "server/serve", Imports: []string{"server", shared}},
		{Path: "server/internal/durable", Imports: []string{"server/internal/wal"}},
	}
	assert.Empty(t, Layers(clean))
	bad := append(slices.Clone(clean),
		Package{Path: "load", Imports: []string{shared, "server/internal/wal"}},
		Package{Path: "server/serve", Imports: []string{"store/internal/shard"}},
	)
	assert.Equal(t, []Problem{
		{Path: "package load", Why: "a public package imports the internal package " + shared},
		{Path: "package load", Why: "a public package imports the internal package server/internal/wal"},
		{Path: "package server/serve", Why: "a public package imports the internal package store/internal/shard"},
	}, Layers(bad))
}

func TestServerInternalHoldTheirReasons(t *testing.T) {
	for _, s := range ServerInternal {
		assert.True(t, isInternal(s.Path), "%s is not internal", s.Path)
		assert.False(t, isServer(s.Path), "%s is the server's own: it needs no row", s.Path)
		assert.NotEmpty(t, s.Why, s.Path)
	}
}
