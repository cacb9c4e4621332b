package storeverdict

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -update rewrites the golden files from what the code writes now; read
// the diff before committing it.
var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// goldenInputs are synthetic rounds whose report is kept whole: recorded
// rounds of three designs at two parallelisms, where round 4's mutex run
// and round 7's inputQ run lost a fifth of the machine and inputQ settles
// in one of two regimes per round; and the same values without their
// records.
func goldenInputs() map[string]string {
	f := noisy(map[string]float64{"mutex": 1, "sharded": 0.5, "inputQ": 1.5})
	regime := []float64{1, 1, 10, 1, 10, 1, 1, 10, 1, 1}
	ns := func(_, d string, par, k int) float64 {
		v := f(d, par, k)
		if d == "inputQ" && par == 64 {
			v *= regime[k]
		}
		return v
	}
	foreign := func(d string, k int) float64 {
		if (d == "mutex" && k == 4) || (d == "inputQ" && k == 7) {
			return 0.2
		}
		return 0.01 * float64(k%4)
	}
	rounds := recorded([]string{"mutex", "sharded", "inputQ"}, []int{1, 64}, 10, []string{"example.com/tally"}, ns, foreign)
	return map[string]string{"rounds.md.golden": rounds, "plain.md.golden": strings.Join(plainLines(rounds), "")}
}

// TestReportGolden compares the whole report of each golden input with
// testdata/*.golden.
func TestReportGolden(t *testing.T) {
	for name, in := range goldenInputs() {
		var out, errOut strings.Builder
		require.NoError(t, Main(nil, strings.NewReader(in), &out, &errOut))
		path := filepath.Join("testdata", name)
		if *update {
			require.NoError(t, os.MkdirAll("testdata", 0o755))
			require.NoError(t, os.WriteFile(path, []byte(out.String()), 0o644))
			continue
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run go test -run Golden -update once to create it")
		assert.Equal(t, string(want), out.String(), "%s differs: if the change is meant, go test ./internal/storeverdict -run Golden -update", name)
	}
}

// TestReportGoldenCatchesAChange is the golden test's control: the same
// rounds with the gate's share raised keep the spoiled runs, and the
// report differs.
func TestReportGoldenCatchesAChange(t *testing.T) {
	in := goldenInputs()["rounds.md.golden"]
	var out, errOut strings.Builder
	require.NoError(t, Main([]string{"-max-foreign", "25%"}, strings.NewReader(in), &out, &errOut))
	want, err := os.ReadFile(filepath.Join("testdata", "rounds.md.golden"))
	require.NoError(t, err)
	assert.NotEqual(t, string(want), out.String())
}
