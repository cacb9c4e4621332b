package housecheck

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestToolsShareVersions is the check itself: every module both go.mod
// files require, at one version.
func TestToolsShareVersions(t *testing.T) {
	root := repoRoot(t)
	mainMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	toolsMod, err := os.ReadFile(filepath.Join(root, ToolsModule))
	require.NoError(t, err)
	shared := 0
	tools := requires(toolsMod)
	for path := range requires(mainMod) {
		if _, ok := tools[path]; ok {
			shared++
		}
	}
	assert.GreaterOrEqual(t, shared, 5, "grpc, protobuf, x/net, x/sys and the Prometheus client are in both")
	for _, p := range SharedVersions(mainMod, toolsMod) {
		t.Error(p)
	}
}

// TestSharedVersionsCatchesADrift is the control: a module required at
// another version, in a block or on a line of its own, is named; one only
// the tools need, or at the same version, is not.
func TestSharedVersionsCatchesADrift(t *testing.T) {
	mainMod := []byte(`module example.com/m

go 1.26.0

require (
	google.golang.org/grpc v1.85.0
	golang.org/x/net v0.60.0 // indirect
)

require google.golang.org/protobuf v1.36.12
`)
	toolsMod := []byte(`module example.com/m/tools

require go.k6.io/k6 v1.8.1

require (
	golang.org/x/net v0.60.0 // indirect
	google.golang.org/grpc v1.82.1 // indirect
)

require google.golang.org/protobuf v1.36.11 // indirect
`)
	got := SharedVersions(mainMod, toolsMod)
	require.Len(t, got, 2)
	assert.Equal(t, ToolsModule, got[0].Path)
	assert.Contains(t, got[0].Why, "requires google.golang.org/grpc v1.82.1, go.mod v1.85.0")
	assert.Contains(t, got[1].Why, "requires google.golang.org/protobuf v1.36.11, go.mod v1.36.12")
	assert.Empty(t, SharedVersions(mainMod, mainMod), "a go.mod agrees with itself")
}

// TestIndirectMarkersOfGoMod is the check itself: go.mod's "// indirect"
// markers say which modules the module's packages import.
func TestIndirectMarkersOfGoMod(t *testing.T) {
	root := repoRoot(t)
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	imports, err := ListImports(root)
	require.NoError(t, err, "the check needs the go command")
	require.Contains(t, imports, "google.golang.org/grpc", "go list listed the imports")
	for _, p := range IndirectMarkers(mod, imports) {
		t.Error(p)
	}
}

// TestIndirectMarkersCatchAFalseMarker is the control: an imported module
// marked indirect and a direct one nobody imports are named; a module
// imported through a package inside it, one inside another's path, and an
// indirect one nobody imports are not.
func TestIndirectMarkersCatchAFalseMarker(t *testing.T) {
	mod := []byte(`module example.com/m

go 1.26.0

require example.com/single v1.0.0 // indirect

require (
	example.com/a v1.0.0
	example.com/a/v2 v2.0.0
	example.com/unused v1.0.0
	example.com/dep v1.0.0 // indirect
	example.com/sql v1.0.0 // indirect
)
`)
	imports := []string{"fmt", "example.com/a/pkg", "example.com/a/v2", "example.com/sql/driver", "example.com/single", "example.com/m/load"}
	assert.Equal(t, []Problem{
		{Path: "go.mod", Why: "example.com/single is marked indirect, but the module imports it"},
		{Path: "go.mod", Why: "example.com/unused is required directly, but no package of the module imports it"},
		{Path: "go.mod", Why: "example.com/sql is marked indirect, but the module imports it"},
	}, IndirectMarkers(mod, imports))
}
