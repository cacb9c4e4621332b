package run

import (
	"testing"

	"github.com/stretchr/testify/assert"

	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/summary"
)

func TestCheckInvariants(t *testing.T) {
	before := &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1000, MinBalance: 10, CounterValue: 0}
	tests := []struct {
		name   string
		after  *locklabv1.GetStatsResponse
		res    summary.Summary
		failed []string
	}{
		{"all hold", &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1000, MinBalance: 0, CounterValue: 42},
			summary.Summary{AckedIncrementDelta: 42}, nil},
		{"money created", &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1001, CounterValue: 42},
			summary.Summary{AckedIncrementDelta: 42}, []string{"money conserved"}},
		{"negative balance", &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1000, MinBalance: -1},
			summary.Summary{}, []string{"no negative balance"}},
		{"lost increment", &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1000, CounterValue: 41},
			summary.Summary{AckedIncrementDelta: 42}, []string{"no lost increment"}},
		{"extra increment without errors", &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1000, CounterValue: 43},
			summary.Summary{AckedIncrementDelta: 42}, []string{"no lost increment"}},
		{"extra increment after failed calls is owed nothing", &locklabv1.GetStatsResponse{StoreBacked: true, TotalBalance: 1000, CounterValue: 43},
			summary.Summary{AckedIncrementDelta: 42, UnexpectedErrors: 1}, nil},
		{"noop checks nothing", &locklabv1.GetStatsResponse{StoreBacked: false, TotalBalance: -5, MinBalance: -5},
			summary.Summary{AckedIncrementDelta: 42}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var failed []string
			for _, c := range checkInvariants(plan.Spec{Driver: "h2load"}, &tt.res, before, tt.after) {
				if !c.OK {
					failed = append(failed, c.Name)
				}
				assert.NotEmpty(t, c.Detail)
			}
			assert.Equal(t, tt.failed, failed)
		})
	}
}
