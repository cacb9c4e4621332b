// Command storeverdict judges the designs of a user's own
// storetest.Benchmark against a baseline as the lab judges its own: rounds
// paired by position, the per-round ratio to the baseline, Yuen's trimmed
// mean with its 95% interval, Holm over every design and group as one
// family, equivalence within a margin; a note where a design's rounds fall
// in two clusters; and one ranking sentence per group.
//
//	for i in $(seq 10); do go test -run '^$' -bench . -count 1 ./yourpkg >> bench.txt; done
//	go run github.com/locklab/locklab/cmd/storeverdict -baseline mutex bench.txt
//
// Flags: -baseline (mutex), -unit (sec/op; lower is better unless it ends
// in /s), -margin (3%). Input it cannot judge — no storetest.Benchmark
// lines, one design, a baseline not in the input, fewer rounds than the
// analysis needs — ends it with a message and exit status 2. See
// docs/storetest.md and package internal/storeverdict.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/locklab/locklab/internal/storeverdict"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the command with its exit status: 0 for -h, the status an
// *storeverdict.ExitError carries (2 for input it cannot judge), 1 for
// any other failure.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	err := storeverdict.Main(args, stdin, stdout, stderr)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "storeverdict:", err)
	return storeverdict.Status(err)
}
