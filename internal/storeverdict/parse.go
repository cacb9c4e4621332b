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
// and GOMAXPROCS (go test's -N suffix, 1 when absent).
type group struct {
	Prefix string // BenchmarkX plus any sub-benchmark parts other than design= and par=
	Par    int    // 0 when the name has no par=
	CPU    int
}

// data is the input: each group's values per design, in the order read,
// so that values[g][d][k] is round k.
type data struct {
	groups  []group // in the order first seen
	values  map[group]map[string][]float64
	designs []string // in the order first seen
	results int      // storetest.Benchmark lines read
	other   int      // benchmark lines without design=
	noUnit  int      // storetest lines without the unit
	skipped []string
}

func newData() *data { return &data{values: map[group]map[string][]float64{}} }

// read adds one go test -bench output. Lines of other benchmarks (no
// design= part) are counted and left out; syntax errors are kept for a
// warning.
func (d *data) read(r io.Reader, fileName, unit string) error {
	br := benchfmt.NewReader(r, fileName)
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			d.skipped = append(d.skipped, rec.Error())
		case *benchfmt.Result:
			g, design, ok, err := nameOf(rec.Name)
			if err != nil {
				file, line := rec.Pos()
				d.skipped = append(d.skipped, fmt.Sprintf("%s:%d: %v", file, line, err))
				continue
			}
			if !ok {
				d.other++
				continue
			}
			v, ok := rec.Value(unit)
			if !ok {
				d.noUnit++
				continue
			}
			byDesign := d.values[g]
			if byDesign == nil {
				byDesign = map[string][]float64{}
				d.values[g] = byDesign
				d.groups = append(d.groups, g)
			}
			byDesign[design] = append(byDesign[design], v)
			if !slices.Contains(d.designs, design) {
				d.designs = append(d.designs, design)
			}
			d.results++
		}
	}
	return br.Err()
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

// String names a group for a heading: "Tally par=8 on 2 CPUs".
func (g group) String() string {
	s := strings.TrimPrefix(g.Prefix, "Benchmark")
	if g.Par > 0 {
		s += fmt.Sprintf(" par=%d", g.Par)
	}
	return s + " on " + cpus(g.CPU)
}

// where names a group inside a sentence: "at par=8 on 2 CPUs".
func (g group) where() string {
	s := "at"
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
