package storebench

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"flag"
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

	"github.com/locklab/locklab/internal/lab/paired"
)

// samplePath is a short real run of 7 rounds at -cpu 1,2, with one row
// edited into two clusters (testdata/README.md).
var samplePath = filepath.Join("testdata", "store-bench.txt")

// rawRow is one sample row read without benchfmt or benchmath, so the
// report's figures are checked against an independent reading.
type rawRow struct {
	ns, allocs []float64
}

var rawLine = regexp.MustCompile(`^BenchmarkStore/op=(\S+)/work=(\S+)/design=(\S+)/par=(\d+?)(?:-(\d+))?\s+\d+\s+([\d.]+) ns/op\s+\d+ B/op\s+(\d+) allocs/op`)

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
		cpu := m[5]
		if cpu == "" {
			cpu = "1" // go test omits -1
		}
		key := strings.Join([]string{m[3], m[1], m[4], m[2], cpu}, " ")
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

// median of an odd number of runs (the sample has 7 per row).
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
		if r.err = Write(Config{Out: r.dir, Command: "make bench-store", Input: samplePath}, nil); r.err != nil {
			return
		}
		var b []byte
		b, r.err = os.ReadFile(filepath.Join(r.dir, ReportFile))
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
	require.NoError(t, Write(Config{Out: dir, Command: "make bench-store", Input: samplePath}, nil))
	b, err := os.ReadFile(filepath.Join(dir, ReportFile))
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
	clustered := 0
	for _, cpu := range []string{"1", "2"} {
		for _, tt := range tests {
			t.Run(tt.op+"/cpu="+cpu, func(t *testing.T) {
				header, rows := table(t, md, "### "+tt.op+" (-cpu "+cpu+")")
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
						rr := raw[strings.Join([]string{design, tt.op, r[0], r[1], cpu}, " ")]
						require.NotNil(t, rr, "%s %s par=%s work=%s", design, tt.op, r[0], r[1])
						// Every other cell is the median of the raw runs, or
						// their two clusters.
						if c := paired.Clusters(rr.ns); c != nil {
							clustered++
							assert.Equal(t, fmtClusters(c), cell)
							continue
						}
						// benchmath's median may differ from the middle run in
						// the last bit, which can round the printed figure.
						num, _, found := strings.Cut(cell, " ± ")
						require.True(t, found, "%s: %q", design, cell)
						got, err := strconv.ParseFloat(num, 64)
						require.NoError(t, err)
						assert.InDelta(t, median(t, rr.ns), got, 0.51*max(1, median(t, rr.ns)/100), "%s: %q", design, cell)
					}
				}
			})
		}
	}
	assert.Positive(t, clustered, "the sample has a clustered row")
	_, rows := table(t, md, "### Increment (-cpu 2)")
	assert.Equal(t, "203 (5) / 826 (2)", rows[slices.IndexFunc(rows, func(r []string) bool { return r[0] == "64" && r[1] == "0s" })][5],
		"the edited inputQ row: 201, 202, 203, 205, 208 and 817, 836")
	assert.Contains(t, md, "- Command: `make bench-store`")
	assert.Contains(t, md, "goos `linux`, goarch `amd64`")
	assert.Contains(t, md, "GOMAXPROCS (-cpu): 1, 2; 616 benchmark lines; runs per row: 7")
}

// update rewrites the golden report from the sample.
var update = flag.Bool("update", false, "rewrite testdata/store.md.golden")

const goldenPath = "testdata/store.md.golden"

// TestReportGolden pins the whole report of the sample: any change to what
// benchreport writes shows here, and is accepted with -update.
func TestReportGolden(t *testing.T) {
	_, md := readSample(t)
	if *update {
		require.NoError(t, os.WriteFile(goldenPath, []byte(md), 0o644))
	}
	want, err := os.ReadFile(goldenPath)
	require.NoError(t, err)
	assert.Equal(t, string(want), md, "run go test ./internal/lab/storebench -update after a deliberate change")
}

func TestReportTargets(t *testing.T) {
	_, md := readSample(t)
	header, rows := table(t, md, "## Targets")
	require.Equal(t, []string{"target", "-cpu", "verdict", "measured"}, header)
	require.Len(t, rows, 2*len(speedTargets)+1, "every speed target at -cpu 1 and 2, and the allocation check")
	verdicts := []string{}
	for _, v := range []verdict{met, notMet, undecided, noData} {
		verdicts = append(verdicts, "**"+v.String()+"**")
	}
	for _, r := range rows {
		assert.Contains(t, verdicts, r[2], r)
	}
	last := rows[len(rows)-1]
	assert.Equal(t, []string{"0 allocs/op for every design and op", "all", "**not met**"}, last[:3], "the sample's kv Get allocates")
	assert.NotContains(t, md, "issue")
}

func TestReportChart(t *testing.T) {
	dir, md := readSample(t)
	tests := []struct {
		file     string
		minWider float64 // width over height at least
	}{
		{ChartFile, 1.5},    // two panels side by side
		{CPUChartFile, 1.1}, // three ops in one row
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			svg, err := os.ReadFile(filepath.Join(dir, tt.file))
			require.NoError(t, err)
			require.NoError(t, xml.Unmarshal(svg, new(struct{})), "one well-formed XML document")
			m := svgSize.FindSubmatch(svg)
			require.NotNil(t, m, "an SVG with its size")
			w, err := strconv.ParseFloat(string(m[1]), 64)
			require.NoError(t, err)
			h, err := strconv.ParseFloat(string(m[2]), 64)
			require.NoError(t, err)
			assert.Greater(t, w/h, tt.minWider)
			assert.Greater(t, h, 300.0, "points")
			assert.Greater(t, colours(svg), 4, "lines in several colours, not a blank canvas")
			assert.Contains(t, md, "]("+tt.file+")")
		})
	}
}

// svgSize is the size the SVG canvas declares, in points.
var svgSize = regexp.MustCompile(`<svg width="([\d.]+)pt" height="([\d.]+)pt"`)

// colours counts the distinct colours an SVG strokes or fills with, greys
// (the axes, the grid, the background) left out.
func colours(svg []byte) int {
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?:stroke|fill):#([0-9A-F]{2})([0-9A-F]{2})([0-9A-F]{2})`).FindAllSubmatch(svg, -1) {
		if string(m[1]) != string(m[2]) || string(m[2]) != string(m[3]) {
			seen[string(m[0][len(m[0])-6:])] = true
		}
	}
	return len(seen)
}

func TestReportWithoutChartData(t *testing.T) {
	dir := t.TempDir()
	// Stale charts from an earlier run must not survive a report without them.
	for _, f := range []string{ChartFile, CPUChartFile} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("old"), 0o644))
	}
	in := filepath.Join(t.TempDir(), "in.txt")
	require.NoError(t, os.WriteFile(in, []byte(benchText(true, benchLine{design: designMutex, op: "Put", par: 1, cpu: 2, ns: six(10)})), 0o644))
	require.NoError(t, Write(Config{Out: dir, Input: in}, nil))
	for _, f := range []string{ChartFile, CPUChartFile} {
		_, err := os.Stat(filepath.Join(dir, f))
		assert.ErrorIs(t, err, os.ErrNotExist, f)
	}
	md, err := os.ReadFile(filepath.Join(dir, ReportFile))
	require.NoError(t, err)
	assert.Contains(t, string(md), "No chart: the input has none of")
	assert.Contains(t, string(md), "No chart: the input has one -cpu only (2)")
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

// TestReportReadsGzip: the raw output as make bench-store commits it,
// gzipped, gives the same report as the plain text.
func TestReportReadsGzip(t *testing.T) {
	_, want := readSample(t)
	raw, err := os.ReadFile(samplePath)
	require.NoError(t, err)
	in := filepath.Join(t.TempDir(), rawFile)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err = zw.Write(raw)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(in, buf.Bytes(), 0o644))
	dir := t.TempDir()
	require.NoError(t, Write(Config{Out: dir, Command: "make bench-store", Input: in}, nil))
	got, err := os.ReadFile(filepath.Join(dir, ReportFile))
	require.NoError(t, err)
	assert.Equal(t, want, string(got))
}

func TestReportReadsStdin(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Open(samplePath)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, Write(Config{Out: dir, Input: "-"}, f))
	_, err = os.Stat(filepath.Join(dir, ReportFile))
	assert.NoError(t, err)
}

func TestStanding(t *testing.T) {
	base := drift(100)
	lines := []benchLine{
		// par=1: mutex fastest in every round; combining 5× behind.
		{design: designMutex, op: opIncrement, par: 1, cpu: 2, ns: base},
		{design: designCombining, op: opIncrement, par: 1, cpu: 2, ns: times(base, 5)},
		// par=64: sharded's median is lower, but its per-round ratio to
		// mutex straddles 1: the two lead together; combining behind.
		{design: designMutex, op: opIncrement, par: 64, cpu: 2, ns: base},
		{design: designSharded, op: opIncrement, par: 64, cpu: 2, ns: times(base, 0.9, 1.05, 0.95, 1.02)},
		{design: designCombining, op: opIncrement, par: 64, cpu: 2, ns: times(base, 1.3)},
	}
	d, err := parse(strings.NewReader(benchText(true, lines...)), "t")
	require.NoError(t, err)

	st := d.standing(opIncrement, 1, 0, 2)
	assert.Equal(t, 1, st.lead)
	assert.Equal(t, "mutex 100 [80.0, 115]", d.leading(st))
	assert.Equal(t, "combining 5.00× [5.00, 5.00]", d.next(st))

	st = d.standing(opIncrement, 64, 0, 2)
	assert.Equal(t, 2, st.lead, "sharded and mutex not separated")
	assert.Equal(t, "sharded 98.7 [72.0, 121]; mutex 1.02× [0.95, 1.11]", d.leading(st))
	assert.Equal(t, "combining 1.32× [1.24, 1.44]", d.next(st))

	st = d.standing(opIncrement, 8, 0, 2)
	assert.Empty(t, st.keys, "nothing ran at par=8")
}

func TestReversals(t *testing.T) {
	base := drift(100)
	lines := []benchLine{
		// mutex ahead of combining at par=1, behind at par=64, tied at 8.
		{design: designMutex, op: opIncrement, par: 1, cpu: 2, ns: base},
		{design: designCombining, op: opIncrement, par: 1, cpu: 2, ns: times(base, 3)},
		{design: designMutex, op: opIncrement, par: 8, cpu: 2, ns: base},
		{design: designCombining, op: opIncrement, par: 8, cpu: 2, ns: times(base, 0.9, 1.1)},
		{design: designMutex, op: opIncrement, par: 64, cpu: 2, ns: base},
		{design: designCombining, op: opIncrement, par: 64, cpu: 2, ns: times(base, 0.5)},
		// Control: on Get combining is behind everywhere; its lead
		// shrinks, but the order never flips.
		{design: designMutex, op: "Get", par: 1, cpu: 2, ns: base},
		{design: designCombining, op: "Get", par: 1, cpu: 2, ns: times(base, 3)},
		{design: designMutex, op: "Get", par: 64, cpu: 2, ns: base},
		{design: designCombining, op: "Get", par: 64, cpu: 2, ns: times(base, 1.2)},
	}
	d, err := parse(strings.NewReader(benchText(true, lines...)), "t")
	require.NoError(t, err)
	rs := d.reversals(opIncrement)
	require.Len(t, rs, 1)
	assert.Equal(t, "mutex vs combining, with parallelism (-cpu 2, work=0s): mutex/combining per round "+
		"par=1 0.33× [0.33, 0.33], par=8 1.01× [0.91, 1.11], par=64 2.00× [2.00, 2.00]", rs[0].String())
	assert.Empty(t, d.reversals("Get"))
}

func TestCell(t *testing.T) {
	d, err := parse(strings.NewReader(benchText(true,
		benchLine{design: designMutex, op: "Put", par: 1, cpu: 2, ns: six(10)},
		benchLine{design: designMutex, op: "Put", par: 64, cpu: 2, ns: six(20)},
		benchLine{design: designSharded, op: "Put", par: 1, cpu: 2, ns: six(10)},
		benchLine{design: designCombining, op: opIncrement, par: 1, cpu: 2, ns: []float64{7, 8, 9}},
		benchLine{design: designSharded, op: opIncrement, par: 64, cpu: 2, ns: []float64{836, 817, 201, 202, 203, 208}},
	)), "t")
	require.NoError(t, err)
	tests := []struct {
		name string
		k    row
		want string
	}{
		{"median ± 95% interval", row{Design: designMutex, Op: "Put", Par: 1, CPU: 2}, "10.0 ± 20%"},
		{"too few runs for an interval", row{Design: designCombining, Op: opIncrement, Par: 1, CPU: 2}, "8.00 ± ∞"},
		{"two clusters", row{Design: designSharded, Op: opIncrement, Par: 64, CPU: 2}, "202 (4) / 826 (2)"},
		{"row missing", row{Design: designSharded, Op: "Put", Par: 64, CPU: 2}, "–"},
		{"design never ran the op", row{Design: designCombining, Op: "Put", Par: 1, CPU: 2}, "n/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, d.cell(tt.k))
		})
	}
}
