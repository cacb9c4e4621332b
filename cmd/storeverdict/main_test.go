package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRunExitStatus(t *testing.T) {
	var good strings.Builder
	for k := range 6 {
		good.WriteString("BenchmarkX/design=mutex/par=1-2 100 200 ns/op\n")
		good.WriteString("BenchmarkX/design=sharded/par=1-2 100 " + []string{"100", "101", "99", "100", "102", "98"}[k] + " ns/op\n")
	}
	tests := []struct {
		name   string
		args   []string
		in     string
		status int
		stderr string
		stdout string
	}{
		{"verdict", nil, good.String(), 0, "", "sharded 2.00× ["},
		{"help", []string{"-h"}, "", 0, "usage: storeverdict", ""},
		{"no benchmark lines", nil, "PASS\n", 2, "storeverdict: no storetest.Benchmark results in the input", ""},
		{"one design", nil, "BenchmarkX/design=mutex/par=1 1 2 ns/op\n", 2, "storeverdict: only one design (mutex)", ""},
		{"baseline absent", []string{"-baseline", "atomic"}, good.String(), 2, `storeverdict: the baseline "atomic" is not among the designs`, ""},
		{"too few rounds", nil, "BenchmarkX/design=mutex/par=1 1 2 ns/op\nBenchmarkX/design=atomic/par=1 1 1 ns/op\n", 2, "needs at least 5", ""},
		{"unreadable file", []string{"/nonexistent/bench.txt"}, "", 1, "storeverdict: open /nonexistent/bench.txt", ""},
		{"bad flag", []string{"-margin", "x"}, good.String(), 2, `invalid value "x" for flag -margin`, ""},
		{"rounds help", []string{"rounds", "-h"}, "", 0, "usage: storeverdict rounds", ""},
		{"rounds without a package", []string{"rounds", "-o", "/nonexistent/bench.txt"}, "", 2, "storeverdict: rounds: name the package", ""},
		{"rounds bad flag", []string{"rounds", "-rounds", "x", "./p"}, "", 2, `invalid value "x" for flag -rounds`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			assert.Equal(t, tt.status, run(tt.args, strings.NewReader(tt.in), &out, &errOut))
			assert.Contains(t, errOut.String(), tt.stderr)
			assert.Contains(t, out.String(), tt.stdout)
		})
	}
}
