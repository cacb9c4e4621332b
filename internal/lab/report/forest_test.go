package report

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	labchart "github.com/locklab/locklab/internal/lab/chart"
	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/record"
)

// forestReport is a report with one primary of each outcome, and a
// withheld one, on both primary metrics: what the forest plot must draw.
func forestReport() *Report {
	rep := &Report{Meta: record.Meta{Modes: []string{"mutex", "inputQ", "rwmutex"}, Model: "closed"}}
	var primaries []*Metric
	for _, m := range Compared() {
		if m.Primary {
			primaries = append(primaries, m)
		}
	}
	est := func(ratio, lo, hi float64, o paired.Outcome) (paired.Robust, *paired.Primary) {
		r := paired.Robust{N: 10, Ratio: ratio, Lo: lo, Hi: hi, EqLo: lo + 0.005, EqHi: hi - 0.005}
		return r, &paired.Primary{Robust: r, Margin: DefaultMargin, Outcome: o}
	}
	rows := []struct {
		level         int
		design        string
		ratio, lo, hi float64
		outcome       paired.Outcome
		withheld      string
	}{
		{10, "inputQ", 0.80, 0.74, 0.86, paired.OutcomeDetected, ""},
		{10, "rwmutex", 1.005, 0.99, 1.02, paired.OutcomeEquivalent, ""},
		{100, "inputQ", 1.03, 0.97, 1.10, paired.OutcomeNotShown, ""},
		{100, "rwmutex", 1, 1, 1, paired.OutcomeNotShown, "too noisy: 3 of 10 blocks clean (the analysis needs 6)"},
	}
	for _, r := range rows {
		for _, m := range primaries {
			e, p := est(r.ratio, r.lo, r.hi, r.outcome)
			rep.Findings = append(rep.Findings, Finding{Cell: Cell{Section{Workload: "counter", Driver: "go"}, r.level},
				Pair: Pair{r.design, "mutex"}, Metric: m, Est: e, Primary: p, Withheld: r.withheld})
		}
	}
	// An estimate outside the family: the plot leaves it out.
	rep.Findings = append(rep.Findings, Finding{Cell: Cell{Section{Workload: "counter", Driver: "go"}, 10},
		Pair: Pair{"inputQ", "noop"}, Metric: primaries[0], Est: paired.Robust{N: 10, Ratio: 0.5, Lo: 0.4, Hi: 0.6}})
	return rep
}

// svgTexts are the text elements of an SVG document, in order.
func svgTexts(t *testing.T, svg []byte) []string {
	t.Helper()
	var out []string
	d := xml.NewDecoder(strings.NewReader(string(svg)))
	inText := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err, "the plot is well-formed XML")
		switch x := tok.(type) {
		case xml.StartElement:
			inText = x.Name.Local == "text"
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				out = append(out, string(x))
			}
		}
	}
}

// TestForestGolden draws the forest plot of forestReport and compares it
// with testdata/forest.svg.golden, and checks it names every primary and
// the margin, and draws a bar for each one with an interval.
func TestForestGolden(t *testing.T) {
	rep := forestReport()
	svg, err := rep.Forest()
	require.NoError(t, err)
	texts := svgTexts(t, svg)
	assert.Contains(t, texts, rep.forestTitle())
	assert.Contains(t, rep.forestTitle(), "±"+paired.PctAbs(DefaultMargin))
	for _, f := range rep.forestRows() {
		assert.Contains(t, texts, rep.forestLabel(f))
	}
	assert.Len(t, rep.forestRows(), 8, "every primary, and only the primaries")
	for _, o := range []paired.Outcome{paired.OutcomeDetected, paired.OutcomeEquivalent, paired.OutcomeNotShown} {
		r, g, b, _ := labchart.OutcomeColour(o).RGBA()
		assert.Contains(t, string(svg), fmt.Sprintf("stroke:#%02X%02X%02X", r>>8, g>>8, b>>8), "%s rows in their colour", o)
	}
	assert.NotEqual(t, labchart.OutcomeColour(paired.OutcomeDetected), labchart.OutcomeColour(paired.OutcomeEquivalent))
	assert.NotEqual(t, labchart.OutcomeColour(paired.OutcomeDetected), labchart.OutcomeColour(paired.OutcomeNotShown))
	assert.NotContains(t, strings.Join(texts, "\n"), "vs noop", "an estimate is no primary")

	path := filepath.Join("testdata", "forest.svg.golden")
	if *update {
		require.NoError(t, os.WriteFile(path, svg, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -run Golden -update once to create it")
	assert.Equal(t, string(want), string(svg), "forest.svg differs: if the change is meant, go test ./internal/lab/report -run Golden -update")
}

// TestForestGoldenCatchesAChange is the control: one effect moved draws a
// different plot.
func TestForestGoldenCatchesAChange(t *testing.T) {
	rep := forestReport()
	rep.Findings[0].Est.Ratio = 0.9
	svg, err := rep.Forest()
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join("testdata", "forest.svg.golden"))
	require.NoError(t, err)
	assert.NotEqual(t, string(want), string(svg))
}

// TestForestEstimatesWithoutPrimaries: a report without primaries (a
// design against noop alone) plots its estimates on the primary metrics,
// with no margin, and says so; with no finding at all there is no plot.
func TestForestEstimatesWithoutPrimaries(t *testing.T) {
	rep := forestReport()
	var kept []Finding
	for _, f := range rep.Findings {
		if !f.IsPrimary() {
			kept = append(kept, f)
		}
	}
	rep.Findings = kept
	svg, err := rep.Forest()
	require.NoError(t, err)
	texts := svgTexts(t, svg)
	assert.Contains(t, texts, rep.forestTitle())
	assert.Contains(t, rep.forestTitle(), "no primary comparison")
	assert.NotContains(t, rep.forestTitle(), "margin")
	assert.Contains(t, texts, "counter · go · 10 callers: inputQ vs noop, calls/s (estimate)")

	answer := markdown(rep.answer())
	assert.Contains(t, answer, "No primary comparison")
	assert.Contains(t, answer, "the plot shows the estimates")
	assert.Contains(t, answer, "]("+ForestFile+")")

	// Estimates with no interval: nothing to plot, and the answer says
	// where they are instead.
	for i := range rep.Findings {
		rep.Findings[i].Est = paired.Robust{}
	}
	answer = markdown(rep.answer())
	assert.Contains(t, answer, "the headline gives every estimate")
	assert.NotContains(t, answer, ForestFile)

	rep.Findings = nil
	svg, err = rep.Forest()
	require.NoError(t, err)
	assert.Nil(t, svg)
	assert.Empty(t, rep.forestBlock())
}

// TestForestOpensReport: report.md links the plot above its first
// section, and Rerender writes the file it links.
func TestForestOpensReport(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS("testdata/results")))
	require.NoError(t, Rerender(dir, new(strings.Builder)))
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	link := strings.Index(string(md), "]("+ForestFile+")")
	first := strings.Index(string(md), "\n## ")
	require.Positive(t, link, "report.md links %s", ForestFile)
	assert.Less(t, link, first, "the plot comes before the first section")
	svg, err := os.ReadFile(filepath.Join(dir, ForestFile))
	require.NoError(t, err)
	assert.NotEmpty(t, svgTexts(t, svg))
}
