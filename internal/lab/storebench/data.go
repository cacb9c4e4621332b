package storebench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"

	"github.com/locklab/locklab/store"
)

// benchName is the benchmark this command reports on (BenchmarkStore in
// store/bench_test.go); other benchmarks in the input are ignored.
const benchName = "Store"

// The sub-benchmark keys of BenchmarkStore's names,
// Store/op=O/work=W/design=D/par=P; read in any order, so that names
// written before the benchmark went through storetest read too.
const (
	keyDesign = "design"
	keyOp     = "op"
	keyPar    = "par"
	keyWork   = "work"
)

// row is one benchmark configuration: every run with this name.
type row struct {
	Design string
	Op     string
	Par    int           // goroutines per P (b.SetParallelism)
	Work   time.Duration // critical-section length
	CPU    int           // GOMAXPROCS (the -cpu value)
}

// runs holds the measurements of one row, one value per run.
type runs struct {
	NsPerOp     []float64
	AllocsPerOp []float64
}

// Data is a parsed BenchmarkStore output. Every list in it comes from the
// input, except the order of designs, which is the registry's.
type Data struct {
	Header  map[string]string // goos, goarch, cpu, pkg: the first value seen
	Designs []string          // registry order, then designs the registry lacks
	Ops     []string          // in the order the benchmark ran them
	Pars    []int             // ascending
	Works   []time.Duration   // ascending
	CPUs    []int             // ascending
	Results int               // benchmark lines read
	Skipped []string          // lines that could not be read, with their position

	rows   map[row]*runs
	hasOp  map[[2]string]bool // design, op
	header []string           // header keys in the order first seen
}

// parse reads raw `go test -bench` output.
func parse(r io.Reader, fileName string) (*Data, error) {
	d := &Data{Header: map[string]string{}, rows: map[row]*runs{}, hasOp: map[[2]string]bool{}}
	var designs []string
	br := benchfmt.NewReader(r, fileName)
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			d.Skipped = append(d.Skipped, rec.Error())
		case *benchfmt.Result:
			for _, c := range rec.Config {
				if c.File {
					if _, seen := d.Header[c.Key]; !seen {
						d.header = append(d.header, c.Key)
						d.Header[c.Key] = string(c.Value)
					}
				}
			}
			k, ok, err := rowOf(rec.Name)
			if err != nil {
				file, line := rec.Pos()
				d.Skipped = append(d.Skipped, fmt.Sprintf("%s:%d: %v", file, line, err))
				continue
			}
			if !ok {
				continue
			}
			ns, ok := rec.Value("sec/op")
			if !ok {
				file, line := rec.Pos()
				d.Skipped = append(d.Skipped, fmt.Sprintf("%s:%d: %s: no ns/op", file, line, rec.Name))
				continue
			}
			rs := d.rows[k]
			if rs == nil {
				rs = &runs{}
				d.rows[k] = rs
			}
			rs.NsPerOp = append(rs.NsPerOp, ns*1e9)
			// Without -benchmem there is no allocs/op: the check says so.
			if a, ok := rec.Value("allocs/op"); ok {
				rs.AllocsPerOp = append(rs.AllocsPerOp, a)
			}
			d.Results++
			if !slices.Contains(designs, k.Design) {
				designs = append(designs, k.Design)
			}
			if !slices.Contains(d.Ops, k.Op) {
				d.Ops = append(d.Ops, k.Op)
			}
			if !slices.Contains(d.Pars, k.Par) {
				d.Pars = append(d.Pars, k.Par)
			}
			if !slices.Contains(d.Works, k.Work) {
				d.Works = append(d.Works, k.Work)
			}
			if !slices.Contains(d.CPUs, k.CPU) {
				d.CPUs = append(d.CPUs, k.CPU)
			}
			d.hasOp[[2]string{k.Design, k.Op}] = true
		}
	}
	if err := br.Err(); err != nil {
		return nil, err
	}
	if d.Results == 0 {
		return nil, fmt.Errorf("%s: no Benchmark%s results", fileName, benchName)
	}
	slices.Sort(d.Pars)
	slices.Sort(d.Works)
	slices.Sort(d.CPUs)
	// Columns in registry order; a design the registry no longer has (an
	// old file) still gets its column, after the others.
	for _, name := range store.DesignNames() {
		if slices.Contains(designs, name) {
			d.Designs = append(d.Designs, name)
		}
	}
	for _, name := range designs {
		if !slices.Contains(d.Designs, name) {
			d.Designs = append(d.Designs, name)
		}
	}
	return d, nil
}

// errName reports a BenchmarkStore name that lacks a key or has a bad value.
var errName = errors.New("not a Store/op=O/work=W/design=D/par=P name")

// rowOf reads a benchmark name; ok is false for other benchmarks.
func rowOf(name benchfmt.Name) (k row, ok bool, err error) {
	base, parts := name.Parts()
	if string(base) != benchName {
		return row{}, false, nil
	}
	k.CPU = 1 // go test omits the -N suffix when GOMAXPROCS is 1
	seen := map[string]bool{}
	for _, p := range parts {
		switch {
		case bytes.HasPrefix(p, []byte("-")):
			n, err := strconv.Atoi(string(p[1:]))
			if err != nil || n < 1 {
				return row{}, false, fmt.Errorf("%s: %w", name, errName)
			}
			k.CPU = n
		case bytes.HasPrefix(p, []byte("/")):
			key, val, found := strings.Cut(string(p[1:]), "=")
			if !found {
				return row{}, false, fmt.Errorf("%s: %w", name, errName)
			}
			var err error
			switch key {
			case keyDesign:
				k.Design = val
			case keyOp:
				k.Op = val
			case keyPar:
				k.Par, err = strconv.Atoi(val)
			case keyWork:
				k.Work, err = time.ParseDuration(val)
			default:
				err = fmt.Errorf("unknown key %q", key)
			}
			if err != nil {
				return row{}, false, fmt.Errorf("%s: %w (%v)", name, errName, err)
			}
			seen[key] = true
		}
	}
	for _, key := range []string{keyDesign, keyOp, keyPar, keyWork} {
		if !seen[key] {
			return row{}, false, fmt.Errorf("%s: %w (no %s=)", name, errName, key)
		}
	}
	return k, true, nil
}

// Has reports whether design ran op at all (false: an n/a cell).
func (d *Data) Has(design, op string) bool { return d.hasOp[[2]string{design, op}] }

// HeaderKeys returns the header's keys in the order they first appeared.
func (d *Data) HeaderKeys() []string { return d.header }

// MaxCPU is the highest GOMAXPROCS in the data: the targets are judged there.
func (d *Data) MaxCPU() int { return d.CPUs[len(d.CPUs)-1] }

// confidence is the level of every interval in the report, as benchstat's.
const confidence = 0.95

// stat is one row's ns/op: its sample and median with confidence interval.
type stat struct {
	Sample  *benchmath.Sample
	Summary benchmath.Summary
}

// NsPerOp summarises a row's ns/op, making no assumption about its
// distribution (the median and its interval, as benchstat does); ok is false
// if the row did not run.
func (d *Data) NsPerOp(k row) (stat, bool) {
	rs := d.rows[k]
	if rs == nil || len(rs.NsPerOp) == 0 {
		return stat{}, false
	}
	s := benchmath.NewSample(rs.NsPerOp, &benchmath.DefaultThresholds)
	return stat{Sample: s, Summary: benchmath.AssumeNothing.Summary(s, confidence)}, true
}

// Allocs returns a row's allocs/op, one per run (nil without -benchmem).
func (d *Data) Allocs(k row) []float64 {
	if rs := d.rows[k]; rs != nil {
		return rs.AllocsPerOp
	}
	return nil
}

// rowsOf returns, in a stable order, every row that ran for design and op.
func (d *Data) rowsOf(design, op string) []row {
	var out []row
	for _, cpu := range d.CPUs {
		for _, par := range d.Pars {
			for _, w := range d.Works {
				k := row{Design: design, Op: op, Par: par, Work: w, CPU: cpu}
				if _, ok := d.rows[k]; ok {
					out = append(out, k)
				}
			}
		}
	}
	return out
}

// worksOf returns the critical-section lengths op ran with.
func (d *Data) worksOf(op string) []time.Duration {
	var out []time.Duration
	for _, w := range d.Works {
		for k := range d.rows {
			if k.Op == op && k.Work == w {
				out = append(out, w)
				break
			}
		}
	}
	return out
}
