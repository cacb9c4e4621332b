// Command benchreport turns the raw output of BenchmarkStore (go test -bench
// Store ./store) into docs/results/store/: store.md — the time per command
// of every design × op × parallelism × critical-section length, the speed
// targets of issue 10 judged from the data, a "which design when" summary,
// the allocation check — and store-cs.png, ns/op against the critical
// section per design.
//
//	go run ./cmd/benchreport -command "make bench-store" bin/bench-store.txt
//	go test -run '^$' -bench Store -benchmem ./store | go run ./cmd/benchreport -out /tmp/r
//
// `make bench-store` runs the benchmark and then this.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	if err := run(cfg, os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

type config struct {
	Out     string // folder the report goes into
	Command string // the command that produced the input, for the report
	Input   string // file, or "" / "-" for standard input
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("benchreport", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Out, "out", filepath.Join("docs", "results", "store"), "folder to write "+reportFile+" and "+chartFile+" into")
	fs.StringVar(&cfg.Command, "command", "", "the command that produced the input, quoted in the report (make passes it)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: benchreport [-out DIR] [-command CMD] [bench-output.txt | -]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return config{}, err
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
	chartPath := filepath.Join(cfg.Out, chartFile)
	if png != nil {
		if err := os.WriteFile(chartPath, png, 0o644); err != nil {
			return err
		}
	} else if err := os.Remove(chartPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err // a stale chart must not stay beside a report that has none
	}
	_, rawErr := os.Stat(filepath.Join(cfg.Out, rawFile))
	f, err := os.Create(filepath.Join(cfg.Out, reportFile))
	if err != nil {
		return err
	}
	if err := writeMarkdown(f, d, reportInput{Command: cfg.Command, HasChart: png != nil, HasRaw: rawErr == nil}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
