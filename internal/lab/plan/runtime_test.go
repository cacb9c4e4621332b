package plan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRuntime(t *testing.T) {
	tests := []struct{ in, want, wantErr string }{
		{in: "local", want: "local"},
		{in: "go1.27.3", want: "go1.27.3"},
		{in: "go1.27rc1", want: "go1.27rc1"},
		{in: "go1.26.8+nogreenteagc", want: "go1.26.8+nogreenteagc"},
		{in: "local+nosizespecializedmalloc+nogreenteagc", want: "local+nogreenteagc+nosizespecializedmalloc"},
		{in: "1.27.3", wantErr: `"1.27.3" is not a Go toolchain name`},
		{in: "go1.27", wantErr: `"go1.27" is not a Go toolchain name`},
		{in: "go1.27.3+", wantErr: `"" is not a GOEXPERIMENT name`},
		{in: "go1.27.3+NoGreenTea", wantErr: `"NoGreenTea" is not a GOEXPERIMENT name`},
		{in: "go1.27.3+a+a", wantErr: "names an experiment twice"},
	}
	for _, tt := range tests {
		got, err := runtimeFactor.Parse(tt.in)
		if tt.wantErr != "" {
			assert.ErrorContains(t, err, tt.wantErr, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
	_, err := ParseSpace(map[string]string{Runtime: "go1.26.8+b+a,go1.26.8+a+b"})
	assert.ErrorContains(t, err, `"go1.26.8+a+b" is go1.26.8+a+b again`, "two spellings are one value")
	tc, exps := RuntimeBuild("go1.27.3+nogreenteagc+nosizespecializedmalloc")
	assert.Equal(t, "go1.27.3", tc)
	assert.Equal(t, "nogreenteagc,nosizespecializedmalloc", exps, "GOEXPERIMENT's commas")
}

// TestRuntimeOmittedAtItsDefault: a plan that does not sweep the runtime
// names it nowhere — keys, headings, the plan's summary, JSON — so that its
// reports read as they did before the factor; one that does names it
// everywhere. The control: attribution, a factor that does not omit its
// default, is named at it.
func TestRuntimeOmittedAtItsDefault(t *testing.T) {
	def := DefaultPoint()
	b, err := json.Marshal(def)
	require.NoError(t, err)
	for _, s := range []string{def.Key(), def.String(), def.StringWithout("work"), DefaultSpace().String(), string(b)} {
		assert.NotContains(t, s, "runtime")
		assert.Contains(t, s, "attribut", "the control: a factor at its default, named")
	}
	sb, err := json.Marshal(DefaultSpace())
	require.NoError(t, err)
	assert.NotContains(t, string(sb), "runtime")

	p := def.With(Runtime, "go1.27.3")
	assert.Contains(t, p.Key(), "runtime=go1.27.3")
	assert.Contains(t, p.String(), "runtime go1.27.3")
	b, err = json.Marshal(p)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"runtime":"go1.27.3"`)
	var back Point
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, p, back)
	sp, err := ParseSpace(map[string]string{Runtime: "local,go1.27.3"})
	require.NoError(t, err)
	assert.Contains(t, sp.String(), "runtime local, go1.27.3")
	sb, err = json.Marshal(sp)
	require.NoError(t, err)
	assert.Contains(t, string(sb), `"runtime":["local","go1.27.3"]`)
	assert.Equal(t, "-rtgo1.27.3.nogreenteagc", def.With(Runtime, "go1.27.3+nogreenteagc").IDSuffix())
}

// TestRuntimesRunAsArms: with two runtimes every block's cell holds every
// design on every runtime, each once, next to each other, in an order
// drawn for the block — not one runtime's designs and then the other's —
// and the gate's cell is the same for all of them.
func TestRuntimesRunAsArms(t *testing.T) {
	sp, err := ParseSpace(map[string]string{Runtime: "go1.26.8,go1.27.3"})
	require.NoError(t, err)
	wl, _ := LookupWorkload("counter")
	cfg := Config{Workloads: []Workload{wl}, Modes: []string{"mutex", "inputQ"}, Drivers: []string{"go"}, Model: "closed",
		Levels: []int{10, 100}, Reps: 4, Factors: sp, Seed: 3, Twin: "mutex"}
	specs := Layout(cfg, Catalog{}, func(string, Workload, string) bool { return true })
	require.Len(t, specs, 4*2*3*2, "blocks × levels × (modes and the twin) × runtimes")
	var orders []string
	for i := 0; i < len(specs); i += 6 {
		cell := specs[i : i+6]
		var arms []string
		for _, s := range cell {
			assert.Equal(t, cell[0].Cell(), s.Cell(), "one cell of the block: %s", s.ID)
			assert.Equal(t, cell[0].Level, s.Level)
			arms = append(arms, s.Arm()+"@"+s.Factors.Get(Runtime))
		}
		assert.ElementsMatch(t, []string{"mutex@go1.26.8", "mutex@go1.27.3", "inputQ@go1.26.8", "inputQ@go1.27.3",
			"mutex (A/A)@go1.26.8", "mutex (A/A)@go1.27.3"}, arms)
		orders = append(orders, strings.Join(arms, ","))
		if i+6 < len(specs) && specs[i+6].Rep == cell[0].Rep {
			assert.NotEqual(t, cell[0].Cell(), specs[i+6].Cell(), "the next level is a cell of its own")
		}
	}
	assert.Equal(t, orders[0], orders[1], "one order for the block's cells")
	assert.NotEqual(t, orders[0], orders[2], "a new order for the next block")
	// A fixed runtime order — one runtime's designs and then the other's,
	// or each design on one runtime and then on the other — would always
	// run a design on go1.26.8 first.
	drawn := false
	for _, o := range orders {
		arms := strings.Split(o, ",")
		for _, m := range []string{"mutex", "inputQ", "mutex (A/A)"} {
			drawn = drawn || slices.Index(arms, m+"@go1.27.3") < slices.Index(arms, m+"@go1.26.8")
		}
	}
	assert.True(t, drawn, "the runtimes are drawn with the designs: %v", orders)
	s := specs[0]
	assert.Equal(t, fmt.Sprintf("001-counter-go-%s-vus10-rt%s-rep1", s.Mode, s.Factors.Get(Runtime)), strings.TrimSuffix(s.ID, "-aa"))
}

// TestCallWorkRunsAsAnArm: -call-work's values run beside the modes in one
// cell of each block, like the runtimes, and each run's server is given
// its spin; none is given at the default, whose runs keep the names they
// had.
func TestCallWorkRunsAsAnArm(t *testing.T) {
	sp, err := ParseSpace(map[string]string{CallWork: "0,2us"})
	require.NoError(t, err)
	wl, _ := LookupWorkload("counter")
	cfg := Config{Workloads: []Workload{wl}, Modes: []string{"mutex"}, Drivers: []string{"go"}, Model: "closed",
		Levels: []int{10}, Reps: 2, Factors: sp, Seed: 3, Twin: "mutex"}
	specs := Layout(cfg, Catalog{}, func(string, Workload, string) bool { return true })
	require.Len(t, specs, 2*2*2, "blocks × (the mode and its twin) × call work")
	var arms []string
	for _, s := range specs[:4] {
		assert.Equal(t, specs[0].Cell(), s.Cell(), "one cell of the block: %s", s.ID)
		arms = append(arms, s.Arm()+"@"+s.Factors.Get(CallWork))
		args := callWorkFactor.Server(s.Factors.Get(CallWork), RunDirs{})
		assert.Equal(t, []string{"-call-work", s.Factors.Get(CallWork)}, args)
		if s.Factors.Get(CallWork) == "0" {
			assert.NotContains(t, s.ID, "-cw", "the default keeps the run's name")
		} else {
			assert.Contains(t, s.ID, "-cw2us")
		}
	}
	assert.ElementsMatch(t, []string{"mutex@0", "mutex@2µs", "mutex (A/A)@0", "mutex (A/A)@2µs"}, arms)
	for _, bad := range []string{"fast", "-1us", "2ms"} {
		_, err := callWorkFactor.Parse(bad)
		assert.ErrorContains(t, err, "-call-work", bad)
	}
	for in, want := range map[string]string{"0": "0", "0s": "0", "2us": "2µs", "500ns": "500ns"} {
		got, err := callWorkFactor.Parse(in)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
}
