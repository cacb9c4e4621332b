package plan

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAttributeValues(t *testing.T) {
	sp, err := ParseSpace(map[string]string{Attribute: "off,on"})
	require.NoError(t, err)
	assert.Equal(t, []string{"off", "on"}, sp.Values(Attribute))
	assert.True(t, sp.Attributes())
	assert.False(t, DefaultSpace().Attributes(), "the default profiles nothing")

	on := DefaultPoint().With(Attribute, "on")
	assert.Equal(t, "-attr", on.IDSuffix())
	assert.Empty(t, on.ServerArgs(RunDirs{}), "the runner, not the factor, gives the server its metrics address (a free port per run)")
	sampled := DefaultPoint().With(Attribute, "blocks=3")
	assert.Equal(t, "-attrb3", sampled.IDSuffix())

	for _, bad := range []string{"yes", "blocks=0", "blocks=-1", "blocks=+2", "blocks=", "blocks=x", "ON"} {
		_, err := ParseSpace(map[string]string{Attribute: bad})
		assert.ErrorContains(t, err, "-attribute", bad)
	}
	sp, err = ParseSpace(map[string]string{Attribute: "blocks=04"})
	require.NoError(t, err)
	assert.Equal(t, []string{"blocks=4"}, sp.Values(Attribute), "canonical text")
}

// TestAttributedBlocks: blocks=K picks K blocks spread over the study,
// the last always among them; on every block; off none.
func TestAttributedBlocks(t *testing.T) {
	picked := func(v string, reps int) []int {
		var out []int
		for rep := 1; rep <= reps; rep++ {
			if AttributedBlock(v, rep, reps) {
				out = append(out, rep)
			}
		}
		return out
	}
	assert.Equal(t, []int{3, 6, 9, 12}, picked("blocks=4", 12))
	assert.Equal(t, []int{12}, picked("blocks=1", 12))
	assert.Equal(t, []int{2, 4, 5}, picked("blocks=3", 5))
	assert.Equal(t, []int{1, 2, 3}, picked("blocks=3", 3))
	assert.Equal(t, []int{1, 2, 3}, picked("on", 3))
	assert.Empty(t, picked("off", 3))
	for reps := 1; reps <= 20; reps++ {
		for k := 1; k <= reps; k++ {
			assert.Len(t, picked(blocksValue(k), reps), k, "K=%d of %d", k, reps)
		}
	}
}

func blocksValue(k int) string {
	v, err := attributeFactor.Parse(fmt.Sprintf("blocks=%d", k))
	if err != nil {
		panic(err)
	}
	return v
}

func TestCheckAttribute(t *testing.T) {
	assert.NoError(t, CheckAttribute([]string{"off", "on"}, 3))
	assert.NoError(t, CheckAttribute([]string{"blocks=3"}, 3))
	assert.ErrorContains(t, CheckAttribute([]string{"blocks=4"}, 3), "4 blocks asked of a study of 3")
	assert.ErrorContains(t, CheckAttribute([]string{"off", "blocks=2"}, 3), "give it alone")
}
