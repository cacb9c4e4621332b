package storeverdict

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/locklab/locklab/store"
)

// group is one place the designs are compared: a benchmark name without its
// design, split into the rest of the name, the parallelism (par=P, b.SetParallelism)
// and GOMAXPROCS (go test's -N suffix, 1 when absent), in one package
// (go test's pkg: line): two packages' benchmarks of one name measure
// different machines, and are never pooled.
type group struct {
	Pkg    string // empty when the input names none
	Prefix string // BenchmarkX plus any sub-benchmark parts other than design= and par=
	Par    int    // 0 when the name has no par=
	CPU    int
}

// roundKey pairs a design's result with the baseline's. A result without a
// round record is the k-th of its name in the input (file -1, round k); a
// result with one is that record's round in its file, so that a round the
// gate drops leaves the others paired as they ran.
type roundKey struct{ file, round int }

func (k roundKey) compare(o roundKey) int {
	if k.file != o.file {
		return k.file - o.file
	}
	return k.round - o.round
}

// obs is one result: a design's value in one round of a group.
type obs struct {
	key   roundKey
	v     float64
	round *Round // its round record; nil when the input has none
}

// data is the input: each group's results per design, in the order read.
type data struct {
	groups  []group // in the order first seen
	values  map[group]map[string][]obs
	designs []string // in the order first seen
	results int      // storetest.Benchmark lines read
	other   int      // benchmark lines without design=
	noUnit  int      // storetest lines without the unit
	skipped []string
	files   int // inputs read
	// recorded and unrecorded count the results with and without a round
	// record (RoundKey).
	recorded, unrecorded int
}

func newData() *data { return &data{values: map[group]map[string][]obs{}} }

// read adds one go test -bench output. Lines of other benchmarks (no
// design= part) are counted and left out; syntax errors are kept for a
// warning. A round record that cannot be read, or that does not fit the
// results after it, is input that cannot be judged (an *ExitError, 2).
func (d *data) read(r io.Reader, fileName, unit string) error {
	d.files++
	records := map[string]*Round{} // by the line's value: one per go test
	br := benchfmt.NewReader(r, fileName)
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			d.skipped = append(d.skipped, rec.Error())
		case *benchfmt.Result:
			g, design, ok, err := nameOf(rec.Name)
			file, line := rec.Pos()
			if err != nil {
				d.skipped = append(d.skipped, fmt.Sprintf("%s:%d: %v", file, line, err))
				continue
			}
			if !ok {
				d.other++
				continue
			}
			g.Pkg = rec.GetConfig("pkg")
			var round *Round
			if value := rec.GetConfig(RoundKey); value != "" {
				if round = records[value]; round == nil {
					if round, err = parseRound(value); err != nil {
						return bad("%s:%d: %v", file, line, err)
					}
					records[value] = round
				}
				if round.Design != design {
					return bad("%s:%d: a result of %s under the round record of %s (round %d): each design's go test must run that design only; "+
						"is the benchmark's storetest older than storetest.DesignEnv?", file, line, design, round.Design, round.Round)
				}
			}
			v, ok := rec.Value(unit)
			if !ok {
				d.noUnit++
				continue
			}
			if err := d.add(g, design, v, round, file, line); err != nil {
				return err
			}
		}
	}
	return br.Err()
}

// add files one result under its group and design.
func (d *data) add(g group, design string, v float64, round *Round, file string, line int) error {
	byDesign := d.values[g]
	if byDesign == nil {
		byDesign = map[string][]obs{}
		d.values[g] = byDesign
		d.groups = append(d.groups, g)
	}
	o := obs{key: roundKey{-1, len(byDesign[design])}, v: v, round: round}
	if round != nil {
		o.key = roundKey{d.files - 1, round.Round}
		for _, p := range byDesign[design] {
			if p.key == o.key {
				return bad("%s:%d: round %d of %s appears twice (%s) in one input: the rounds of two runs go in two files", file, line, round.Round, design, g)
			}
		}
		d.recorded++
	} else {
		d.unrecorded++
	}
	byDesign[design] = append(byDesign[design], o)
	if !slices.Contains(d.designs, design) {
		d.designs = append(d.designs, design)
	}
	d.results++
	return nil
}

// nameOf splits a storetest.Benchmark name, BenchmarkX/design=D/par=P-N
// (go test prints it without "Benchmark"; benchfmt gives it so): ok is
// false for a name without design=.
func nameOf(name benchfmt.Name) (g group, design string, ok bool, err error) {
	base, parts := name.Parts()
	g.CPU = 1 // go test omits the -N suffix when GOMAXPROCS is 1
	var rest strings.Builder
	rest.Write(base)
	for _, p := range parts {
		switch {
		case bytes.HasPrefix(p, []byte("-")):
			n, err := strconv.Atoi(string(p[1:]))
			if err != nil || n < 1 {
				return group{}, "", false, fmt.Errorf("%s: bad GOMAXPROCS suffix %q", name, p)
			}
			g.CPU = n
		case bytes.HasPrefix(p, []byte("/design=")):
			design = string(p[len("/design="):])
		case bytes.HasPrefix(p, []byte("/par=")):
			n, err := strconv.Atoi(string(p[len("/par="):]))
			if err != nil || n < 1 {
				return group{}, "", false, fmt.Errorf("%s: bad par=", name)
			}
			g.Par = n
		default:
			rest.Write(p)
		}
	}
	if design == "" {
		return group{}, "", false, nil
	}
	g.Prefix = rest.String()
	return g, design, true, nil
}

// designOrder is the registry's order, then designs the registry lacks
// (added with storetest.Store) in the order seen.
func (d *data) designOrder() []string {
	var out []string
	for _, name := range store.DesignNames() {
		if slices.Contains(d.designs, name) {
			out = append(out, name)
		}
	}
	for _, name := range d.designs {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// String names a group for a heading: "Tally par=8 on 2 CPUs", and
// "example.com/tally: Tally par=8 on 2 CPUs" where the input holds more
// than one package (the report clears Pkg otherwise).
func (g group) String() string {
	s := strings.TrimPrefix(g.Prefix, "Benchmark")
	if g.Par > 0 {
		s += fmt.Sprintf(" par=%d", g.Par)
	}
	s += " on " + cpus(g.CPU)
	if g.Pkg != "" {
		s = g.Pkg + ": " + s
	}
	return s
}

// where names a group inside a sentence: "at par=8 on 2 CPUs", "in
// example.com/tally at par=8 on 2 CPUs".
func (g group) where() string {
	s := "at"
	if g.Pkg != "" {
		s = "in " + g.Pkg + " at"
	}
	if g.Par > 0 {
		s += fmt.Sprintf(" par=%d", g.Par)
	}
	return s + " on " + cpus(g.CPU)
}

func cpus(n int) string {
	if n == 1 {
		return "1 CPU"
	}
	return strconv.Itoa(n) + " CPUs"
}
