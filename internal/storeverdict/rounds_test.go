package storeverdict

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/store/storetest"
)

// fakeGo writes a go command that runs no benchmark: it logs the design it
// was asked for and its arguments, one line per call, and prints a go test
// -bench output of the designs (all of them when none is asked for, or
// when all is set: a storetest that does not read storetest.DesignEnv).
// mutex's time is twice the others', with a few ns that vary by call.
func fakeGo(t *testing.T, designs []string, all bool) (goCmd, log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "calls.log")
	require.NoError(t, os.WriteFile(log, nil, 0o644))
	want := `${` + storetest.DesignEnv + `:-` + strings.Join(designs, " ") + `}`
	if all {
		want = strings.Join(designs, " ")
	}
	script := fmt.Sprintf(`#!/bin/sh
n=$(wc -l < %[1]q)
echo "${%[2]s}|$*" >> %[1]q
printf 'goos: linux\ngoarch: amd64\npkg: example.com/tally\n'
for d in %[3]s; do
	base=100
	[ "$d" = mutex ] && base=200
	printf 'BenchmarkTally/design=%%s/par=1-2 \t 1000\t %%d ns/op\n' "$d" $((base + n %% 7))
done
printf 'PASS\nok  \texample.com/tally\t0.01s\n'
`, log, storetest.DesignEnv, want)
	goCmd = filepath.Join(dir, "go")
	require.NoError(t, os.WriteFile(goCmd, []byte(script), 0o755))
	return goCmd, log
}

// calls reads a fake go's log: the design asked for and the arguments.
func calls(t *testing.T, log string) (designs []string, args []string) {
	t.Helper()
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	for line := range strings.Lines(string(b)) {
		d, a, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "|")
		require.True(t, ok, line)
		designs, args = append(designs, d), append(args, a)
	}
	return designs, args
}

// recordsOf reads the round records of a rounds file, one per go test, in
// the order written.
func recordsOf(t *testing.T, name string) []*Round {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	var out []*Round
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, RoundKey+": "); ok {
			r, err := parseRound(v)
			require.NoError(t, err)
			out = append(out, r)
		}
	}
	return out
}

// TestRoundsOrderDrawnPerRound: with a go command that only logs, the
// runner finds the designs with one probe, then runs each design of a
// round in a go test of its own, asked for by storetest.DesignEnv, in the
// order paired.Order draws from the seed and the round; the file records
// each go test's round, seed and order, which are the order it ran. The
// orders differ from round to round, and another seed draws others.
func TestRoundsOrderDrawnPerRound(t *testing.T) {
	designs := []string{"mutex", "sharded", "inputQ"}
	orders := func(seed int) [][]string {
		goCmd, log := fakeGo(t, designs, false)
		out := filepath.Join(t.TempDir(), "bench.txt")
		var stdout, stderr bytes.Buffer
		err := Main([]string{"rounds", "-go", goCmd, "-bench", "Tally", "-benchtime", "100x", "-rounds", "6", "-seed", fmt.Sprint(seed),
			"-o", out, "-verdict", "-max-foreign", "100%", "./tally"}, nil, &stdout, &stderr)
		require.NoError(t, err, stderr.String())

		asked, args := calls(t, log)
		require.Len(t, asked, 1+6*len(designs))
		assert.Empty(t, asked[0], "the probe runs every design")
		assert.Equal(t, "test -run ^$ -bench Tally -count 1 -benchtime 100x -benchtime 1x ./tally", args[0])
		for _, a := range args[1:] {
			assert.Equal(t, "test -run ^$ -bench Tally -count 1 -benchtime 100x ./tally", a)
		}
		recs := recordsOf(t, out)
		require.Len(t, recs, 6*len(designs))
		var got [][]string
		for k := 1; k <= 6; k++ {
			ran := asked[1+(k-1)*len(designs) : 1+k*len(designs)]
			assert.Equal(t, paired.Order(seed, k, designs), ran, "round %d", k)
			for i, r := range recs[(k-1)*len(designs) : k*len(designs)] {
				assert.Equal(t, k, r.Round)
				assert.Equal(t, 6, r.Rounds)
				assert.Equal(t, seed, r.Seed)
				assert.Equal(t, ran, r.Order, "the record is the order it ran")
				assert.Equal(t, ran[i], r.Design)
				assert.Positive(t, r.Wall)
			}
			got = append(got, ran)
		}
		s := stdout.String()
		assert.Contains(t, s, "| sharded | 6 | ")
		assert.Contains(t, s, "faster than mutex")
		assert.Contains(t, s, fmt.Sprintf("Rounds: 18 go test runs, one per design in each of 6 rounds, each round's designs in an order drawn from seed %d", seed))
		assert.Contains(t, stderr.String(), "round 6/6 ")
		return got
	}
	one := orders(1)
	assert.NotEqual(t, 1, len(slices.CompactFunc(slices.Clone(one), slices.Equal)), "drawn per round: the rounds' orders differ")
	assert.NotEqual(t, one, orders(2), "another seed draws other orders")
}

// TestRoundsNeedsDesignEnv: a benchmark that runs every design whatever
// DesignEnv says (a storetest older than it) is caught at the first go
// test; the control is the fake that reads it, above.
func TestRoundsNeedsDesignEnv(t *testing.T) {
	goCmd, _ := fakeGo(t, []string{"mutex", "sharded"}, true)
	out := filepath.Join(t.TempDir(), "bench.txt")
	var stdout, stderr bytes.Buffer
	err := Main([]string{"rounds", "-go", goCmd, "-o", out, "./tally"}, nil, &stdout, &stderr)
	require.Error(t, err)
	assert.Equal(t, 1, Status(err))
	assert.ErrorContains(t, err, "ran mutex, sharded: the benchmark must call storetest.Benchmark from a storetest that reads "+storetest.DesignEnv)
	assert.ErrorContains(t, err, "(the rounds before it are in "+out+")")
}

// TestRoundsBadFlags: flags and packages that cannot give rounds to judge
// end it with a message and exit status 2, before any go test of a round,
// and leave an existing file as it was.
func TestRoundsBadFlags(t *testing.T) {
	dir := t.TempDir()
	exists := filepath.Join(dir, "exists.txt")
	require.NoError(t, os.WriteFile(exists, []byte("mine\n"), 0o644))
	two, _ := fakeGo(t, []string{"mutex", "sharded"}, false)
	one, _ := fakeGo(t, []string{"mutex"}, false)
	none, _ := fakeGo(t, nil, false)
	fresh := func() string { return filepath.Join(t.TempDir(), "bench.txt") }
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no package", []string{"-o", fresh()}, "rounds: name the package whose benchmark to run"},
		{"no rounds", []string{"-rounds", "0", "-o", fresh(), "./p"}, "-rounds 0: want at least 1"},
		{"too few for a verdict", []string{"-rounds", "3", "-verdict", "-o", fresh(), "./p"}, "-rounds 3 with -verdict: the verdict needs at least 5 rounds"},
		{"file exists", []string{"-o", exists, "./p"}, "-o " + exists + " exists"},
		{"stdout", []string{"-o", "-", "./p"}, `-o "-": name the file to write`},
		{"one design named", []string{"-designs", "mutex", "-o", fresh(), "./p"}, "-designs mutex: a verdict compares designs; name at least two"},
		{"a design twice", []string{"-designs", "mutex,mutex", "-o", fresh(), "./p"}, `-designs "mutex,mutex": want distinct names`},
		{"unknown flag", []string{"-bogus", "./p"}, "flag provided but not defined: -bogus"},
		{"bad max-foreign", []string{"-max-foreign", "200%", "./p"}, `max-foreign "200%": want one above 0% and at most 100%`},
		{"baseline not run", []string{"-go", two, "-verdict", "-baseline", "rwmutex", "-o", fresh(), "./p"}, `the baseline "rwmutex" is not among the designs (mutex, sharded)`},
		{"one design found", []string{"-go", one, "-o", fresh(), "./p"}, "ran one design only (mutex)"},
		{"no design found", []string{"-go", none, "-o", fresh(), "./p"}, "ran no storetest.Benchmark (no result named design=)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := Main(append([]string{"rounds"}, tt.args...), nil, &stdout, &stderr)
			require.Error(t, err)
			assert.Equal(t, 2, Status(err))
			assert.ErrorContains(t, err, tt.want)
			assert.Empty(t, stdout.String())
		})
	}
	b, err := os.ReadFile(exists)
	require.NoError(t, err)
	assert.Equal(t, "mine\n", string(b), "an existing file is left as it was")
}

// TestRoundsEndToEnd runs the rounds for real: two rounds of
// BenchmarkTally (tally_test.go), the machine of storetest's Example, each
// design in a go test of its own. Every design the benchmark runs has one
// result per round and parallelism, each under its own go test's record,
// with the machine's CPU read around it; two rounds are too few for a
// verdict, and the verdict says so.
func TestRoundsEndToEnd(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	require.NoError(t, err, "the go command must be in PATH")
	out := filepath.Join(t.TempDir(), "bench.txt")
	var stdout, stderr bytes.Buffer
	err = Main([]string{"rounds", "-go", goCmd, "-bench", "Tally", "-benchtime", "200x", "-rounds", "2", "-o", out, "."}, nil, &stdout, &stderr)
	require.NoError(t, err, stderr.String())
	t.Log(stderr.String())

	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	d := newData()
	require.NoError(t, d.read(f, out, "sec/op"))
	require.GreaterOrEqual(t, len(d.designs), 2)
	assert.Contains(t, d.designs, "mutex")
	require.Len(t, d.groups, 2, "par=1 and par=8")
	for _, g := range d.groups {
		assert.Equal(t, "github.com/locklab/locklab/internal/storeverdict", g.Pkg)
		for _, design := range d.designs {
			rounds := d.values[g][design]
			require.Len(t, rounds, 2, "%s %s", g, design)
			for k, o := range rounds {
				r := o.round
				require.NotNil(t, r)
				assert.Equal(t, k+1, r.Round)
				assert.Equal(t, design, r.Design)
				assert.ElementsMatch(t, d.designs, r.Order)
				assert.True(t, r.CPU.Sampled(), "/proc/stat read around the go test")
				assert.Positive(t, r.GoTestCPU, "the go test's own CPU, its children's with it")
				assert.Positive(t, o.v)
			}
		}
	}
	var verdict, errOut bytes.Buffer
	err = Main([]string{"-max-foreign", "100%", out}, nil, &verdict, &errOut)
	assert.Equal(t, 2, Status(err))
	assert.ErrorContains(t, err, "too few rounds: at most 2 per design paired with mutex")
}
