package storeverdict

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/locklab/locklab/internal/lab/paired"
)

// run is one go test of a recorded input: one design in one round, as its
// round record tells.
type run struct {
	file    int
	round   *Round
	foreign float64
	sampled bool // /proc/stat was read around it
	spoiled bool // foreign above the gate's share
}

// gated is the input after the validity gate: the results it keeps, and
// what it saw of every run.
type gated struct {
	max      float64
	recorded bool // the input carries round records; without them the foreign CPU is unknown
	runs     []run
	values   map[group]map[string][]obs // the kept results
}

// gate applies the lab's validity rule to the input's rounds: a design's
// run whose CPUs something other than its go test took more than max of
// (cpuset.Usage.Foreign, the runner's own arithmetic) is dropped, and
// with it its pairs with the baseline (pairs are matched by round, so the
// other rounds stay paired as they ran). Results without a round record,
// and runs whose /proc/stat was not read, are kept: nothing says they were
// spoiled.
func gate(d *data, max float64) gated {
	g := gated{max: max, recorded: d.recorded > 0, values: map[group]map[string][]obs{}}
	index := map[*Round]int{}
	for _, grp := range d.groups {
		g.values[grp] = map[string][]obs{}
		for design, xs := range d.values[grp] {
			var kept []obs
			for _, o := range xs {
				if o.round != nil {
					i, ok := index[o.round]
					if !ok {
						i = len(g.runs)
						index[o.round] = i
						f, sampled := o.round.Foreign()
						g.runs = append(g.runs, run{file: o.key.file, round: o.round, foreign: f, sampled: sampled, spoiled: sampled && f > max})
					}
					if g.runs[i].spoiled {
						continue
					}
				}
				kept = append(kept, o)
			}
			if len(kept) > 0 {
				g.values[grp][design] = kept
			}
		}
	}
	slices.SortFunc(g.runs, func(a, b run) int {
		return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.round.Round, b.round.Round),
			cmp.Compare(slices.Index(a.round.Order, a.round.Design), slices.Index(b.round.Order, b.round.Design)),
			strings.Compare(a.round.Design, b.round.Design))
	})
	return g
}

// dropped counts the spoiled runs.
func (g gated) dropped() int {
	n := 0
	for _, r := range g.runs {
		if r.spoiled {
			n++
		}
	}
	return n
}

// listed is how many dropped runs the paragraph names one by one.
const listed = 12

// paragraph is the report's word on the machine: the foreign CPU of the
// runs, the rule, and what it dropped — or that none of it is known.
func (g gated) paragraph() string {
	if !g.recorded {
		return "Foreign CPU: unknown. The input does not record the machine's CPU over each round (rounds run by `storeverdict rounds` do), " +
			"so whether something else took the CPUs while a round ran, and which rounds that spoiled, cannot be said; every round is kept."
	}
	var b strings.Builder
	var seeds []string
	var foreign []float64
	unsampled := 0
	for _, r := range g.runs {
		if s := strconv.Itoa(r.round.Seed); !slices.Contains(seeds, s) {
			seeds = append(seeds, s)
		}
		if r.sampled {
			foreign = append(foreign, r.foreign)
		} else {
			unsampled++
		}
	}
	word := "seed"
	if len(seeds) > 1 {
		word = "seeds"
	}
	rounds := map[[2]int]bool{}
	for _, r := range g.runs {
		rounds[[2]int{r.file, r.round.Round}] = true
	}
	fmt.Fprintf(&b, "Rounds: %d go test runs, one per design in each of %d rounds, each round's designs in an order drawn from %s %s (storeverdict rounds). ",
		len(g.runs), len(rounds), word, strings.Join(seeds, ", "))
	if len(foreign) == 0 {
		b.WriteString("Foreign CPU: unknown. No run could read /proc/stat, so whether something else took the CPUs cannot be said; every round is kept.")
		return b.String()
	}
	slices.Sort(foreign)
	fmt.Fprintf(&b, "Foreign CPU, by the lab's validity gate: something other than the go test took a median %s of the machine's CPU time over a run, at most %s "+
		"(/proc/stat's busy time, steal included, less the CPU of the go test and every process it waited for; a quiet run reads a few percent either way, from the kernel's 10 ms ticks). ",
		paired.PctAbs(foreign[len(foreign)/2]), paired.PctAbs(foreign[len(foreign)-1]))
	if g.max >= 1 {
		b.WriteString("The rule is off (-max-foreign 100%): every run is kept, whatever else took the machine, and the figures below carry it.")
		return b.String()
	}
	fmt.Fprintf(&b, "The rule: a run whose CPUs something else took more than %s of (-max-foreign) is dropped, and with it its pairs with the baseline; ", paired.PctAbs(g.max))
	var spoiled []string
	for _, r := range g.runs {
		if r.spoiled {
			spoiled = append(spoiled, fmt.Sprintf("round %d %s (%s)", r.round.Round, r.round.Design, paired.PctAbs(r.foreign)))
		}
	}
	switch {
	case len(spoiled) == 0:
		fmt.Fprintf(&b, "none of the %d was.", len(g.runs))
	case len(spoiled) > listed:
		fmt.Fprintf(&b, "%d of the %d were: %s and %d more.", len(spoiled), len(g.runs), strings.Join(spoiled[:listed], ", "), len(spoiled)-listed)
	case len(spoiled) == 1:
		fmt.Fprintf(&b, "1 of the %d was: %s.", len(g.runs), spoiled[0])
	default:
		fmt.Fprintf(&b, "%d of the %d were: %s.", len(spoiled), len(g.runs), strings.Join(spoiled, ", "))
	}
	if unsampled > 0 {
		fmt.Fprintf(&b, " %d runs could not read /proc/stat: their foreign CPU is unknown, and they are kept.", unsampled)
	}
	return b.String()
}
