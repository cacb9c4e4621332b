package storebench

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Config is one report to write.
type Config struct {
	Out     string // folder the report goes into
	Command string // the command that produced the input, for the report
	Input   string // file, or "" / "-" for standard input
}

// Write reads the benchmark output cfg names (a file, gzipped if its name
// ends in .gz, or stdin) and writes the report and its charts into
// cfg.Out. A chart the input has no data for is removed, not left stale.
func Write(cfg Config, stdin io.Reader) error {
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
	cs, err := csChart(d)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	if err := writeOrRemove(filepath.Join(cfg.Out, ChartFile), cs); err != nil {
		return err
	}
	cpus, err := cpuChart(d)
	if err != nil {
		return fmt.Errorf("CPU chart: %w", err)
	}
	if err := writeOrRemove(filepath.Join(cfg.Out, CPUChartFile), cpus); err != nil {
		return err
	}
	_, rawErr := os.Stat(filepath.Join(cfg.Out, rawFile))
	f, err := os.Create(filepath.Join(cfg.Out, ReportFile))
	if err != nil {
		return err
	}
	if err := writeMarkdown(f, d, reportInput{Command: cfg.Command, HasChart: cs != nil, HasCPUChart: cpus != nil, HasRaw: rawErr == nil}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeOrRemove writes a chart, or removes the file when there is none: a
// stale chart must not stay beside a report that has none.
func writeOrRemove(path string, svg []byte) error {
	if svg != nil {
		return os.WriteFile(path, svg, 0o644)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
