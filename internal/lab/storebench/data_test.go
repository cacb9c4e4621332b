package storebench

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/locklab/locklab/store"
)

func TestRowOf(t *testing.T) {
	tests := []struct {
		name    string
		bench   string
		want    row
		wantOK  bool
		wantErr string
	}{
		{"full name", "Store/design=sharded-inputQ/op=TransferMoney/par=64/work=10µs-2",
			row{Design: "sharded-inputQ", Op: "TransferMoney", Par: 64, Work: 10 * time.Microsecond, CPU: 2}, true, ""},
		{"storetest's order", "Store/op=TransferMoney/work=10µs/design=sharded-inputQ/par=64-2",
			row{Design: "sharded-inputQ", Op: "TransferMoney", Par: 64, Work: 10 * time.Microsecond, CPU: 2}, true, ""},
		{"no suffix is GOMAXPROCS 1", "Store/design=mutex/op=Increment/par=1/work=0s",
			row{Design: "mutex", Op: "Increment", Par: 1, Work: 0, CPU: 1}, true, ""},
		{"another benchmark", "MeasuredStore/mode=inputQ-2", row{}, false, ""},
		{"missing work", "Store/design=mutex/op=Increment/par=1-2", row{}, false, "no work="},
		{"bad par", "Store/design=mutex/op=Increment/par=many/work=0s", row{}, false, "invalid syntax"},
		{"bad work", "Store/design=mutex/op=Increment/par=1/work=long", row{}, false, "invalid duration"},
		{"unknown key", "Store/design=mutex/op=Increment/par=1/work=0s/skew=1", row{}, false, `unknown key "skew"`},
		{"positional part", "Store/mutex/op=Increment/par=1/work=0s", row{}, false, "not a Store/op=O/work=W/design=D/par=P name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := rowOf(benchfmt.Name(tt.bench))
			if tt.wantErr != "" {
				require.ErrorIs(t, err, errName)
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseOrdersDesignsByRegistry(t *testing.T) {
	names := store.DesignNames()
	require.GreaterOrEqual(t, len(names), 2)
	// The input lists the designs backwards, plus one the registry lacks.
	var ls []benchLine
	ls = append(ls, benchLine{design: "retired", op: opIncrement, par: 1, cpu: 2, ns: []float64{5}})
	for i := len(names) - 1; i >= 0; i-- {
		ls = append(ls, benchLine{design: names[i], op: opIncrement, par: 1, cpu: 2, ns: []float64{5}})
	}
	d, err := parse(strings.NewReader(benchText(true, ls...)), "t")
	require.NoError(t, err)
	assert.Equal(t, append(append([]string(nil), names...), "retired"), d.Designs)
}

func TestParseKeepsSkippedLines(t *testing.T) {
	text := benchText(true, benchLine{design: "mutex", op: opIncrement, par: 1, cpu: 2, ns: []float64{5}}) +
		"BenchmarkStore/design=mutex/op=Increment/par=x/work=0s-2\t10\t5 ns/op\n"
	d, err := parse(strings.NewReader(text), "in.txt")
	require.NoError(t, err)
	require.Len(t, d.Skipped, 1)
	assert.Contains(t, d.Skipped[0], "in.txt:")
	assert.Equal(t, 1, d.Results)
}
