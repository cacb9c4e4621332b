package storeverdict

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/perf/benchfmt"

	"github.com/locklab/locklab/internal/lab/cpuset"
	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/store/storetest"
)

// RoundsConfig is what the flags of storeverdict rounds set.
type RoundsConfig struct {
	Go        string   // the go command: a path, or a name looked up in PATH
	Bench     string   // go test -bench: the benchmarks that call storetest.Benchmark
	Benchtime string   // go test -benchtime; empty: go test's own
	CPU       string   // go test -cpu; empty: go test's own
	Rounds    int      // rounds, each every design once
	Seed      int      // draws each round's order (paired.Order)
	Designs   []string // empty: every design the benchmark runs
	Out       string   // the file written; it must not exist
	Verdict   bool     // judge the rounds when they are done
	Judge     Config   // the verdict's flags
	Pkgs      []string // the packages go test runs
}

// ParseRoundsFlags reads the command line of storeverdict rounds.
func ParseRoundsFlags(args []string, stderr io.Writer) (RoundsConfig, error) {
	var cfg RoundsConfig
	var designs string
	fs := flag.NewFlagSet("storeverdict rounds", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Go, "go", "go", "the go command")
	fs.StringVar(&cfg.Bench, "bench", ".", "go test -bench: the benchmarks that call storetest.Benchmark")
	fs.StringVar(&cfg.Benchtime, "benchtime", "", "go test -benchtime (go test's default when empty)")
	fs.StringVar(&cfg.CPU, "cpu", "", "go test -cpu (go test's default when empty)")
	fs.IntVar(&cfg.Rounds, "rounds", 10, "rounds to run, each running every design once")
	fs.IntVar(&cfg.Seed, "seed", 1, "draws each round's order of the designs; recorded with every round")
	fs.StringVar(&designs, "designs", "", "comma-separated designs to run (default: every design the benchmark runs)")
	fs.StringVar(&cfg.Out, "o", "bench.txt", "the file the rounds are written to; it must not exist")
	fs.BoolVar(&cfg.Verdict, "verdict", false, "judge the rounds when they are done (as storeverdict would, with the flags below)")
	cfg.Judge.flags(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: storeverdict rounds [-rounds 10] [-bench .] [-o bench.txt] [-verdict] [flags] ./yourpkg ...")
		fmt.Fprintln(fs.Output(), "runs every design of the package's storetest.Benchmark in a go test of its own, round after round, in an order drawn per round,")
		fmt.Fprintln(fs.Output(), "recording each go test's round, order and the machine's CPU over it; the file is what storeverdict reads")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return RoundsConfig{}, err
	}
	if err := cfg.Judge.check(); err != nil {
		return RoundsConfig{}, err
	}
	cfg.Pkgs = fs.Args()
	if designs != "" {
		cfg.Designs = strings.Split(designs, ",")
	}
	return cfg, cfg.check()
}

// check refuses a configuration that cannot give rounds to judge.
func (cfg *RoundsConfig) check() error {
	switch {
	case len(cfg.Pkgs) == 0:
		return bad("rounds: name the package whose benchmark to run, such as ./yourpkg")
	case cfg.Rounds < 1:
		return bad("rounds: -rounds %d: want at least 1", cfg.Rounds)
	case cfg.Verdict && cfg.Rounds < paired.MinBlocksRobust:
		return bad("rounds: -rounds %d with -verdict: the verdict needs at least %d rounds", cfg.Rounds, paired.MinBlocksRobust)
	case cfg.Bench == "":
		return bad("rounds: -bench is empty: give the benchmarks that call storetest.Benchmark, such as -bench .")
	case cfg.Out == "" || cfg.Out == "-":
		return bad("rounds: -o %q: name the file to write", cfg.Out)
	case cfg.Go == "":
		return bad("rounds: -go is empty")
	}
	for i, d := range cfg.Designs {
		if d == "" || slices.Contains(cfg.Designs[:i], d) {
			return bad("rounds: -designs %q: want distinct names separated by commas", strings.Join(cfg.Designs, ","))
		}
	}
	if len(cfg.Designs) == 1 {
		return bad("rounds: -designs %s: a verdict compares designs; name at least two", cfg.Designs[0])
	}
	if _, err := os.Stat(cfg.Out); !errors.Is(err, os.ErrNotExist) {
		return bad("rounds: -o %s exists (or cannot be checked): rounds go to a new file; remove it or name another", cfg.Out)
	}
	return nil
}

// Rounds is storeverdict rounds: it runs cfg.Rounds rounds of the
// package's storetest.Benchmark, each design of a round in a go test of its
// own (storetest.DesignEnv names it), in an order paired.Order draws from
// the seed and the round, so that a drift of the machine over the rounds
// falls on every design alike. Before each go test's output it writes the
// round's record (RoundKey): the round, the order, the machine's CPU over
// the go test from /proc/stat and the go test's own, whence the verdict's
// validity gate. With -verdict it then judges the file.
func Rounds(args []string, stdout, stderr io.Writer) error {
	cfg, err := ParseRoundsFlags(args, stderr)
	if err != nil {
		return err
	}
	designs := cfg.Designs
	if len(designs) == 0 {
		if designs, err = cfg.probe(stderr); err != nil {
			return err
		}
	}
	if cfg.Verdict && !slices.Contains(designs, cfg.Judge.Baseline) {
		return bad("rounds: the baseline %q is not among the designs (%s): choose one with -baseline", cfg.Judge.Baseline, strings.Join(designs, ", "))
	}
	f, err := os.OpenFile(cfg.Out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return failure(err)
	}
	if err := cfg.run(f, designs, stderr); err != nil {
		f.Close()
		return failure(fmt.Errorf("%w (the rounds before it are in %s)", err, cfg.Out))
	}
	if err := f.Close(); err != nil {
		return failure(err)
	}
	fmt.Fprintf(stderr, "storeverdict: %d rounds of %s in %s\n", cfg.Rounds, strings.Join(designs, ", "), cfg.Out)
	if !cfg.Verdict {
		return nil
	}
	judged := cfg.Judge
	judged.Files = []string{cfg.Out}
	return judge(judged, nil, stdout, stderr)
}

// run runs the rounds and writes them to w.
func (cfg *RoundsConfig) run(w io.Writer, designs []string, stderr io.Writer) error {
	fs, fsErr := procfs.NewDefaultFS()
	for k := 1; k <= cfg.Rounds; k++ {
		order := paired.Order(cfg.Seed, k, designs)
		for _, design := range order {
			rec := &Round{Round: k, Rounds: cfg.Rounds, Design: design, Seed: cfg.Seed, Order: order}
			var before cpuset.Counters
			if fsErr == nil {
				before, _ = cpuset.Read(fs)
			}
			cmd := cfg.goTest(design)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, stderr
			start := time.Now()
			err := cmd.Run()
			rec.Wall = math.Round(time.Since(start).Seconds()*1000) / 1000
			if before != nil {
				if after, err := cpuset.Read(fs); err == nil {
					rec.CPU = after.Set(nil).Minus(before.Set(nil)).Round(0.001)
				}
			}
			if err != nil {
				return fmt.Errorf("round %d, %s: %s: %w", k, design, strings.Join(cmd.Args, " "), err)
			}
			ps := cmd.ProcessState
			rec.GoTestCPU = (ps.UserTime() + ps.SystemTime()).Round(time.Millisecond).Seconds()
			ran, err := designsIn(out.Bytes())
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", k, design, err)
			}
			if !slices.Equal(ran, []string{design}) {
				return fmt.Errorf("round %d: the go test for %s ran %s: the benchmark must call storetest.Benchmark from a storetest that reads %s (update github.com/locklab/locklab)",
					k, design, named(ran), storetest.DesignEnv)
			}
			line, err := rec.line()
			if err != nil {
				return err
			}
			if _, err := w.Write(append(line, out.Bytes()...)); err != nil {
				return err
			}
			foreign := "unknown"
			if f, ok := rec.Foreign(); ok {
				foreign = paired.PctAbs(f)
			}
			fmt.Fprintf(stderr, "round %d/%d %s: %.1fs, foreign CPU %s\n", k, cfg.Rounds, design, rec.Wall, foreign)
		}
	}
	return nil
}

// named names the designs a go test ran, for a message.
func named(designs []string) string {
	if len(designs) == 0 {
		return "no design"
	}
	return strings.Join(designs, ", ")
}

// probe runs the benchmark once at -benchtime 1x for the designs it runs,
// in the order it runs them.
func (cfg *RoundsConfig) probe(stderr io.Writer) ([]string, error) {
	cmd := cfg.goTest("", "-benchtime", "1x")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, stderr
	fmt.Fprintf(stderr, "storeverdict: %s (for the designs)\n", strings.Join(cmd.Args, " "))
	if err := cmd.Run(); err != nil {
		return nil, failure(fmt.Errorf("rounds: %s: %w", strings.Join(cmd.Args, " "), err))
	}
	designs, err := designsIn(out.Bytes())
	if err != nil {
		return nil, failure(err)
	}
	switch len(designs) {
	case 0:
		return nil, bad("rounds: %s ran no storetest.Benchmark (no result named design=): check -bench and the package", strings.Join(cmd.Args, " "))
	case 1:
		return nil, bad("rounds: %s ran one design only (%s): a verdict compares designs", strings.Join(cmd.Args, " "), designs[0])
	}
	return designs, nil
}

// goTest is the go test of one design (every design when design is
// empty), with extra flags after the others.
func (cfg *RoundsConfig) goTest(design string, extra ...string) *exec.Cmd {
	args := []string{"test", "-run", "^$", "-bench", cfg.Bench, "-count", "1"}
	if cfg.Benchtime != "" {
		args = append(args, "-benchtime", cfg.Benchtime)
	}
	if cfg.CPU != "" {
		args = append(args, "-cpu", cfg.CPU)
	}
	args = append(append(args, extra...), cfg.Pkgs...)
	cmd := exec.Command(cfg.Go, args...)
	// The last of a duplicated variable is the one used: this one, also
	// when the caller's environment sets it.
	cmd.Env = append(os.Environ(), storetest.DesignEnv+"="+design)
	return cmd
}

// designsIn lists the designs of a go test's output, in the order first
// seen.
func designsIn(out []byte) ([]string, error) {
	var designs []string
	br := benchfmt.NewReader(bytes.NewReader(out), "go test")
	for br.Scan() {
		if rec, ok := br.Result().(*benchfmt.Result); ok {
			if _, design, ok, _ := nameOf(rec.Name); ok && !slices.Contains(designs, design) {
				designs = append(designs, design)
			}
		}
	}
	return designs, br.Err()
}
