package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVerdictWording(t *testing.T) {
	mutex := statOfValues([]float64{100, 101, 102, 103, 104}, nil)
	inputQ := statOfValues([]float64{80, 81, 82, 83, 84}, nil)
	same := statOfValues([]float64{100.5, 101.5, 102.5, 99, 104.5}, nil)
	four := statOfValues([]float64{80, 81, 82, 83}, nil)
	tests := []struct {
		name string
		v    Verdict
		want string
	}{
		{"throughput, either order", newVerdict("inputQ", "mutex", inputQ, mutex, "calls/s", true), "inputQ 20% slower than mutex, p=0.008, n=5"},
		{"throughput", newVerdict("mutex", "inputQ", mutex, inputQ, "calls/s", true), "inputQ 20% slower than mutex, p=0.008, n=5"},
		{"cost: lower wins", newVerdict("mutex", "inputQ", mutex, inputQ, "server CPU per call", false), "mutex 24% more server CPU per call than inputQ, p=0.008, n=5"},
		{"no difference", newVerdict("mutex", "inputQ", mutex, same, "calls/s", true), "no difference detected at n=5"},
		{"unequal sizes", newVerdict("mutex", "inputQ", mutex, four, "calls/s", true), "inputQ 20% slower than mutex, p=0.016, n=5+4"},
		{"too few to tell", newVerdict("mutex", "inputQ", statOfValues([]float64{100, 101}, nil), statOfValues([]float64{1, 2}, nil), "calls/s", true),
			"no difference detected at n=2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.v.String())
		})
	}
	assert.Equal(t, "5.0%", pct(0.05))
	assert.Equal(t, "18%", pct(0.18))
}
