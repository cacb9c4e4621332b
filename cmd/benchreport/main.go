// Command benchreport turns the raw output of BenchmarkStore (go test -bench
// Store ./store, rounds of it concatenated) into docs/results/store/:
// store.md and its charts, store-cs.svg and store-cpus.svg (package
// internal/lab/storebench says what they hold).
//
//	go run ./cmd/benchreport -command "make bench-store" bin/bench-store.txt
//	go run ./cmd/benchreport -out /tmp/r docs/results/store/bench.txt.gz
//	go test -run '^$' -bench Store -benchmem -count 1 ./store | go run ./cmd/benchreport -out /tmp/r
//	go run ./cmd/benchreport -cpu-list $(nproc)    # the -cpu list make bench-store runs
//
// `make bench-store` runs the benchmark's rounds and then this. A bad flag
// exits 2 with a message; input it cannot read, 1.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/locklab/locklab/internal/lab/storebench"
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
		fmt.Println(storebench.JoinCPUs(storebench.CPUList(cfg.CPUListFor)))
		return
	}
	if err := storebench.Write(cfg.Config, os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

type config struct {
	storebench.Config
	// CPUListFor, if set, asks for the -cpu list of a machine of this many
	// CPUs instead of a report.
	CPUListFor int
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("benchreport", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Out, "out", filepath.Join("docs", "results", "store"), "folder to write "+storebench.ReportFile+" and "+storebench.ChartFile+" into")
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
