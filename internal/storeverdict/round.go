package storeverdict

import (
	"encoding/json"
	"fmt"

	"github.com/locklab/locklab/internal/lab/cpuset"
)

// RoundKey is the key of the line storeverdict rounds writes before each
// go test's output:
//
//	locklab-round: {"round":3,"rounds":10,"design":"mutex",...}
//
// go test -bench output reads a "key: value" line as configuration that
// holds for every result after it, until the key is set again (benchfmt),
// so each result carries the record of the go test that printed it, and
// benchstat and other readers of the format pass over it.
const RoundKey = "locklab-round"

// Round is the record of one design's run in one round: which round, the
// order the round ran its designs in, and the machine's CPU over the run,
// from which the validity gate reads the CPU something else took.
type Round struct {
	Round  int      `json:"round"` // 1 to Rounds
	Rounds int      `json:"rounds"`
	Design string   `json:"design"`
	Seed   int      `json:"seed"`  // Order is paired.Order(Seed, Round, the designs)
	Order  []string `json:"order"` // the round's designs, in the order they ran
	// CPU is the whole machine's time over the go test, from /proc/stat
	// (not sampled where it could not be read), and GoTestCPU the go test
	// process's own CPU with that of every process it waited for (the
	// build, the test binary): the arithmetic of the runner's gate,
	// cpuset.Usage.Foreign, gives the share something else took.
	CPU       cpuset.Usage `json:"cpu_set"`
	GoTestCPU float64      `json:"go_test_cpu_seconds"`
	Wall      float64      `json:"wall_seconds"`
}

// Foreign is the share of the machine's CPU time that something other than
// the go test took over it; ok is false when /proc/stat was not read.
func (r *Round) Foreign() (share float64, ok bool) {
	if !r.CPU.Sampled() {
		return 0, false
	}
	return r.CPU.Foreign(r.GoTestCPU), true
}

// line is the record as storeverdict rounds writes it.
func (r *Round) line() ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return append(append([]byte(RoundKey+": "), b...), '\n'), nil
}

// parseRound reads a record's value.
func parseRound(value string) (*Round, error) {
	var r Round
	if err := json.Unmarshal([]byte(value), &r); err != nil {
		return nil, fmt.Errorf("%s: %w", RoundKey, err)
	}
	switch {
	case r.Round < 1:
		return nil, fmt.Errorf("%s: round %d: rounds are numbered from 1", RoundKey, r.Round)
	case r.Design == "":
		return nil, fmt.Errorf("%s: no design", RoundKey)
	}
	return &r, nil
}
