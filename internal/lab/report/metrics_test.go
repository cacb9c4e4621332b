package report

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/record"
)

// addMetric adds a metric to the catalogue for one test.
func addMetric(t *testing.T, m *Metric) {
	t.Helper()
	saved := Catalogue
	Catalogue = append(slices.Clip(saved), m)
	t.Cleanup(func() { Catalogue = saved })
}

// TestAMetricIsOneRow declares a metric shaped like a design's serial
// resource busy time per call and sees it in figures.json, the level table,
// and the charts, with no other edit (package repro's test finds it among
// -diff's columns).
func TestAMetricIsOneRow(t *testing.T) {
	addMetric(t, &Metric{Key: "test_busy_us_per_call", Label: "serial busy per call", Unit: UnitUs, Better: Lower,
		Block: BlockServer, Chart: "serial busy per call (µs)", Diff: "busy",
		Read: stat(func(st *stats) float64 { return st.GetCpuSeconds() / float64(st.GetRequests()) * 1e6 / 2 })})
	rep := mustNew(t, fakeMeta(), fakeRuns(t))
	g := rep.group(counterGo, 10, "mutex")
	require.NotNil(t, g)
	assert.InDelta(t, 470.3, g.Figures["test_busy_us_per_call"].Median, 0.1)
	assert.Contains(t, rep.Markdown(), "| serial busy per call | 470.3µs (")
	page, err := rep.HTML()
	require.NoError(t, err)
	assert.Contains(t, page, "counter · go: serial busy per call (µs)")
}

// TestADeclaredMetricMustBeReadable: a figure the catalogue declares for
// every run is an error when a record cannot give it, never a silent "—";
// the control is a conditional metric, which may be missing.
func TestADeclaredMetricMustBeReadable(t *testing.T) {
	addMetric(t, &Metric{Key: "test_missing", Label: "a figure no record has", Unit: UnitCount, Block: BlockServer,
		Read: func(*record.Run) (float64, error) { return 0, errors.New("not in this record") }})
	_, err := Aggregate(fakeRuns(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a figure no record has: not in this record")

	Catalogue[len(Catalogue)-1] = &Metric{Key: "test_nan", Label: "a figure with no value", Unit: UnitCount, Block: BlockServer,
		Read: func(*record.Run) (float64, error) { return math.NaN(), nil }}
	_, err = Aggregate(fakeRuns(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has a figure with no value")

	Catalogue[len(Catalogue)-1] = &Metric{Key: "test_optional", Label: "a figure some runs have", Unit: UnitCount, Block: BlockServer,
		Applies: func(r *record.Run) bool { return r.Mode == "inputQ" },
		Read:    func(*record.Run) (float64, error) { return 1, nil }}
	groups, err := Aggregate(fakeRuns(t))
	require.NoError(t, err, "declared conditional: a group without it is fine")
	rep := &Report{Meta: fakeMeta(), Groups: groups}
	assert.Contains(t, rep.Markdown(), "| a figure some runs have | — | 1 (1–1) | — |")
}

// TestCatalogueIsWellFormed: every metric has a unique key, a label, a
// unit that prints, and a way to be read.
func TestCatalogueIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range Catalogue {
		assert.False(t, seen[m.Key], "key %s twice", m.Key)
		seen[m.Key] = true
		assert.NotEmpty(t, m.Label, m.Key)
		assert.NotEmpty(t, m.Unit.Format(1), m.Key)
		assert.True(t, (m.Read != nil) != (m.PerOp != nil), "%s: a figure is read one way", m.Key)
		if m.PerOp != nil {
			assert.Contains(t, m.Key, "%s", "a family's key takes the op")
		}
	}
}
