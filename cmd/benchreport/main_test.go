package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/internal/lab/storebench"
)

// runMainEnv makes the test binary run main instead of the tests, so the
// exit statuses are checked on the real thing.
const runMainEnv = "BENCHREPORT_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// sampleDir holds package storebench's test data: a short real run, and a
// README that holds no result.
var (
	sampleDir  = filepath.Join("..", "..", "internal", "lab", "storebench", "testdata")
	samplePath = filepath.Join(sampleDir, "store-bench.txt")
)

func TestExitStatus(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantStatus int
		wantErr    string
		wantOut    string
	}{
		{"report written", []string{"-command", "make bench-store", samplePath}, 0, "", ""},
		{"help", []string{"-h"}, 0, "usage: benchreport", ""},
		{"bad flag", []string{"-nope"}, 2, "flag provided but not defined", ""},
		{"two inputs", []string{samplePath, samplePath}, 2, "one input file at most", ""},
		{"empty -out", []string{"-out", "", samplePath}, 2, "-out must name a folder", ""},
		{"missing input", []string{filepath.Join(t.TempDir(), "absent.txt")}, 1, "no such file", ""},
		{"no Store results", []string{filepath.Join(sampleDir, "README.md")}, 1, "no BenchmarkStore results", ""},
		{"not gzip", []string{notGzip(t)}, 1, "gzip: invalid header", ""},
		{"cpu list", []string{"-cpu-list", "64"}, 0, "", "1,2,4,8,16,32,64\n"},
		{"cpu list of no CPUs", []string{"-cpu-list", "0"}, 2, "-cpu-list 0: want the machine's CPU count, at least 1", ""},
		{"cpu list not a number", []string{"-cpu-list", "two"}, 2, "invalid value", ""},
		{"cpu list with an input", []string{"-cpu-list", "2", samplePath}, 2, "-cpu-list takes no input file", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], append([]string{"-out", t.TempDir()}, tt.args...)...)
			cmd.Env = append(os.Environ(), runMainEnv+"=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			status := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				status = exit.ExitCode()
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.wantStatus, status, "stderr: %s", stderr.String())
			assert.Contains(t, stderr.String(), tt.wantErr)
			assert.Equal(t, tt.wantOut, stdout.String())
		})
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    config
		wantErr error
	}{
		{"defaults read stdin", nil, config{Config: storebench.Config{Out: filepath.Join("docs", "results", "store")}}, nil},
		{"all set", []string{"-out", "o", "-command", "make bench-store", "in.txt"}, config{Config: storebench.Config{Out: "o", Command: "make bench-store", Input: "in.txt"}}, nil},
		{"dash is stdin", []string{"-"}, config{Config: storebench.Config{Out: filepath.Join("docs", "results", "store"), Input: "-"}}, nil},
		{"help", []string{"-help"}, config{}, flag.ErrHelp},
		{"cpu list", []string{"-cpu-list", "8"}, config{Config: storebench.Config{Out: filepath.Join("docs", "results", "store")}, CPUListFor: 8}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args, &bytes.Buffer{})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// notGzip is a file named like a gzipped raw output that is plain text.
func notGzip(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bench.txt.gz")
	require.NoError(t, os.WriteFile(path, []byte("BenchmarkStore 1 1 ns/op\n"), 0o644))
	return path
}
