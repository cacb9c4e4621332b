// Package storeverdict reads a user's own rounds of storetest.Benchmark
// (go test -bench output) and judges every design against a baseline the
// way the lab judges its own: per-round ratios paired by round, Yuen's
// trimmed mean of their logs with a 95% interval, Holm over all the
// comparisons as one family, equivalence within a margin (package
// internal/lab/paired). cmd/storeverdict is its command.
package storeverdict

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/locklab/locklab/internal/lab/cpuset"
)

// Alpha is the family-wise level of the verdicts (the lab's).
const Alpha = 0.05

// Config is what the flags set.
type Config struct {
	Baseline string  // design every other is compared with
	Unit     string  // benchfmt unit judged (ns/op is read as sec/op)
	Margin   float64 // equivalence margin, a fraction (0.03 is ±3%)
	// MaxForeign is the validity gate's share (cpuset.DefaultMaxForeign
	// by default): a recorded run whose CPUs something else took more of
	// is dropped.
	MaxForeign float64
	Files      []string
}

// ExitError is an error with the exit status the command ends with: 2 for
// a usage error or input that cannot be judged, 1 for a failure to read.
type ExitError struct {
	Status int
	Err    error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// bad is input (or flags) that cannot be judged: exit status 2.
func bad(format string, args ...any) error {
	return &ExitError{Status: 2, Err: fmt.Errorf(format, args...)}
}

// Status is the exit status for an error Main returned: 0 for nil, the
// ExitError's status, 1 for anything else.
func Status(err error) int {
	if err == nil {
		return 0
	}
	if e, ok := errors.AsType[*ExitError](err); ok {
		return e.Status
	}
	return 1
}

// Main is the whole command: it parses args, reads the files they name (or
// stdin), writes the report to stdout and warnings to stderr, and returns
// an *ExitError for anything that should end it with a non-zero status.
// -h returns flag.ErrHelp (status 0 by the caller's choice).
//
// With "rounds" as its first argument it runs rounds instead (Rounds).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "rounds" {
		return Rounds(args[1:], stdout, stderr)
	}
	cfg, err := ParseFlags(args, stderr)
	if err != nil {
		return err
	}
	return judge(cfg, stdin, stdout, stderr)
}

// judge reads the input cfg names and writes the verdict.
func judge(cfg Config, stdin io.Reader, stdout, stderr io.Writer) error {
	d := newData()
	if len(cfg.Files) == 0 {
		if err := d.read(stdin, "<stdin>", cfg.Unit); err != nil {
			return failure(err)
		}
	}
	for _, name := range cfg.Files {
		if err := readFile(d, name, cfg.Unit, stdin); err != nil {
			return failure(err)
		}
	}
	for _, s := range d.skipped {
		fmt.Fprintln(stderr, "storeverdict: skipped:", s)
	}
	rep, err := analyse(d, cfg)
	if err != nil {
		return err
	}
	return rep.write(stdout)
}

// failure is err with its exit status: its own if it has one (input that
// cannot be judged), 1 (a failure to read) if not.
func failure(err error) error {
	if _, ok := errors.AsType[*ExitError](err); ok {
		return err
	}
	return &ExitError{Status: 1, Err: err}
}

func readFile(d *data, name, unit string, stdin io.Reader) error {
	if name == "-" {
		return d.read(stdin, "<stdin>", unit)
	}
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return d.read(f, name, unit)
}

// ParseFlags reads the command line.
func ParseFlags(args []string, stderr io.Writer) (Config, error) {
	var cfg Config
	fs := flag.NewFlagSet("storeverdict", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg.flags(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: storeverdict [-baseline mutex] [-unit sec/op] [-margin 3%] [-max-foreign 10%] [bench.txt ... | -]")
		fmt.Fprintln(fs.Output(), "       storeverdict rounds [flags] ./yourpkg   (storeverdict rounds -h)")
		fmt.Fprintln(fs.Output(), "reads rounds of storetest.Benchmark output (go test -bench); without round records the k-th result of each name is round k")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return Config{}, err
	}
	if err := cfg.check(); err != nil {
		return Config{}, err
	}
	cfg.Files = fs.Args()
	return cfg, nil
}

// flags declares the verdict's flags, on the verdict's command line and on
// rounds' (for -verdict).
func (cfg *Config) flags(fs *flag.FlagSet) {
	cfg.Margin, cfg.MaxForeign = 0.03, cpuset.DefaultMaxForeign
	fs.StringVar(&cfg.Baseline, "baseline", "mutex", "the design every other design is compared with")
	fs.StringVar(&cfg.Unit, "unit", "sec/op", "the measurement judged, as go test prints its unit (ns/op is sec/op); lower is better unless it ends in /s")
	fs.Var(&shareFlag{&cfg.Margin, "margin", false}, "margin", "equivalence margin: `3%` (or 0.03) calls a design the same as the baseline when its 90% interval lies within ±3%")
	fs.Var(&shareFlag{&cfg.MaxForeign, "max-foreign", true}, "max-foreign",
		"validity gate, the lab runner's rule: a recorded run whose CPUs something other than its go test took more than this `share` of is dropped (100% keeps every run)")
}

// check reads what the flags left to be read.
func (cfg *Config) check() error {
	if cfg.Baseline == "" {
		return bad("-baseline must name a design")
	}
	if cfg.Unit == "ns/op" {
		cfg.Unit = "sec/op" // benchfmt reads ns/op as sec/op
	}
	return nil
}

// parse parses a command line: flag.ErrHelp for -h, an *ExitError (2) for
// a bad flag.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &ExitError{Status: 2, Err: err}
	}
	return nil
}

// shareFlag reads a share: "3%" or "0.03", above 0 and below 100% (or up
// to 100% when whole is set).
type shareFlag struct {
	v     *float64
	name  string
	whole bool
}

func (m *shareFlag) String() string {
	if m.v == nil {
		return ""
	}
	return strconv.FormatFloat(100*(*m.v), 'g', -1, 64) + "%"
}

func (m *shareFlag) Set(s string) error {
	t := strings.TrimSpace(s)
	scale := 1.0
	if v, ok := strings.CutSuffix(t, "%"); ok {
		t, scale = v, 0.01
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return fmt.Errorf("%s %q: want a percentage such as 3%% or a fraction such as 0.03", m.name, s)
	}
	v *= scale
	switch {
	case m.whole && !(v > 0 && v <= 1):
		return fmt.Errorf("%s %q: want one above 0%% and at most 100%%", m.name, s)
	case !m.whole && !(v > 0 && v < 1):
		return fmt.Errorf("%s %q: want one above 0%% and below 100%%", m.name, s)
	}
	*m.v = v
	return nil
}
