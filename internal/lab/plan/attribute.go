package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Attribute is the name of the factor that profiles the server's CPU over a
// run's measured window and folds it into categories (CPU attribution):
// "off" runs as ever; "on" profiles every run; "blocks=K" profiles every run
// of K blocks spread over the study and runs the others as "off" would.
// Profiling costs the server CPU (the profiler's signals and the Prometheus
// metrics that its endpoint turns on), so "off,on" — every combination run
// both ways in every block — is how that cost is measured.
const Attribute = "attribute"

const (
	attributeOff    = "off"
	attributeOn     = "on"
	attributeBlocks = "blocks="
)

// attributeFactor is the row of Factors. It is the innermost factor, so
// that a combination's runs without attribution and its runs with it are
// close in time inside their block: only the combination's other levels
// and modes run between a run and its twin.
var attributeFactor = &Factor{
	Name: Attribute, JSON: "attribute", Label: "attribution", Default: attributeOff,
	Usage: "comma-separated CPU attribution of the server: off; on (every run's CPU profile folded into categories, " +
		"and its system calls counted); blocks=K (every run of K blocks spread over the study, alone in the list); " +
		"off,on runs both in every block, to measure what attribution costs",
	Parse: func(it string) (string, error) {
		if it == attributeOff || it == attributeOn {
			return it, nil
		}
		if k, ok := strings.CutPrefix(it, attributeBlocks); ok {
			n, err := strconv.Atoi(k)
			if err == nil && n >= 1 && !strings.HasPrefix(k, "+") {
				return attributeBlocks + strconv.Itoa(n), nil
			}
		}
		return "", fmt.Errorf("-attribute: %q: want off, on or blocks=K (K ≥ 1 blocks)", it)
	},
	Encode: func(v string) any { return v },
	Decode: decodeString,
	ID: func(v string) string {
		if k, ok := strings.CutPrefix(v, attributeBlocks); ok {
			return "-attrb" + k
		}
		return "-attr"
	},
}

// AttributedBlock says whether a run of value v in block rep (1-based) of
// reps is profiled. blocks=K takes the K blocks that split the study most
// evenly, the last one always among them: with 12 blocks and K=4, blocks
// 3, 6, 9 and 12.
func AttributedBlock(v string, rep, reps int) bool {
	switch {
	case v == attributeOn:
		return true
	case strings.HasPrefix(v, attributeBlocks):
		k, _ := strconv.Atoi(strings.TrimPrefix(v, attributeBlocks)) // canonical: Parse gave it
		return rep*k/reps != (rep-1)*k/reps
	}
	return false
}

// CheckAttribute checks the -attribute values against the plan's blocks: a
// sample of blocks is the study's one value (beside "off" or "on" its
// unprofiled runs would repeat theirs), and cannot ask for more blocks than
// there are.
func CheckAttribute(values []string, reps int) error {
	for _, v := range values {
		k, ok := strings.CutPrefix(v, attributeBlocks)
		if !ok {
			continue
		}
		if len(values) > 1 {
			return fmt.Errorf("-attribute %s: %s samples the blocks of the one study; give it alone, or off,on to measure what attribution costs",
				strings.Join(values, ","), v)
		}
		if n, _ := strconv.Atoi(k); n > reps {
			return fmt.Errorf("-attribute %s: %d blocks asked of a study of %d (-reps); want 1..%d, or on", v, n, reps, reps)
		}
	}
	return nil
}

// Attributes says whether any value of the space profiles a run.
func (sp Space) Attributes() bool {
	return slices.ContainsFunc(sp.Values(Attribute), func(v string) bool { return v != attributeOff })
}
