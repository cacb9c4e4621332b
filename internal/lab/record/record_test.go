package record

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"

	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name           string
		server, driver float64
		want           Class
	}{
		{"server busy, driver idle", 0.97, 0.40, ClassServerBound},
		{"server exactly at its bar", 0.90, 0.50, ClassServerBound},
		{"server just under its bar", 0.8999, 0.50, ClassNeither},
		{"driver just under its bar", 0.95, 0.8499, ClassServerBound},
		{"driver exactly at its bar", 0.95, 0.85, ClassLoadBound},
		{"driver busy, server not", 0.50, 0.99, ClassLoadBound},
		{"both idle", 0.30, 0.30, ClassNeither},
		{"over 100% (a CPU more than pinned)", 1.2, 0.1, ClassServerBound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Classify(tt.server, tt.driver))
		})
	}
}

func TestProcUsage(t *testing.T) {
	u := ProcUsage{CPUs: []int{0, 1}, CPUSeconds: 3, WallSeconds: 2}
	assert.Equal(t, 1.5, u.Cores())
	assert.Equal(t, 0.75, u.Util(8), "a share of its own CPUs")
	assert.Equal(t, 0.375, ProcUsage{CPUSeconds: 3, WallSeconds: 2}.Util(4), "unpinned: a share of the machine")
	assert.Equal(t, 0.0, ProcUsage{}.Cores())
}

func TestDerive(t *testing.T) {
	st := &locklabv1.GetStatsResponse{WindowSeconds: 10, CpuSeconds: 8, Requests: 50_000}
	raw, err := protojson.Marshal(st)
	require.NoError(t, err)
	r := &Run{
		Result:     &summary.Summary{Calls: 50_000, DurationS: 10},
		Stats:      raw,
		ServerProc: ProcUsage{CPUs: []int{0}, CPUSeconds: 9.5, WallSeconds: 10},
		DriverProc: ProcUsage{CPUs: []int{1}, CPUSeconds: 3, WallSeconds: 10},
	}
	d, err := Derive(r)
	require.NoError(t, err)
	assert.Equal(t, 5000.0, d.CallsPerSec, "calls over the window when the driver gave no rate")
	assert.InDelta(t, 0.95, d.ServerUtil, 1e-9)
	assert.InDelta(t, 0.3, d.DriverUtil, 1e-9)
	assert.InDelta(t, 160.0, d.ServerCPUPerCallUs, 1e-9, "the server's own CPU over its own request count")
	assert.Equal(t, ClassServerBound, d.Class)
	r.DriverProc.CPUSeconds = 9
	assert.Equal(t, ClassLoadBound, mustDerive(t, r).Class, "the driver used nearly all of its CPU")

	// A server over the database it started: the two together set the
	// pace; the server's CPU per call stays its own. The control: the
	// same server without its database's record is not server-bound.
	r.DriverProc.CPUSeconds = 3
	r.ServerProc.CPUSeconds = 5
	require.Equal(t, ClassNeither, mustDerive(t, r).Class, "control: the server alone half busy")
	r.BackendProc = ProcUsage{CPUs: []int{0}, CPUSeconds: 4.5, WallSeconds: 10}
	r.Derived = mustDerive(t, r)
	assert.InDelta(t, 0.45, r.Derived.BackendUtil, 1e-9)
	assert.Equal(t, ClassServerBound, r.Derived.Class)
	assert.InDelta(t, 160.0, r.Derived.ServerCPUPerCallUs, 1e-9)
	assert.Equal(t, "the server's CPUs: the server 50%, the database it started 45%", r.Limit())
	r.BackendProc, r.ServerProc.CPUSeconds = ProcUsage{}, 9.5

	// Unpinned on 2 CPUs: the driver's share is of what the server left it.
	r.ServerProc, r.DriverProc = ProcUsage{CPUSeconds: 8, WallSeconds: 10}, ProcUsage{CPUSeconds: 11, WallSeconds: 10}
	d, err = Derive(r)
	require.NoError(t, err)
	if d.CPUs == 2 {
		assert.InDelta(t, 1.1/1.2, d.DriverUtil, 1e-9)
		assert.Equal(t, ClassLoadBound, d.Class)
	}
}

func mustDerive(t *testing.T, r *Run) Derived {
	t.Helper()
	d, err := Derive(r)
	require.NoError(t, err)
	return d
}

// TestStealAndLimit: steal comes from the CPU sets, and a run at
// NotableSteal is flagged, one just under it not (the control). What limited
// a run is said only where its CPU figures show it: a "neither" run whose
// process was not busy but whose CPU set was names the set; one whose set
// was not busy either says nothing, and never "the server set the pace".
func TestStealAndLimit(t *testing.T) {
	st := &locklabv1.GetStatsResponse{WindowSeconds: 10, CpuSeconds: 5, Requests: 50_000}
	raw, err := protojson.Marshal(st)
	require.NoError(t, err)
	set := func(busy, steal float64) SetUsage { // over 10 s of one CPU
		return SetUsage{CPUs: []int{0}, User: busy, Steal: steal, Idle: 10 - busy - steal}
	}
	r := &Run{
		Result:     &summary.Summary{Calls: 50_000, DurationS: 10},
		Stats:      raw,
		ServerProc: ProcUsage{CPUs: []int{0}, CPUSeconds: 5, WallSeconds: 10},
		DriverProc: ProcUsage{CPUs: []int{1}, CPUSeconds: 5, WallSeconds: 10},
		ServerSet:  set(5, NotableSteal*10),
		DriverSet:  set(5, 0),
	}
	d := mustDerive(t, r)
	assert.InDelta(t, NotableSteal, d.Steal, 1e-9)
	assert.True(t, d.HighSteal)
	r.ServerSet = set(5, NotableSteal*10-0.01)
	assert.False(t, mustDerive(t, r).HighSteal)

	r.Derived = mustDerive(t, r)
	require.Equal(t, ClassNeither, r.Derived.Class)
	assert.Equal(t, "", r.Limit(), "half-busy process, half-busy set: the CPU figures do not say")
	r.ServerSet = set(9.5, 0)
	r.Derived = mustDerive(t, r)
	assert.Equal(t, "the server's CPUs were 95% busy, the server itself 50%: the rest interrupts, softirq or other processes", r.Limit())
	r.ServerProc.CPUSeconds = 9.5
	r.Derived = mustDerive(t, r)
	assert.Equal(t, "the server's CPU", r.Limit())
	r.DriverProc.CPUSeconds = 9
	r.Derived = mustDerive(t, r)
	assert.Equal(t, "the driver's CPU", r.Limit())
	assert.False(t, (&Run{}).ServerSet.Sampled(), "a record from before the sets were read")
}

// TestDeriveSerial: the run's workload's serial demand is read from the
// server's stats, over the same window and calls as its CPU per call; a
// server that reports none for the workload gives none.
func TestDeriveSerial(t *testing.T) {
	st := &locklabv1.GetStatsResponse{WindowSeconds: 2, CpuSeconds: 1.8, Requests: 40_000, Serial: []*locklabv1.SerialDemand{
		{Workload: "counter", Resources: 1, BusySeconds: 0.8, MaxBusySeconds: 0.8, SampleEvery: 16,
			Waits: 2500, WaitMeanNs: 1500, WaitP50Ns: 1200, WaitP99Ns: 9000, Batches: 400, BatchCommands: 1000},
		{Workload: "bank", Resources: 16, BusySeconds: 1.6, MaxBusySeconds: 0.2, SampleEvery: 16},
	}}
	raw, err := protojson.Marshal(st)
	require.NoError(t, err)
	r := &Run{Result: &summary.Summary{Calls: 40_000, DurationS: 2}, Stats: raw,
		ServerProc: ProcUsage{CPUs: []int{0}, CPUSeconds: 1.8, WallSeconds: 2}}
	r.Workload = "bank-A"
	d := mustDerive(t, r)
	require.NotNil(t, d.Serial)
	assert.Equal(t, 16, d.Serial.Resources)
	assert.InDelta(t, 5.0, d.Serial.DemandUs(), 1e-9, "the busiest shard: 0.2 s over 40,000 calls")
	assert.InDelta(t, 0.1, d.Serial.Util(), 1e-9)
	assert.False(t, d.Serial.HasWait(), "a server that sent no wait clock (an older one)")
	assert.Zero(t, d.Serial.MeanBatch())
	r.Workload = "counter"
	c := mustDerive(t, r).Serial
	assert.InDelta(t, 20.0, c.DemandUs(), 1e-9)
	assert.True(t, c.HasWait())
	assert.Equal(t, uint64(2500), c.Waits)
	assert.InDelta(t, 1.5, c.WaitMeanUs, 1e-9, "ns to µs")
	assert.InDelta(t, 1.2, c.WaitP50Us, 1e-9)
	assert.InDelta(t, 9.0, c.WaitP99Us, 1e-9)
	assert.InDelta(t, 2.5, c.MeanBatch(), 1e-9)
	r.Workload = "kv"
	assert.Nil(t, mustDerive(t, r).Serial, "the control: no serial figure for a workload the server did not report")

	// Shared CPUs: each process is judged against what the other left.
	r.ServerProc, r.DriverProc = ProcUsage{CPUs: []int{0, 1}, CPUSeconds: 3, WallSeconds: 2}, ProcUsage{CPUs: []int{0, 1}, CPUSeconds: 1, WallSeconds: 2}
	r.SharedCPUs = true
	d = mustDerive(t, r)
	assert.InDelta(t, 1.5/1.5, d.ServerUtil, 1e-9)
	assert.InDelta(t, 0.5/0.5, d.DriverUtil, 1e-9)
}

// TestForeign: the share of a run's CPU sets that the lab's own processes
// did not use, each process counted on the set it was pinned to (or on
// every set, unpinned). The control: the same sets with no other process
// read (nearly) zero.
func TestForeign(t *testing.T) {
	// One second on CPU 0 (server) and CPU 1 (driver).
	set := func(cpu int, busy float64) SetUsage {
		return SetUsage{CPUs: []int{cpu}, User: busy, Idle: 1 - busy}
	}
	tests := []struct {
		name           string
		r              Run
		server, driver float64
	}{
		{name: "another process on the server's CPU",
			r: Run{ServerProc: ProcUsage{CPUs: []int{0}, CPUSeconds: 0.6}, DriverProc: ProcUsage{CPUs: []int{1}, CPUSeconds: 0.5},
				ServerSet: set(0, 0.9), DriverSet: set(1, 0.5)},
			server: 0.3, driver: 0},
		{name: "control: only the lab",
			r: Run{ServerProc: ProcUsage{CPUs: []int{0}, CPUSeconds: 0.9}, DriverProc: ProcUsage{CPUs: []int{1}, CPUSeconds: 0.5},
				ServerSet: set(0, 0.9), DriverSet: set(1, 0.5)},
			server: 0, driver: 0},
		{name: "steal and interrupts are foreign",
			r: Run{ServerProc: ProcUsage{CPUs: []int{0}, CPUSeconds: 0.5}, DriverProc: ProcUsage{CPUs: []int{1}, CPUSeconds: 0.5},
				ServerSet: SetUsage{CPUs: []int{0}, User: 0.5, IRQ: 0.05, SoftIRQ: 0.05, Steal: 0.1, Idle: 0.3}, DriverSet: set(1, 0.5)},
			server: 0.2, driver: 0},
		{name: "a niced process is foreign",
			r: Run{ServerProc: ProcUsage{CPUs: []int{0}, CPUSeconds: 0.5}, DriverProc: ProcUsage{CPUs: []int{1}, CPUSeconds: 0.5},
				ServerSet: SetUsage{CPUs: []int{0}, User: 0.5, Nice: 0.25, Idle: 0.25}, DriverSet: set(1, 0.5)},
			server: 0.25, driver: 0},
		{name: "unpinned: both processes on the machine's set",
			r: Run{ServerProc: ProcUsage{CPUSeconds: 0.8}, DriverProc: ProcUsage{CPUSeconds: 0.6},
				ServerSet: SetUsage{User: 1.6, Idle: 0.4}, DriverSet: SetUsage{User: 1.6, Idle: 0.4}},
			server: 0.1, driver: 0.1},
		{name: "shared set: both processes on it",
			r: Run{ServerProc: ProcUsage{CPUs: []int{0}, CPUSeconds: 0.5}, DriverProc: ProcUsage{CPUs: []int{0}, CPUSeconds: 0.4},
				ServerSet: set(0, 0.95), DriverSet: set(0, 0.95)},
			server: 0.05, driver: 0.05},
		{name: "the server's own database on its CPU is the lab's",
			r: Run{ServerProc: ProcUsage{CPUs: []int{0}, CPUSeconds: 0.4}, BackendProc: ProcUsage{CPUs: []int{0}, CPUSeconds: 0.45},
				DriverProc: ProcUsage{CPUs: []int{1}, CPUSeconds: 0.5}, ServerSet: set(0, 0.9), DriverSet: set(1, 0.5)},
			server: 0.05, driver: 0},
		{name: "control: the same database unrecorded is foreign",
			r: Run{ServerProc: ProcUsage{CPUs: []int{0}, CPUSeconds: 0.4},
				DriverProc: ProcUsage{CPUs: []int{1}, CPUSeconds: 0.5}, ServerSet: set(0, 0.9), DriverSet: set(1, 0.5)},
			server: 0.5, driver: 0},
		{name: "the runner's own CPU is the lab's, on every set",
			r: Run{ServerProc: ProcUsage{CPUs: []int{0}, CPUSeconds: 0.6}, DriverProc: ProcUsage{CPUs: []int{1}, CPUSeconds: 0.5},
				RunnerProc: ProcUsage{CPUSeconds: 0.1}, ServerSet: set(0, 0.75), DriverSet: set(1, 0.65)},
			server: 0.05, driver: 0.05},
		{name: "the kernel's ticks a little behind the process's: zero, not negative",
			r: Run{ServerProc: ProcUsage{CPUs: []int{0}, CPUSeconds: 0.92}, DriverProc: ProcUsage{CPUs: []int{1}, CPUSeconds: 0.5},
				ServerSet: set(0, 0.9), DriverSet: set(1, 0.5)},
			server: 0, driver: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			assert.InDelta(t, tt.server, r.ServerSet.Foreign(r.labCPUOn(r.ServerSet)), 1e-9)
			assert.InDelta(t, tt.driver, r.DriverSet.Foreign(r.labCPUOn(r.DriverSet)), 1e-9)
		})
	}
	assert.Zero(t, SetUsage{}.Foreign(0), "an unsampled set has no share")
	g := &Gate{MaxForeign: 0.1}
	assert.NotEmpty(t, g.Spoils(&Run{Derived: Derived{Foreign: 0.11}}))
	assert.Empty(t, g.Spoils(&Run{Derived: Derived{Foreign: 0.1}}), "at the limit is clean")
	assert.Empty(t, (*Gate)(nil).Spoils(&Run{Derived: Derived{Foreign: 0.9}}), "records from before the gate are never spoiled")
}
