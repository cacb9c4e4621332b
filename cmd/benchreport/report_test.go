package main

import (
	"bufio"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// samplePath is a short real run with one line edited so that a target
// fails (testdata/README.md).
var samplePath = filepath.Join("testdata", "store-bench.txt")

// rawRow is one sample row read without benchfmt or benchmath, so the
// report's figures are checked against an independent reading.
type rawRow struct {
	ns, allocs []float64
}

var rawLine = regexp.MustCompile(`^BenchmarkStore/design=(\S+)/op=(\S+)/par=(\d+)/work=(\S+)-(\d+)\s+\d+\s+([\d.]+) ns/op\s+\d+ B/op\s+(\d+) allocs/op`)

// readRaw maps "design op par work cpu" to the row's runs.
func readRaw(t *testing.T, path string) map[string]*rawRow {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows := map[string]*rawRow{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := rawLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		key := strings.Join(m[1:6], " ")
		if rows[key] == nil {
			rows[key] = &rawRow{}
		}
		ns, err := strconv.ParseFloat(m[6], 64)
		require.NoError(t, err)
		allocs, err := strconv.ParseFloat(m[7], 64)
		require.NoError(t, err)
		rows[key].ns = append(rows[key].ns, ns)
		rows[key].allocs = append(rows[key].allocs, allocs)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, rows)
	return rows
}

// median of an odd number of runs (the sample has 3 per row).
func median(t *testing.T, xs []float64) float64 {
	t.Helper()
	require.Equal(t, 1, len(xs)%2, "odd count")
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// sampleReport is the report of the sample, rendered once (the chart takes
// seconds under -race) and removed by TestMain.
var sampleReport struct {
	once    sync.Once
	dir, md string
	err     error
}

// readSample returns the sample's report; tests must not change its folder.
func readSample(t *testing.T) (dir, md string) {
	t.Helper()
	r := &sampleReport
	r.once.Do(func() {
		if r.dir, r.err = os.MkdirTemp("", "benchreport-sample-"); r.err != nil {
			return
		}
		if r.err = run(config{Out: r.dir, Command: "make bench-store", Input: samplePath}, nil); r.err != nil {
			return
		}
		var b []byte
		b, r.err = os.ReadFile(filepath.Join(r.dir, reportFile))
		r.md = string(b)
	})
	require.NoError(t, r.err)
	return r.dir, r.md
}

// writeSampleWithRaw runs the command on the sample into a fresh folder
// that holds the raw output too, as make bench-store leaves it.
func writeSampleWithRaw(t *testing.T) (dir, md string) {
	t.Helper()
	dir = t.TempDir()
	raw, err := os.ReadFile(samplePath)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, rawFile), raw, 0o644))
	require.NoError(t, run(config{Out: dir, Command: "make bench-store", Input: samplePath}, nil))
	b, err := os.ReadFile(filepath.Join(dir, reportFile))
	require.NoError(t, err)
	return dir, string(b)
}

// table returns the Markdown table under heading: its header cells and rows.
func table(t *testing.T, md, heading string) (header []string, rows [][]string) {
	t.Helper()
	_, after, found := strings.Cut(md, "\n"+heading+"\n")
	require.True(t, found, "no %q in the report", heading)
	cells := func(line string) []string {
		parts := strings.Split(strings.Trim(line, "|"), "|")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return parts
	}
	for _, line := range strings.Split(after, "\n") {
		switch {
		case strings.HasPrefix(line, "|--"), strings.HasPrefix(line, "|---"):
		case strings.HasPrefix(line, "|"):
			if header == nil {
				header = cells(line)
			} else {
				rows = append(rows, cells(line))
			}
		case header != nil:
			return header, rows // the table has ended
		}
	}
	return header, rows
}

func TestReportTables(t *testing.T) {
	_, md := readSample(t)
	raw := readRaw(t, samplePath)
	tests := []struct {
		op     string
		wantNA []string // designs whose column is n/a throughout
	}{
		{"Increment", nil},
		{"TransferMoney", []string{"atomic"}}, // bank: atomic serves only the counter
		{"Get", []string{"atomic"}},           // kv, likewise
	}
	for _, tt := range tests {
		t.Run(tt.op, func(t *testing.T) {
			header, rows := table(t, md, "### "+tt.op+" (-cpu 2)")
			require.Equal(t, []string{"par", "work", "mutex", "sharded", "atomic", "inputQ", "combining"}, header,
				"designs in registry order")
			require.NotEmpty(t, rows)
			for _, r := range rows {
				require.Len(t, r, len(header))
				for i, design := range header[2:] {
					cell := r[i+2]
					if slices.Contains(tt.wantNA, design) {
						assert.Equal(t, "n/a", cell, "%s par=%s work=%s", design, r[0], r[1])
						continue
					}
					// Every other cell is the median of the raw runs.
					rr := raw[strings.Join([]string{design, tt.op, r[0], r[1], "2"}, " ")]
					require.NotNil(t, rr, "%s %s par=%s work=%s", design, tt.op, r[0], r[1])
					assert.Equal(t, fmtNs(median(t, rr.ns))+" ± ∞", cell, "3 runs: too few for an interval")
				}
			}
		})
	}
	assert.Contains(t, md, "- Command: `make bench-store`")
	assert.Contains(t, md, "goos `linux`, goarch `amd64`, cpu `AMD EPYC`")
}

func TestReportTargetsFromData(t *testing.T) {
	_, md := readSample(t)
	raw := readRaw(t, samplePath)
	med := func(design, op string) float64 {
		rr := raw[design+" "+op+" 64 0s 2"]
		require.NotNil(t, rr, design+" "+op)
		return median(t, rr.ns)
	}
	verdictOf := func(ok bool) string {
		if ok {
			return "**met**"
		}
		return "**not met**"
	}
	fastestOwner := func(op string) float64 {
		best := -1.0
		for _, d := range ownerOrCombining() {
			if rr := raw[d+" "+op+" 64 0s 2"]; rr != nil {
				if m := median(t, rr.ns); best < 0 || m < best {
					best = m
				}
			}
		}
		require.Positive(t, best)
		return best
	}
	combining, mutex := med(designCombining, opIncrement), med(designMutex, opIncrement)
	require.Greater(t, combining/mutex, combiningMaxRatio, "the hand-edited line makes this target fail")
	allocs := map[string]bool{} // design × op with a run above 0
	for key, rr := range raw {
		if slices.Max(rr.allocs) > 0 {
			f := strings.Fields(key)
			allocs[f[0]+" "+f[1]] = true
		}
	}
	require.NotEmpty(t, allocs, "the sample's kv Get allocates")

	want := map[string]string{
		"design ≤ 150 ns/op on Increment":     verdictOf(fastestOwner(opIncrement) <= ownerIncrementMaxNs),
		"design ≤ 250 ns/op on TransferMoney": verdictOf(fastestOwner(opTransfer) <= ownerTransferMaxNs),
		"combining ≤ 2× mutex on Increment":   verdictOf(combining/mutex <= combiningMaxRatio),
		"sharded ≤ mutex on TransferMoney":    verdictOf(med(designSharded, opTransfer) <= med(designMutex, opTransfer)),
		"0 allocs/op for every design and op": verdictOf(len(allocs) == 0),
	}
	header, rows := table(t, md, "## Targets (issue 10, item 6)")
	require.Equal(t, []string{"target", "verdict", "measured"}, header)
	require.Len(t, rows, len(want))
	for _, r := range rows {
		matched := 0
		for k, v := range want {
			if strings.HasSuffix(r[0], k) {
				matched++
				assert.Equal(t, v, r[1], r)
			}
		}
		assert.Equal(t, 1, matched, r)
	}
	assert.Contains(t, md, "combining "+fmtNs(combining)+" ± ∞ ns/op, mutex "+fmtNs(mutex)+" ± ∞ ns/op")

	_, offenders := table(t, md, "## Allocations")
	var got []string
	for _, r := range offenders {
		got = append(got, r[0]+" "+r[1])
	}
	assert.ElementsMatch(t, slices.Collect(mapsKeys(allocs)), got)
	assert.NotContains(t, md, "0 allocs/op for every design and op.\n")
}

func mapsKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestReportChart(t *testing.T) {
	dir, md := readSample(t)
	f, err := os.Open(filepath.Join(dir, chartFile))
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	b := img.Bounds()
	assert.Greater(t, b.Dx(), b.Dy(), "two panels side by side")
	assert.Greater(t, b.Dy(), 300)
	assert.Greater(t, colours(img), 4, "lines in several colours, not a blank canvas")
	assert.Contains(t, md, "]("+chartFile+")")
}

// colours counts the distinct colours of an image, up to 100.
func colours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y && len(seen) < 100; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return len(seen)
}

func TestReportWithoutChartData(t *testing.T) {
	dir := t.TempDir()
	// A stale chart from an earlier run must not survive a report without one.
	require.NoError(t, os.WriteFile(filepath.Join(dir, chartFile), []byte("old"), 0o644))
	in := filepath.Join(t.TempDir(), "in.txt")
	require.NoError(t, os.WriteFile(in, []byte(benchText(true, benchLine{design: designMutex, op: "Put", par: 1, cpu: 2, ns: six(10)})), 0o644))
	require.NoError(t, run(config{Out: dir, Input: in}, nil))
	_, err := os.Stat(filepath.Join(dir, chartFile))
	assert.ErrorIs(t, err, os.ErrNotExist)
	md, err := os.ReadFile(filepath.Join(dir, reportFile))
	require.NoError(t, err)
	assert.Contains(t, string(md), "No chart")
	assert.Contains(t, string(md), "(not given: pass -command)")
}

func TestReportLinksRawOutput(t *testing.T) {
	tests := []struct {
		name    string
		withRaw bool
	}{
		{"raw output beside the report", true},
		{"control: none", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var md string
			if tt.withRaw {
				_, md = writeSampleWithRaw(t)
			} else {
				_, md = readSample(t)
			}
			assert.Equal(t, tt.withRaw, strings.Contains(md, "]("+rawFile+")"))
		})
	}
}

func TestReportReadsStdin(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Open(samplePath)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, run(config{Out: dir, Input: "-"}, f))
	_, err = os.Stat(filepath.Join(dir, reportFile))
	assert.NoError(t, err)
}

func TestWhichDesignWhen(t *testing.T) {
	lines := []benchLine{
		{design: designMutex, op: opIncrement, par: 1, cpu: 2, ns: six(10)},
		{design: designCombining, op: opIncrement, par: 1, cpu: 2, ns: six(50)},
		{design: designMutex, op: opIncrement, par: 64, cpu: 2, ns: six(60)},
		{design: designCombining, op: opIncrement, par: 64, cpu: 2, ns: six(100)},
		{design: designMutex, op: opIncrement, par: 64, work: 1000, cpu: 2, ns: six(2000)},
		{design: designCombining, op: opIncrement, par: 64, work: 1000, cpu: 2, ns: six(1000)},
		{design: designMutex, op: "Get", par: 1, cpu: 2, ns: six(10)},
		{design: designCombining, op: "Get", par: 1, cpu: 2, ns: six(10.1)},
		{design: designMutex, op: "Get", par: 64, cpu: 2, ns: six(10)},
		{design: designCombining, op: "Get", par: 64, cpu: 2, ns: six(40)},
	}
	d, err := parse(strings.NewReader(benchText(true, lines...)), "t")
	require.NoError(t, err)
	got := whichDesignWhen(d)
	require.Len(t, got, 2, "one summary per op")
	inc, get := got[0], got[1]
	assert.Equal(t, opIncrement, inc.Op)
	assert.Contains(t, inc.ByPar, "work=0s, by callers per CPU: mutex is fastest at every parallelism")
	assert.Contains(t, inc.ByPar, "par=1: mutex (10.0 ns/op; combining next, 5.00× slower, p=0.002)")
	assert.Contains(t, inc.ByPar, "par=64: mutex (60.0 ns/op")
	assert.Contains(t, inc.ByWork, "work=1µs: combining (1000 ns/op; mutex next, 2.00× slower")
	assert.Contains(t, inc.ByWork, "The fastest median changes with the critical section: mutex → combining.")
	assert.Equal(t, "Get", get.Op)
	assert.Contains(t, get.ByPar, "mutex is fastest at every parallelism")
	assert.Contains(t, get.ByPar, "not distinguishable from combining", "10 vs 10.1 is within the noise")
	assert.Empty(t, get.ByWork, "Get has one critical-section length")
}

func TestCell(t *testing.T) {
	d, err := parse(strings.NewReader(benchText(true,
		benchLine{design: designMutex, op: "Put", par: 1, cpu: 2, ns: six(10)},
		benchLine{design: designMutex, op: "Put", par: 64, cpu: 2, ns: six(20)},
		benchLine{design: designSharded, op: "Put", par: 1, cpu: 2, ns: six(10)},
		benchLine{design: designCombining, op: opIncrement, par: 1, cpu: 2, ns: []float64{7, 8, 9}},
	)), "t")
	require.NoError(t, err)
	tests := []struct {
		name string
		k    row
		want string
	}{
		{"median ± 95% interval", row{Design: designMutex, Op: "Put", Par: 1, CPU: 2}, "10.0 ± 20%"},
		{"too few runs for an interval", row{Design: designCombining, Op: opIncrement, Par: 1, CPU: 2}, "8.00 ± ∞"},
		{"row missing", row{Design: designSharded, Op: "Put", Par: 64, CPU: 2}, "–"},
		{"design never ran the op", row{Design: designCombining, Op: "Put", Par: 1, CPU: 2}, "n/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, d.cell(tt.k))
		})
	}
}
