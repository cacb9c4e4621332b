// Command storeverdict judges the designs of a user's own
// storetest.Benchmark against a baseline as the lab judges its own: rounds
// paired by round, the per-round ratio to the baseline, Yuen's trimmed
// mean with its 95% interval, Holm over every design and group as one
// family, equivalence within a margin; the lab's validity gate on the
// machine's foreign CPU; a note where a design's rounds fall in two
// clusters; and one ranking sentence per group.
//
//	go run github.com/locklab/locklab/cmd/storeverdict rounds -rounds 10 -o bench.txt -verdict ./yourpkg
//	go run github.com/locklab/locklab/cmd/storeverdict -baseline mutex bench.txt
//
// storeverdict rounds runs the rounds: each design of a round in a go test
// of its own (storetest.DesignEnv), in an order drawn per round from -seed,
// each go test's output preceded by a record of its round, its order and
// the machine's CPU over it (/proc/stat, and the go test's own). Flags:
// -rounds (10), -bench (.), -benchtime, -cpu, -designs (all the benchmark
// runs), -seed (1), -o (bench.txt, which must not exist), -verdict (judge
// the file when done), -go (the go command).
//
// storeverdict reads such files, or plain go test -bench output (the k-th
// result of each name is then round k, and the foreign CPU unknown).
// Flags: -baseline (mutex), -unit (sec/op; lower is better unless it ends
// in /s), -margin (3%), -max-foreign (the lab runner's 10%: a recorded run
// whose CPUs something else took more of is dropped with its pairs).
// Input or flags it cannot judge — no storetest.Benchmark lines, one
// design, a baseline not in the input, fewer rounds than the analysis
// needs, a bad flag — end it with a message and exit status 2. See
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
