package storeverdict

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/cpuset"
)

// recorded is synthetic output of storeverdict rounds: every round runs
// each design in a go test of its own, in the order given, each preceded
// by its round record. foreign(design, round) is the share of the
// machine's CPU something else took over that go test (a negative share:
// /proc/stat was not read); pkgs are the packages each go test ran.
func recorded(designs []string, pars []int, rounds int, pkgs []string, ns func(pkg, design string, par, round int) float64, foreign func(design string, round int) float64) string {
	var b strings.Builder
	for k := 1; k <= rounds; k++ {
		order := designs
		if k%2 == 0 { // the order the round drew: here every other round reversed
			order = nil
			for i := len(designs) - 1; i >= 0; i-- {
				order = append(order, designs[i])
			}
		}
		for _, d := range order {
			rec := &Round{Round: k, Rounds: rounds, Design: d, Seed: 1, Order: order, GoTestCPU: 1, Wall: 1}
			if f := foreign(d, k); f >= 0 {
				// Two CPUs over one second: the go test's own second and
				// the foreign share of the two.
				busy := 1 + 2*f
				rec.CPU = cpuset.Usage{User: busy, Idle: 2 - busy}
			}
			line, err := rec.line()
			if err != nil {
				panic(err)
			}
			b.Write(line)
			for _, pkg := range pkgs {
				fmt.Fprintf(&b, "goos: linux\ngoarch: amd64\npkg: %s\n", pkg)
				for _, par := range pars {
					fmt.Fprintf(&b, "BenchmarkTally/design=%s/par=%d-2 \t 1000\t %.2f ns/op\n", d, par, ns(pkg, d, par, k-1))
				}
				fmt.Fprintf(&b, "PASS\nok  \t%s\t1.2s\n", pkg)
			}
		}
	}
	return b.String()
}

func quiet(string, int) float64 { return 0.02 }

func reportOf(t *testing.T, in string, cfg Config) (*report, string) {
	t.Helper()
	rep := analyseText(t, in, cfg)
	var out bytes.Buffer
	require.NoError(t, rep.write(&out))
	return rep, out.String()
}

func sectionRow(t *testing.T, rep *report, design string) row {
	t.Helper()
	for _, s := range rep.sections {
		for _, r := range s.Rows {
			if r.Design == design {
				return r
			}
		}
	}
	t.Fatalf("no %s", design)
	return row{}
}

// TestGateDropsSpoiledRound: in round 3 something else took 30% of the
// machine while mutex ran, and mutex ran three times slower. The gate drops
// that run and with it sharded's pair in round 3; the other rounds stay
// paired as they ran, and the ratio is the known one. The control: the
// same round clean is kept, and so is the spoiled one under -max-foreign
// 100%, which only reports.
func TestGateDropsSpoiledRound(t *testing.T) {
	mult := map[string]float64{"mutex": 1, "sharded": 0.5}
	f := noisy(mult)
	ns := func(_, d string, par, k int) float64 {
		v := f(d, par, k)
		if d == "mutex" && k == 2 {
			v *= 3
		}
		return v
	}
	spoiled := func(d string, k int) float64 {
		if d == "mutex" && k == 3 {
			return 0.30
		}
		return 0.02
	}
	designs := []string{"mutex", "sharded"}
	rep, s := reportOf(t, recorded(designs, []int{8}, 10, []string{"example.com/tally"}, ns, spoiled), defaults())
	r := sectionRow(t, rep, "sharded")
	assert.Equal(t, 10, r.Rounds)
	assert.Equal(t, 9, r.Paired, "round 3 dropped")
	assert.Equal(t, 9, rep.sections[0].Baseline.Rounds)
	assert.Contains(t, s, "The rule: a run whose CPUs something else took more than 10% of (-max-foreign) is dropped, and with it its pairs with the baseline; 1 of the 20 was: round 3 mutex (30%).")
	assert.Contains(t, s, "a median 2.0% of the machine's CPU time over a run, at most 30%")
	assert.Contains(t, s, "Note: sharded has 10 rounds here and mutex 9: the 9 rounds both ran are paired.")
	assert.Contains(t, s, "each round's designs in an order drawn from seed 1")
	assert.Contains(t, s, "(the round its go test's record names)")

	clean := recorded(designs, []int{8}, 10, []string{"example.com/tally"}, ns, quiet)
	rep, s = reportOf(t, clean, defaults())
	assert.Equal(t, 10, sectionRow(t, rep, "sharded").Paired, "the control: clean, round 3 is kept")
	assert.Contains(t, s, "none of the 20 was.")

	cfg := defaults()
	cfg.MaxForeign = 1
	rep, s = reportOf(t, recorded(designs, []int{8}, 10, []string{"example.com/tally"}, ns, spoiled), cfg)
	assert.Equal(t, 10, sectionRow(t, rep, "sharded").Paired, "-max-foreign 100% keeps every run")
	assert.Contains(t, s, "at most 30%")
	assert.Contains(t, s, "The rule is off (-max-foreign 100%): every run is kept")

	// Every run spoiled: nothing is left to pair, and the message says why.
	busy := recorded(designs, []int{8}, 10, []string{"p"}, ns, func(string, int) float64 { return 0.8 })
	var out, errOut bytes.Buffer
	err := Main(nil, strings.NewReader(busy), &out, &errOut)
	assert.Equal(t, 2, Status(err))
	assert.ErrorContains(t, err, "no design ran beside the baseline mutex under the same name after the validity gate dropped 20 of 20 runs, whose CPUs something else took more than 10% of (-max-foreign)")
	half := recorded(designs, []int{8}, 10, []string{"p"}, ns, func(d string, k int) float64 {
		if d == "mutex" && k <= 6 {
			return 0.8
		}
		return 0
	})
	err = Main(nil, strings.NewReader(half), &out, &errOut)
	assert.ErrorContains(t, err, "too few rounds: at most 4 per design paired with mutex after the validity gate dropped 6 of 20 runs")
}

// TestGateSpoiledDesignRun: a spoiled run of a design other than the
// baseline drops that design's round only.
func TestGateSpoiledDesignRun(t *testing.T) {
	f := noisy(map[string]float64{"mutex": 1, "sharded": 0.5, "inputQ": 2})
	ns := func(_, d string, par, k int) float64 { return f(d, par, k) }
	spoiled := func(d string, k int) float64 {
		if d == "sharded" && (k == 2 || k == 7) {
			return 0.15
		}
		return 0
	}
	rep, s := reportOf(t, recorded([]string{"mutex", "sharded", "inputQ"}, []int{1, 8}, 10, []string{"p"}, ns, spoiled), defaults())
	for _, sec := range rep.sections {
		assert.Equal(t, 10, sec.Baseline.Rounds)
		for _, r := range sec.Rows {
			n := map[string]int{"sharded": 8, "inputQ": 10}[r.Design]
			assert.Equal(t, n, r.Paired, r.Design)
			assert.Equal(t, n, r.Rounds, r.Design)
			want := map[string]float64{"sharded": 2, "inputQ": 0.5}[r.Design]
			assert.InDelta(t, want, r.Primary.Ratio, 0.02*want, r.Design)
		}
	}
	assert.Contains(t, s, "2 of the 30 were: round 2 sharded (15%), round 7 sharded (15%).")
}

// TestRecordedRoundsPairByRound: sharded's go test of round 2 is missing
// (a run cut short, a file edited). Recorded rounds pair by the round they
// name, so round 3 of sharded still meets round 3 of mutex: the ±30% round
// effect cancels and the interval stays narrow. Paired by position, as
// output without records is, every later round would meet the one before
// it.
func TestRecordedRoundsPairByRound(t *testing.T) {
	f := noisy(map[string]float64{"mutex": 1, "sharded": 0.5})
	in := recorded([]string{"mutex", "sharded"}, []int{8}, 10, []string{"p"}, func(_, d string, par, k int) float64 { return f(d, par, k) }, quiet)
	var kept []string
	for block := range strings.SplitAfterSeq(in, "ok  \tp\t1.2s\n") {
		if !strings.Contains(block, `"round":2,`) || !strings.Contains(block, `"design":"sharded"`) {
			kept = append(kept, block)
		}
	}
	rep, _ := reportOf(t, strings.Join(kept, ""), defaults())
	r := sectionRow(t, rep, "sharded")
	require.Equal(t, 9, r.Paired)
	assert.Less(t, r.Primary.Hi/r.Primary.Lo, 1.05, "paired by round, the interval stays narrow")
	assert.InDelta(t, 2, r.Primary.Ratio, 0.04)

	// The control: the same values without their records pair by
	// position, and the interval widens.
	var plain []string
	for _, line := range strings.SplitAfter(strings.Join(kept, ""), "\n") {
		if !strings.HasPrefix(line, RoundKey+":") {
			plain = append(plain, line)
		}
	}
	rep, s := reportOf(t, strings.Join(plain, ""), defaults())
	assert.Greater(t, sectionRow(t, rep, "sharded").Primary.Hi/sectionRow(t, rep, "sharded").Primary.Lo, 1.2)
	assert.Contains(t, s, "Foreign CPU: unknown. The input does not record the machine's CPU over each round")
	assert.Contains(t, s, "(the k-th result of each name is round k)")
}

// TestGateUnsampled: a run that could not read /proc/stat is kept, and
// the report says its foreign CPU is unknown.
func TestGateUnsampled(t *testing.T) {
	f := noisy(map[string]float64{"mutex": 1, "sharded": 0.5})
	ns := func(_, d string, par, k int) float64 { return f(d, par, k) }
	unread := func(d string, k int) float64 {
		if k == 4 {
			return -1
		}
		return 0.01
	}
	rep, s := reportOf(t, recorded([]string{"mutex", "sharded"}, []int{8}, 10, []string{"p"}, ns, unread), defaults())
	assert.Equal(t, 10, sectionRow(t, rep, "sharded").Paired)
	assert.Contains(t, s, "none of the 20 was. 2 runs could not read /proc/stat: their foreign CPU is unknown, and they are kept.")

	_, s = reportOf(t, recorded([]string{"mutex", "sharded"}, []int{8}, 10, []string{"p"}, ns, func(string, int) float64 { return -1 }), defaults())
	assert.Contains(t, s, "Foreign CPU: unknown. No run could read /proc/stat")
}

// TestPackagesStayApart: two packages' benchmarks of one name are two
// machines: sharded is twice as fast as mutex in one and half as fast in
// the other, and each package keeps its own groups. The control: the same
// lines without their pkg: lines pool into one group.
func TestPackagesStayApart(t *testing.T) {
	fa := noisy(map[string]float64{"mutex": 1, "sharded": 0.5})
	fb := noisy(map[string]float64{"mutex": 1, "sharded": 2})
	ns := func(pkg, d string, par, k int) float64 {
		if pkg == "example.com/a" {
			return fa(d, par, k)
		}
		return fb(d, par, k)
	}
	for _, rec := range []bool{true, false} {
		in := recorded([]string{"mutex", "sharded"}, []int{8}, 10, []string{"example.com/a", "example.com/b"}, ns, quiet)
		if !rec {
			in = strings.Join(plainLines(in), "")
		}
		rep, s := reportOf(t, in, defaults())
		require.Len(t, rep.sections, 2, "recorded=%v", rec)
		for i, want := range []float64{2, 0.5} {
			sec := rep.sections[i]
			assert.Equal(t, []string{"example.com/a", "example.com/b"}[i], sec.Group.Pkg)
			assert.Equal(t, 10, sec.Baseline.Rounds)
			assert.InDelta(t, want, sec.Rows[0].Primary.Ratio, 0.02*want)
		}
		assert.Contains(t, s, "## example.com/a: Tally par=8 on 2 CPUs")
		assert.Contains(t, s, "In example.com/b at par=8 on 2 CPUs: sharded 2.00× [")
	}

	pooled := strings.NewReplacer("pkg: example.com/a\n", "", "pkg: example.com/b\n", "").Replace(
		recorded([]string{"mutex", "sharded"}, []int{8}, 10, []string{"example.com/a", "example.com/b"}, ns, quiet))
	d := newData()
	err := d.read(strings.NewReader(pooled), "in", "sec/op")
	assert.ErrorContains(t, err, "round 1 of mutex appears twice", "the control: without pkg: lines the two packages' results fall in one group")
	rep, s := reportOf(t, strings.Join(plainLines(pooled), ""), defaults())
	require.Len(t, rep.sections, 1)
	assert.Equal(t, 20, rep.sections[0].Baseline.Rounds)
	assert.NotContains(t, s, "example.com")
}

// plainLines drops the round records.
func plainLines(in string) []string {
	var out []string
	for _, l := range strings.SplitAfter(in, "\n") {
		if !strings.HasPrefix(l, RoundKey+":") {
			out = append(out, l)
		}
	}
	return out
}

// TestBadRecords: round records that cannot be judged end it with a
// message and exit status 2, and nothing on stdout.
func TestBadRecords(t *testing.T) {
	f := noisy(map[string]float64{"mutex": 1, "sharded": 0.5})
	good := recorded([]string{"mutex", "sharded"}, []int{8}, 10, []string{"p"}, func(_, d string, par, k int) float64 { return f(d, par, k) }, quiet)
	plain := strings.Join(plainLines(good), "")
	first := strings.SplitAfterN(good, "\n", 2)[0]
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"mixed", plain + good, "the input mixes 20 results with a round record (locklab-round, from storeverdict rounds) and 20 without"},
		{"bad JSON", RoundKey + ": {round\n" + plain, "<stdin>:5: locklab-round: invalid character 'r'"},
		{"round 0", RoundKey + `: {"round":0,"design":"mutex"}` + "\n" + plain, "locklab-round: round 0: rounds are numbered from 1"},
		{"no design", RoundKey + `: {"round":1}` + "\n" + plain, "locklab-round: no design"},
		{"another design's record", strings.Replace(good, `"design":"sharded"`, `"design":"inputQ"`, 1), "a result of sharded under the round record of inputQ (round 1)"},
		{"a round twice", good + first + "pkg: p\nBenchmarkTally/design=" + "mutex/par=8-2 1 100 ns/op\n", "round 1 of mutex appears twice (p: Tally par=8 on 2 CPUs) in one input: the rounds of two runs go in two files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := Main(nil, strings.NewReader(tt.in), &out, &errOut)
			require.Error(t, err)
			assert.Equal(t, 2, Status(err))
			assert.ErrorContains(t, err, tt.want)
			assert.Empty(t, out.String())
		})
	}
	// Two runs' rounds in two files pair within each file.
	dir := t.TempDir()
	require.NoError(t, writeFile(dir+"/a.txt", good))
	require.NoError(t, writeFile(dir+"/b.txt", good))
	var out, errOut bytes.Buffer
	require.NoError(t, Main([]string{dir + "/a.txt", dir + "/b.txt"}, strings.NewReader(""), &out, &errOut))
	assert.Contains(t, out.String(), "| sharded | 20 | ")
	assert.Contains(t, out.String(), "Rounds: 40 go test runs, one per design in each of 20 rounds")
}
