package report

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/internal/lab/plan"
)

// armPair compares a mode in a cell with the same mode in the cell that
// differs only in an arm factor (plan.Factor.Arm), at the first value the
// plan swept: a design on go1.27.3 against itself on go1.26.8. The arm
// factors' values ran in the same blocks as the modes, so the two groups
// pair by block as two modes do. These are estimates, outside the family
// of primaries: the primaries compare the designs on each value.
type armPair struct {
	Pair
	against Cell
}

// armPairs are a cell's comparisons across the arm factors' values; none
// in a cell at every arm factor's first value.
func (rep *Report) armPairs(c Cell) []armPair {
	var out []armPair
	for _, f := range plan.Factors {
		vals := rep.Meta.Factors.Values(f.Name)
		if !f.Arm || len(vals) < 2 || c.Factors.Get(f.Name) == vals[0] {
			continue
		}
		base := c
		base.Factors = c.Factors.With(f.Name, vals[0])
		for _, mode := range rep.Meta.Modes {
			if rep.group(c.Section, c.Level, mode) != nil && rep.group(base.Section, base.Level, mode) != nil {
				out = append(out, armPair{Pair{mode, fmt.Sprintf("%s, %s %s", mode, f.Label, vals[0])}, base})
			}
		}
	}
	return out
}

// armsSwept names the arm factors the plan swept, with their first value,
// for the sentence that says what the estimates compare; "" when none.
func (rep *Report) armsSwept() string {
	var parts []string
	for _, f := range plan.Factors {
		if vals := rep.Meta.Factors.Values(f.Name); f.Arm && len(vals) > 1 {
			parts = append(parts, fmt.Sprintf("each design on every other %s against itself on %s %s", f.Label, f.Label, vals[0]))
		}
	}
	return strings.Join(parts, "; ")
}
