package plan

import (
	"strings"
	"time"
)

// CallWork is the name of the factor that spins a known amount of CPU in
// every data call of the server, outside its store (server -call-work): the
// known answer, measured one run after another. Side by side, the runner
// adds its own known-answer arm (-known) and this factor stays at its
// default; isolated, it is the way to run the same comparison, so that the
// two modes can be set beside each other.
//
// Its values are arms (Factor.Arm): every block runs every design at every
// value, in the block's drawn order, so that the report sets each design
// with the spin against itself without it, block by block.
const CallWork = "call-work"

var callWorkFactor = &Factor{
	Name: CallWork, JSON: "call_work", Label: "call work", Default: "0",
	Usage: "comma-separated CPU spun in every data call outside the store, before its handler (server -call-work, timed by the clock), e.g. 0,2us; " +
		"every design runs at every value in each block and is set against itself at the first (isolated only: side by side the known arm is -known's)",
	Parse: func(it string) (string, error) {
		d, err := durationItem(it, "-call-work", time.Millisecond, "2us")
		if err != nil {
			return "", err
		}
		return callWorkText(d), nil
	},
	Encode:      encodeDuration,
	Decode:      decodeDuration(callWorkText),
	ID:          func(v string) string { return "-cw" + strings.ReplaceAll(v, "µ", "u") },
	Server:      func(v string, _ RunDirs) []string { return []string{"-call-work", v} },
	Arm:         true,
	OmitDefault: true,
}

// callWorkText is a value's canonical text: "0" for none, the factor's
// default, so that a plan that does not sweep it keeps it out of its keys.
func callWorkText(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.String()
}
