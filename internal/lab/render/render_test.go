package render

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/housecheck"
	"github.com/locklab/locklab/internal/lab/report"
)

// slicesOf are the packages (relative to the module) whose parts and kinds
// an assembly lists, each once, in its order.
func slicesOf(a report.Assembly) []string {
	var out []string
	add := func(v any) {
		p := reflect.TypeOf(v).PkgPath()
		_, rel, _ := strings.Cut(p, "/locklab/locklab/")
		if !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	for _, p := range a.Parts {
		add(p)
	}
	for _, k := range a.Kinds {
		add(k)
	}
	return out
}

// TestLabListsEverySlice: every feature's package the layering names
// (housecheck.Slices) has its part or kind in Lab, and Lab has none from
// elsewhere; the control, Lab with its last part left out, misses one.
func TestLabListsEverySlice(t *testing.T) {
	var want []string
	for _, s := range housecheck.Slices {
		want = append(want, s.Path)
	}
	got := slicesOf(Lab)
	assert.ElementsMatch(t, want, got)

	require.NotEmpty(t, Lab.Parts)
	short := report.Assembly{Parts: Lab.Parts[:len(Lab.Parts)-1], Kinds: Lab.Kinds}
	assert.NotElementsMatch(t, want, slicesOf(short), "the control: a part left out is missed")
}
