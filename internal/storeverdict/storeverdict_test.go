package storeverdict

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/locklab/locklab/internal/lab/paired"
)

// bench is synthetic storetest.Benchmark output: ns(design, par, round)
// gives each value; rounds are written as -count 1 runs appended, or, with
// countN, as one -count N run (each name's N results one after another).
func bench(designs []string, pars []int, rounds int, countN bool, ns func(design string, par, round int) float64) string {
	var b strings.Builder
	line := func(d string, par, k int) {
		fmt.Fprintf(&b, "BenchmarkTally/design=%s/par=%d-2 \t 1000\t %.2f ns/op\t 0 B/op\t 0 allocs/op\n", d, par, ns(d, par, k))
	}
	if countN {
		b.WriteString("goos: linux\ngoarch: amd64\npkg: example.com/tally\n")
		for _, d := range designs {
			for _, par := range pars {
				for k := range rounds {
					line(d, par, k)
				}
			}
		}
		b.WriteString("PASS\n")
		return b.String()
	}
	for k := range rounds {
		b.WriteString("goos: linux\ngoarch: amd64\npkg: example.com/tally\n")
		for _, d := range designs {
			for _, par := range pars {
				line(d, par, k)
			}
		}
		b.WriteString("PASS\nok  \texample.com/tally\t1.2s\n")
	}
	return b.String()
}

// roundEffect is what back-to-back rounds share: the machine's state in
// that round (±30% from round to round), the same for every design.
func roundEffect(k int) float64 { return 1 + 0.3*math.Sin(float64(3*k+1)) }

// noisy returns ns for designs at fixed multiples of mutex's time, each
// round scaled by the round effect and by up to ±1% noise of its own. The
// noise of round k+5 is the inverse of round k's, so that the log ratios
// lie symmetrically around the true one and a trimmed mean of 10 rounds
// lands on it: a test of what the tool reports, not of its coverage.
func noisy(mult map[string]float64) func(string, int, int) float64 {
	rng := rand.New(rand.NewPCG(7, 11))
	noise := map[[3]any]float64{}
	var draw func(d string, par, k int) float64
	draw = func(d string, par, k int) float64 {
		key := [3]any{d, par, k}
		if _, ok := noise[key]; !ok {
			if k >= 5 {
				noise[key] = 1 / draw(d, par, k-5)
			} else {
				noise[key] = 1 + 0.01*(2*rng.Float64()-1)
			}
		}
		return noise[key]
	}
	return func(d string, par, k int) float64 {
		return 200 * mult[d] * roundEffect(k) * draw(d, par, k)
	}
}

func analyseText(t *testing.T, in string, cfg Config) *report {
	t.Helper()
	d := newData()
	require.NoError(t, d.read(strings.NewReader(in), "in", cfg.Unit))
	rep, err := analyse(d, cfg)
	require.NoError(t, err)
	return rep
}

func defaults() Config { return Config{Baseline: "mutex", Unit: "sec/op", Margin: 0.03} }

// primary finds a design's verdict in a group of par.
func primary(t *testing.T, rep *report, design string, par int) *paired.Primary {
	t.Helper()
	for _, s := range rep.sections {
		for _, r := range s.Rows {
			if s.Group.Par == par && r.Design == design {
				require.NotNil(t, r.Primary, design)
				return r.Primary
			}
		}
	}
	t.Fatalf("no %s at par=%d", design, par)
	return nil
}

func TestKnownRatios(t *testing.T) {
	// sharded takes half mutex's time (2× faster), inputQ 1.5 times it
	// (1.5× slower), combining the same.
	mult := map[string]float64{"mutex": 1, "sharded": 0.5, "inputQ": 1.5, "combining": 1}
	designs := []string{"mutex", "sharded", "inputQ", "combining"}
	for _, countN := range []bool{false, true} {
		in := bench(designs, []int{1, 8}, 10, countN, noisy(mult))
		rep := analyseText(t, in, defaults())
		assert.Equal(t, 6, rep.family)
		tests := []struct {
			design  string
			outcome paired.Outcome
			ratio   float64 // mutex's time over the design's
		}{
			{"sharded", paired.OutcomeDetected, 2},
			{"inputQ", paired.OutcomeDetected, 1 / 1.5},
			{"combining", paired.OutcomeEquivalent, 1},
		}
		for _, tt := range tests {
			for _, par := range []int{1, 8} {
				p := primary(t, rep, tt.design, par)
				assert.Equal(t, tt.outcome, p.Outcome, "%s par=%d countN=%v", tt.design, par, countN)
				assert.Equal(t, 10, p.N)
				assert.LessOrEqual(t, p.Lo, tt.ratio, tt.design)
				assert.GreaterOrEqual(t, p.Hi, tt.ratio, tt.design)
				assert.InDelta(t, tt.ratio, p.Ratio, 0.02*tt.ratio, tt.design)
			}
		}
		var out bytes.Buffer
		require.NoError(t, rep.write(&out))
		s := out.String()
		assert.Contains(t, s, "## Tally par=8 on 2 CPUs")
		assert.Contains(t, s, "| sharded | 10 | ")
		assert.Contains(t, s, "faster (p_adj<0.001)")
		assert.Contains(t, s, "slower (p_adj<0.001)")
		assert.Contains(t, s, "| combining | 10 | ")
		assert.Contains(t, s, "the same within ±3%")
		assert.Regexp(t, `At par=8 on 2 CPUs: sharded 2\.00× \[1\.9\d, 2\.0\d\] faster than mutex; combining the same as mutex within ±3%; inputQ 1\.50× \[1\.[45]\d, 1\.5\d\] slower\.`, s)
		assert.NotContains(t, s, "bimodal")
	}
}

// Higher is better for a rate: the ratio is the design's over the baseline's.
func TestRateUnit(t *testing.T) {
	in := "BenchmarkX/design=mutex/par=1 1 100 ops/s\nBenchmarkX/design=sharded/par=1 1 300 ops/s\n"
	in = strings.Repeat(in, 6)
	rep := analyseText(t, in, Config{Baseline: "mutex", Unit: "ops/s", Margin: 0.03})
	p := primary(t, rep, "sharded", 1)
	assert.InDelta(t, 3, p.Ratio, 1e-9)
	var out bytes.Buffer
	require.NoError(t, rep.write(&out))
	assert.Contains(t, out.String(), "sharded 3.00× [3.00, 3.00] better than mutex")
	assert.Contains(t, out.String(), "## X par=1 on 1 CPU")
}

// The control: the same values with each design's rounds shuffled, so that
// round k of a design no longer ran beside round k of mutex. The round
// effect then no longer cancels, and the interval must widen.
func TestShuffledRoundsWiden(t *testing.T) {
	mult := map[string]float64{"mutex": 1, "sharded": 0.5}
	f := noisy(mult)
	designs := []string{"mutex", "sharded"}
	in := bench(designs, []int{8}, 10, false, f)
	perm := map[string][]int{"mutex": rand.New(rand.NewPCG(1, 1)).Perm(10), "sharded": rand.New(rand.NewPCG(2, 2)).Perm(10)}
	shuffled := bench(designs, []int{8}, 10, false, func(d string, par, k int) float64 { return f(d, par, perm[d][k]) })

	p := primary(t, analyseText(t, in, defaults()), "sharded", 8)
	q := primary(t, analyseText(t, shuffled, defaults()), "sharded", 8)
	widthP, widthQ := math.Log(p.Hi/p.Lo), math.Log(q.Hi/q.Lo)
	t.Logf("paired [%.3f, %.3f], shuffled [%.3f, %.3f]", p.Lo, p.Hi, q.Lo, q.Hi)
	assert.Greater(t, widthQ, 4*widthP, "breaking the pairing must widen the interval")
	assert.True(t, p.Lo <= 2 && 2 <= p.Hi)
}

func TestBimodalFlagged(t *testing.T) {
	// inputQ settles in one of two regimes per round: about 800 or 200 ns.
	regime := []float64{800, 205, 810, 200, 203, 820, 201, 204, 815, 202}
	in := bench([]string{"mutex", "inputQ", "combining"}, []int{64}, 10, false, func(d string, _, k int) float64 {
		switch d {
		case "inputQ":
			return regime[k]
		case "combining":
			return 300 + float64(k) // spread, one cluster
		}
		return 400 + float64(k%3)
	})
	rep := analyseText(t, in, defaults())
	var out bytes.Buffer
	require.NoError(t, rep.write(&out))
	s := out.String()
	assert.Contains(t, s, "Note: inputQ is bimodal: its rounds fall in two clusters, 6 near 202.5 ns/op and 4 near 812.5 ns/op")
	assert.NotContains(t, s, "combining is bimodal")
	assert.NotContains(t, s, "mutex is bimodal")
}

func TestClusters(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want []paired.Cluster
	}{
		{"two regimes", []float64{836, 817, 201, 202, 203, 208}, []paired.Cluster{{N: 4, Median: 202.5}, {N: 2, Median: 826.5}}},
		{"one regime", []float64{200, 202, 205, 210, 199}, nil},
		{"gap too small a ratio", []float64{100, 100, 100, 106, 106, 106}, nil},
		{"one outlier is not a cluster", []float64{100, 101, 102, 103, 500}, nil},
		{"too few rounds", []float64{100, 500, 100}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, paired.Clusters(tt.xs)) })
	}
}

func TestNameOf(t *testing.T) {
	tests := []struct {
		name   string
		group  group
		design string
		ok     bool
	}{
		{"Tally/design=mutex/par=8-2", group{Prefix: "Tally", Par: 8, CPU: 2}, "mutex", true},
		{"Tally/design=inputQ/par=1", group{Prefix: "Tally", Par: 1, CPU: 1}, "inputQ", true},
		{"Store/op=get/design=sharded/par=64-16", group{Prefix: "Store/op=get", Par: 64, CPU: 16}, "sharded", true},
		{"Other/size=10-2", group{}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, d, ok, err := nameOf(benchfmt.Name(tt.name))
			require.NoError(t, err)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.group, g)
			assert.Equal(t, tt.design, d)
		})
	}
	_, _, _, err := nameOf(benchfmt.Name("Tally/design=mutex/par=x-2"))
	assert.Error(t, err)
}

func TestBadInput(t *testing.T) {
	two := func(rounds int) string {
		return bench([]string{"mutex", "sharded"}, []int{8}, rounds, false, noisy(map[string]float64{"mutex": 1, "sharded": 0.5}))
	}
	tests := []struct {
		name string
		args []string
		in   string
		want string
	}{
		{"empty", nil, "", "no storetest.Benchmark results in the input"},
		{"other benchmarks only", nil, "BenchmarkFoo-2 100 12 ns/op\n", "no storetest.Benchmark results in the input: want go test -bench lines named like BenchmarkX/design=mutex/par=8 (1 benchmark lines without design=)"},
		{"no such unit", []string{"-unit", "widgets/op"}, two(5), "(10 such lines lack widgets/op: see -unit)"},
		{"one design", nil, bench([]string{"mutex"}, []int{8}, 10, false, noisy(map[string]float64{"mutex": 1})), "only one design (mutex) in the input"},
		{"baseline absent", []string{"-baseline", "rwmutex"}, two(10), `the baseline "rwmutex" is not among the designs in the input (mutex, sharded): choose one with -baseline`},
		{"too few rounds", nil, two(paired.MinBlocksRobust - 1), "too few rounds: at most 4 per design paired with mutex; the verdict needs at least 5"},
		{"bad margin", []string{"-margin", "150%"}, two(10), "want one above 0% and below 100%"},
		{"bad max-foreign", []string{"-max-foreign", "0"}, two(10), `max-foreign "0": want one above 0% and at most 100%`},
		{"unknown flag", []string{"-bogus"}, two(10), "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := Main(tt.args, strings.NewReader(tt.in), &out, &errOut)
			require.Error(t, err)
			assert.Equal(t, 2, Status(err))
			assert.Contains(t, err.Error(), tt.want)
			assert.Empty(t, out.String())
		})
	}
}

func TestMainReadsFilesInOrder(t *testing.T) {
	mult := map[string]float64{"mutex": 1, "sharded": 0.5}
	in := bench([]string{"mutex", "sharded"}, []int{8}, 10, false, noisy(mult))
	dir := t.TempDir()
	// Five rounds in each of two files: rounds read in argument order.
	split := strings.SplitAfterN(in, "PASS\nok  \texample.com/tally\t1.2s\n", 6)
	require.Len(t, split, 6)
	first, second := dir+"/a.txt", dir+"/b.txt"
	require.NoError(t, writeFile(first, strings.Join(split[:5], "")))
	require.NoError(t, writeFile(second, split[5]))
	var out, errOut bytes.Buffer
	require.NoError(t, Main([]string{"-margin", "0.05", first, second}, strings.NewReader(""), &out, &errOut))
	assert.Contains(t, out.String(), "| sharded | 10 | ")
	assert.Contains(t, out.String(), "within ±5%")

	err := Main([]string{dir + "/missing.txt"}, strings.NewReader(""), &out, &errOut)
	assert.Equal(t, 1, Status(err))
	assert.Equal(t, 0, Status(nil))
}

func TestShareFlag(t *testing.T) {
	tests := []struct {
		in    string
		whole bool // up to 100% (-max-foreign) rather than below it (-margin)
		want  float64
		err   bool
	}{
		{"3%", false, 0.03, false}, {"0.05", false, 0.05, false}, {" 10% ", false, 0.10, false},
		{"0", false, 0, true}, {"100%", false, 0, true}, {"three", false, 0, true},
		{"100%", true, 1, false}, {"0%", true, 0, true}, {"101%", true, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var v float64
			m := shareFlag{&v, "-x", tt.whole}
			err := m.Set(tt.in)
			if tt.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.InDelta(t, tt.want, v, 1e-12)
		})
	}
}

func writeFile(name, s string) error { return os.WriteFile(name, []byte(s), 0o644) }
