package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"

	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
)

func TestCheckInvariants(t *testing.T) {
	before := &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1000, MinBalance: 10, CounterValue: 0}
	tests := []struct {
		name   string
		after  *locklabv1.GetStatsResponse
		res    Result
		failed []string
	}{
		{"all hold", &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1000, MinBalance: 0, CounterValue: 42},
			Result{AckedIncrementDelta: 42}, nil},
		{"money created", &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1001, CounterValue: 42},
			Result{AckedIncrementDelta: 42}, []string{"money conserved"}},
		{"negative balance", &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1000, MinBalance: -1},
			Result{}, []string{"no negative balance"}},
		{"lost increment", &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1000, CounterValue: 41},
			Result{AckedIncrementDelta: 42}, []string{"no lost increment"}},
		{"extra increment without errors", &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1000, CounterValue: 43},
			Result{AckedIncrementDelta: 42}, []string{"no lost increment"}},
		{"extra increment after failed calls is owed nothing", &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1000, CounterValue: 43},
			Result{AckedIncrementDelta: 42, UnexpectedErrors: 1}, nil},
		{"noop checks nothing", &locklabv1.GetStatsResponse{StoreBacked: false, TotalBalance: -5, MinBalance: -5},
			Result{AckedIncrementDelta: 42}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var failed []string
			for _, c := range checkInvariants(RunSpec{Driver: "h2load"}, &tt.res, before, tt.after) {
				if !c.OK {
					failed = append(failed, c.Name)
				}
				assert.NotEmpty(t, c.Detail)
			}
			assert.Equal(t, tt.failed, failed)
		})
	}
}

func TestDerive(t *testing.T) {
	st := &locklabv1.GetStatsResponse{WindowSeconds: 10, CpuSeconds: 8, Requests: 50_000}
	raw, err := protojson.Marshal(st)
	require.NoError(t, err)
	r := &RunRecord{
		Result:     &Result{Calls: 50_000, DurationS: 10},
		Stats:      raw,
		ServerProc: ProcUsage{CPUs: []int{0}, CPUSeconds: 9.5, WallSeconds: 10},
		DriverProc: ProcUsage{CPUs: []int{1}, CPUSeconds: 3, WallSeconds: 10},
	}
	d := derive(r)
	assert.Equal(t, 5000.0, d.CallsPerSec, "calls over the window when the driver gave no rate")
	assert.InDelta(t, 0.95, d.ServerUtil, 1e-9)
	assert.InDelta(t, 0.3, d.DriverUtil, 1e-9)
	assert.InDelta(t, 160.0, d.ServerCPUPerCallUs, 1e-9, "the server's own CPU over its own request count")
	assert.Equal(t, ClassServerBound, d.Class)
	r.DriverProc.CPUSeconds = 9
	assert.Equal(t, ClassLoadBound, derive(r).Class, "the driver used nearly all of its CPU")

	// Unpinned on 2 CPUs: the driver's share is of what the server left it.
	r.ServerProc, r.DriverProc = ProcUsage{CPUSeconds: 8, WallSeconds: 10}, ProcUsage{CPUSeconds: 11, WallSeconds: 10}
	d = derive(r)
	if d.CPUs == 2 {
		assert.InDelta(t, 1.1/1.2, d.DriverUtil, 1e-9)
		assert.Equal(t, ClassLoadBound, d.Class)
	}
}
