// Command benchreport turns the raw output of BenchmarkStore (go test -bench
// Store ./store, rounds of it concatenated) into docs/results/store/:
// store.md — the time per command of every design × op × parallelism ×
// critical-section length × CPU count, with a row whose runs fall into two
// clusters shown as both; the designs' speed targets and a "which design
// when" ranking, each judged on 95% intervals (of the median, or of the
// per-round ratio of two designs); the allocation check — store-cs.png,
// ns/op against the critical section per design, and store-cpus.png, ns/op
// against CPUs per design.
//
//	go run ./cmd/benchreport -command "make bench-store" bin/bench-store.txt
//	go run ./cmd/benchreport -out /tmp/r docs/results/store/bench.txt.gz
//	go test -run '^$' -bench Store -benchmem -count 1 ./store | go run ./cmd/benchreport -out /tmp/r
//	go run ./cmd/benchreport -cpu-list $(nproc)    # the -cpu list make bench-store runs
//
// `make bench-store` runs the benchmark's rounds and then this.
package main

import (
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(2)
	}
	if cfg.CPUListFor > 0 {
		fmt.Println(joinCPUs(cpuList(cfg.CPUListFor)))
		return
	}
	if err := run(cfg, os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

type config struct {
	Out     string // folder the report goes into
	Command string // the command that produced the input, for the report
	Input   string // file, or "" / "-" for standard input
	// CPUListFor, if set, asks for the -cpu list of a machine of this many
	// CPUs instead of a report.
	CPUListFor int
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("benchreport", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Out, "out", filepath.Join("docs", "results", "store"), "folder to write "+reportFile+" and "+chartFile+" into")
	fs.StringVar(&cfg.Command, "command", "", "the command that produced the input, quoted in the report (make passes it)")
	fs.IntVar(&cfg.CPUListFor, "cpu-list", 0, "print the -cpu list for a machine of this many CPUs (1, 2, the powers of two up to it, and it) and exit")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: benchreport [-out DIR] [-command CMD] [bench-output.txt | -]")
		fmt.Fprintln(fs.Output(), "       benchreport -cpu-list NCPU")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	listAsked := false
	fs.Visit(func(f *flag.Flag) { listAsked = listAsked || f.Name == "cpu-list" })
	if listAsked {
		if cfg.CPUListFor < 1 {
			return config{}, fmt.Errorf("-cpu-list %d: want the machine's CPU count, at least 1", cfg.CPUListFor)
		}
		if fs.NArg() > 0 {
			return config{}, fmt.Errorf("-cpu-list takes no input file, got %q", fs.Args())
		}
		return cfg, nil
	}
	switch fs.NArg() {
	case 0:
	case 1:
		cfg.Input = fs.Arg(0)
	default:
		return config{}, fmt.Errorf("one input file at most, got %d: %q", fs.NArg(), fs.Args())
	}
	if cfg.Out == "" {
		return config{}, errors.New("-out must name a folder")
	}
	return cfg, nil
}

func run(cfg config, stdin io.Reader) error {
	in, name := stdin, "<stdin>"
	if cfg.Input != "" && cfg.Input != "-" {
		f, err := os.Open(cfg.Input)
		if err != nil {
			return err
		}
		defer f.Close()
		in, name = f, cfg.Input
		if strings.HasSuffix(name, ".gz") {
			// make bench-store keeps the raw output gzipped.
			zr, err := gzip.NewReader(f)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			defer zr.Close()
			in = zr
		}
	}
	d, err := parse(in, name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return err
	}
	png, err := csChart(d)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	if err := writeOrRemove(filepath.Join(cfg.Out, chartFile), png); err != nil {
		return err
	}
	cpuPNG, err := cpuChart(d)
	if err != nil {
		return fmt.Errorf("CPU chart: %w", err)
	}
	if err := writeOrRemove(filepath.Join(cfg.Out, cpuChartFile), cpuPNG); err != nil {
		return err
	}
	_, rawErr := os.Stat(filepath.Join(cfg.Out, rawFile))
	f, err := os.Create(filepath.Join(cfg.Out, reportFile))
	if err != nil {
		return err
	}
	if err := writeMarkdown(f, d, reportInput{Command: cfg.Command, HasChart: png != nil, HasCPUChart: cpuPNG != nil, HasRaw: rawErr == nil}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeOrRemove writes a chart, or removes the file when there is none: a
// stale chart must not stay beside a report that has none.
func writeOrRemove(path string, png []byte) error {
	if png != nil {
		return os.WriteFile(path, png, 0o644)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
