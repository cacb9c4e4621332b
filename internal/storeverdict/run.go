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
)

// Alpha is the family-wise level of the verdicts (the lab's).
const Alpha = 0.05

// Config is what the flags set.
type Config struct {
	Baseline string  // design every other is compared with
	Unit     string  // benchfmt unit judged (ns/op is read as sec/op)
	Margin   float64 // equivalence margin, a fraction (0.03 is ±3%)
	Files    []string
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
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := ParseFlags(args, stderr)
	if err != nil {
		return err
	}
	d := newData()
	if len(cfg.Files) == 0 {
		if err := d.read(stdin, "<stdin>", cfg.Unit); err != nil {
			return &ExitError{Status: 1, Err: err}
		}
	}
	for _, name := range cfg.Files {
		if err := readFile(d, name, cfg.Unit, stdin); err != nil {
			return &ExitError{Status: 1, Err: err}
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
	cfg := Config{Margin: 0.03}
	fs := flag.NewFlagSet("storeverdict", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Baseline, "baseline", "mutex", "the design every other design is compared with")
	fs.StringVar(&cfg.Unit, "unit", "sec/op", "the measurement judged, as go test prints its unit (ns/op is sec/op); lower is better unless it ends in /s")
	fs.Var((*marginFlag)(&cfg.Margin), "margin", "equivalence margin: `3%` (or 0.03) calls a design the same as the baseline when its 90% interval lies within ±3%")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: storeverdict [-baseline mutex] [-unit sec/op] [-margin 3%] [bench.txt ... | -]")
		fmt.Fprintln(fs.Output(), "reads rounds of storetest.Benchmark output (go test -bench); the k-th result of each name is round k")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return Config{}, err
		}
		return Config{}, &ExitError{Status: 2, Err: err}
	}
	if cfg.Baseline == "" {
		return Config{}, bad("-baseline must name a design")
	}
	if cfg.Unit == "ns/op" {
		cfg.Unit = "sec/op" // benchfmt reads ns/op as sec/op
	}
	cfg.Files = fs.Args()
	return cfg, nil
}

// marginFlag reads "3%" or "0.03".
type marginFlag float64

func (m *marginFlag) String() string {
	return strconv.FormatFloat(100*float64(*m), 'g', -1, 64) + "%"
}

func (m *marginFlag) Set(s string) error {
	t := strings.TrimSpace(s)
	scale := 1.0
	if v, ok := strings.CutSuffix(t, "%"); ok {
		t, scale = v, 0.01
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return fmt.Errorf("margin %q: want a percentage such as 3%% or a fraction such as 0.03", s)
	}
	v *= scale
	if !(v > 0 && v < 1) {
		return fmt.Errorf("margin %q: want one above 0%% and below 100%%", s)
	}
	*m = marginFlag(v)
	return nil
}
