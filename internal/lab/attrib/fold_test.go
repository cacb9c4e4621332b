package attrib

import (
	"bytes"
	"io/fs"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const period = 10 * time.Millisecond

// sampleOf is a hand-built sample: its locations from the leaf, each
// location's lines leaf first (more than one line: inlined calls), and
// how many times the profiler took it.
type sampleOf struct {
	locs  [][]string
	count int64
}

// cpuProfile builds a profile as runtime/pprof writes a CPU profile:
// samples/count and cpu/nanoseconds, the period in nanoseconds of CPU.
func cpuProfile(samples ...sampleOf) *profile.Profile {
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        int64(period),
		DurationNanos: int64(2 * time.Second),
	}
	funcs := map[string]*profile.Function{}
	fn := func(name string) *profile.Function {
		if f, ok := funcs[name]; ok {
			return f
		}
		f := &profile.Function{ID: uint64(len(funcs) + 1), Name: name, SystemName: name}
		funcs[name] = f
		p.Function = append(p.Function, f)
		return f
	}
	for _, s := range samples {
		var locs []*profile.Location
		for _, lines := range s.locs {
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Address: uint64(0x1000 + len(p.Location))}
			for _, name := range lines {
				loc.Line = append(loc.Line, profile.Line{Function: fn(name), Line: 1})
			}
			p.Location = append(p.Location, loc)
			locs = append(locs, loc)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{s.count, s.count * int64(period)}})
	}
	return p
}

// frames is a stack of one-line locations.
func frames(names ...string) [][]string {
	out := make([][]string, len(names))
	for i, n := range names {
		out[i] = []string{n}
	}
	return out
}

func TestFold(t *testing.T) {
	p := cpuProfile(
		sampleOf{frames(workSpin, workApply, storeDo, handler, processRPC), 30},
		sampleOf{frames("runtime.chansend", storeDo, handler), 5},
		sampleOf{frames("runtime.selectgo", ownerRun), 2},
		sampleOf{frames("syscall.Syscall", "internal/poll.(*FD).Write", loopyRun), 7},
		sampleOf{frames(processRPC, handleStrm), 4},
		sampleOf{frames("runtime.nanotime1"), 1},
	)
	before := p.String()
	b, err := Fold(p)
	require.NoError(t, err)
	assert.Equal(t, before, p.String(), "Fold changes nothing")

	want := map[string]time.Duration{
		"store": 30 * period, "channels": 7 * period, "syscalls": 7 * period,
		"grpc": 4 * period, Other: period,
	}
	for _, name := range CategoryNames() {
		assert.Equal(t, want[name], b.CPU[name], name)
	}
	assert.Len(t, b.CPU, len(CategoryNames()), "every category is a key, and nothing else")
	assert.Equal(t, 49*period, b.Total)
	assert.Equal(t, int64(49), b.Samples)
	assert.Equal(t, period, b.Period)
	assert.Equal(t, 2*time.Second, b.Wall)
	assert.InDelta(t, 30.0/49, b.Share("store"), 1e-12)
	assert.Zero(t, b.Share("no such category"))
	assert.Zero(t, Breakdown{}.Share("store"), "an empty breakdown has no shares")
}

// A location's inlined lines are frames too, leaf first: the spin inlined
// into the server's handler is still the store's.
func TestFoldReadsInlinedFrames(t *testing.T) {
	p := cpuProfile(sampleOf{[][]string{{workSpin, "github.com/locklab/locklab/internal/work.Spinner.Spin", handler}, {processRPC}}, 3})
	b, err := Fold(p)
	require.NoError(t, err)
	assert.Equal(t, 3*period, b.CPU["store"], "%v", b.CPU)
	assert.Zero(t, b.CPU["server"])
}

// Without a samples/count value (a profile merged or filtered by a tool
// that dropped it), the count comes from the CPU and the period.
func TestFoldCountsSamplesFromPeriod(t *testing.T) {
	p := cpuProfile(sampleOf{frames(workSpin), 4})
	p.SampleType = p.SampleType[1:]
	p.Sample[0].Value = p.Sample[0].Value[1:]
	b, err := Fold(p)
	require.NoError(t, err)
	assert.Equal(t, int64(4), b.Samples)
	assert.Equal(t, 4*period, b.CPU["store"])
}

func TestFoldRefuses(t *testing.T) {
	heap := cpuProfile(sampleOf{frames(workSpin), 1})
	heap.SampleType = []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}}
	short := cpuProfile(sampleOf{frames(workSpin), 1})
	short.Sample[0].Value = short.Sample[0].Value[:1]
	negative := cpuProfile(sampleOf{frames(workSpin), 1})
	negative.Sample[0].Value[1] = -1

	tests := []struct {
		name    string
		p       *profile.Profile
		is      error
		message string
	}{
		{"nil", nil, nil, "nil profile"},
		{"a heap profile", heap, ErrNotCPU, "alloc_space/bytes"},
		{"an invalid profile", short, nil, "sample"},
		{"a negative CPU time", negative, nil, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Fold(tt.p)
			require.Error(t, err)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			assert.Contains(t, err.Error(), tt.message)
			assert.Zero(t, b.Total)
		})
	}
}

func TestFoldFile(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, cpuProfile(sampleOf{frames("runtime.chansend", storeDo), 6}).Write(&buf))
	dir := fstest.MapFS{
		"runs/run.cpu.pprof":     {Data: buf.Bytes()},
		"runs/garbage.cpu.pprof": {Data: []byte("not a profile")},
	}
	b, err := FoldFile(dir, "runs/run.cpu.pprof")
	require.NoError(t, err)
	assert.Equal(t, 6*period, b.CPU["channels"])

	_, err = FoldFile(dir, "runs/missing.pprof")
	assert.ErrorIs(t, err, fs.ErrNotExist)

	_, err = FoldFile(dir, "runs/garbage.cpu.pprof")
	assert.ErrorContains(t, err, "runs/garbage.cpu.pprof")
}

func TestPerCall(t *testing.T) {
	b, err := Fold(cpuProfile(
		sampleOf{frames(workSpin), 300}, // 3 s
		sampleOf{frames("runtime.chansend"), 100},
	))
	require.NoError(t, err)
	c, err := PerCall(b, 100_000)
	require.NoError(t, err)
	assert.Equal(t, int64(100_000), c.Calls)
	assert.InDelta(t, 40.0, c.Total, 1e-9) // 4 s / 100,000 calls
	assert.InDelta(t, 30.0, c.Micro["store"], 1e-9)
	assert.InDelta(t, 10.0, c.Micro["channels"], 1e-9)
	assert.Len(t, c.Micro, len(CategoryNames()))

	for _, calls := range []int64{0, -1} {
		_, err := PerCall(b, calls)
		assert.ErrorContains(t, err, "calls", "calls=%d", calls)
	}
}
