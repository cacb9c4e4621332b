package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
)

func TestCheckInvariants(t *testing.T) {
	before := &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1000, MinBalance: 10, CounterValue: 0}
	tests := []struct {
		name   string
		after  *locklabv1.GetStatsResponse
		sum    K6Summary
		failed []string
	}{
		{"all hold", &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1000, MinBalance: 0, CounterValue: 42},
			K6Summary{AckedIncrementDelta: 42}, nil},
		{"money created", &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1001, CounterValue: 42},
			K6Summary{AckedIncrementDelta: 42}, []string{"money conserved"}},
		{"negative balance", &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1000, MinBalance: -1},
			K6Summary{}, []string{"no negative balance"}},
		{"lost increment", &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1000, CounterValue: 41},
			K6Summary{AckedIncrementDelta: 42}, []string{"no lost increment"}},
		{"extra increment without errors", &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1000, CounterValue: 43},
			K6Summary{AckedIncrementDelta: 42}, []string{"no lost increment"}},
		{"extra increment after failed calls is owed nothing", &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1000, CounterValue: 43},
			K6Summary{AckedIncrementDelta: 42, UnexpectedErrors: 1}, nil},
		{"noop checks nothing", &locklabv1.GetStatsResponse{StoreBacked: false, TotalBalance: -5, MinBalance: -5},
			K6Summary{AckedIncrementDelta: 42}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var failed []string
			for _, c := range checkInvariants(RunSpec{}, &tt.sum, before, tt.after) {
				if !c.OK {
					failed = append(failed, c.Name)
				}
				assert.NotEmpty(t, c.Detail)
			}
			assert.Equal(t, tt.failed, failed)
		})
	}
}

func TestDeriveSaturation(t *testing.T) {
	sum := &K6Summary{TestRunDurationMs: 10_000}
	sum.GRPCReqDuration.All.Count = 50_000
	st := &locklabv1.GetStatsResponse{WindowSeconds: 10, CpuSeconds: 8, Requests: 50_000}
	d := derive(sum, k6Result{Cores: 0.3}, st)
	assert.Equal(t, 5000.0, d.RequestsPerSec)
	assert.InDelta(t, 0.8, d.ServerCores, 1e-9)
	assert.InDelta(t, 160.0, d.ServerCPUPerReqU, 1e-9)
	assert.False(t, d.K6Saturated, "k6 had CPU to spare")
	left := float64(d.CPUs) - d.ServerCores
	d = derive(sum, k6Result{Cores: left * 0.95}, st)
	assert.True(t, d.K6Saturated, "k6 used nearly all the CPU the server left it")
}
