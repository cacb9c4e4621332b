package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
			assert.Equal(t, tt.want, classify(tt.server, tt.driver))
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

func TestParseProcStat(t *testing.T) {
	// A command name with spaces and parentheses; utime 250, stime 50 ticks.
	line := "4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0 100 1000000 200\n"
	v, err := parseProcStat(line)
	require.NoError(t, err)
	assert.Equal(t, 3.0, v)
	_, err = parseProcStat("4242 no name here")
	assert.Error(t, err)
	_, err = parseProcStat("4242 (x) S 1 2")
	assert.Error(t, err)

	self, err := procCPUSeconds(os.Getpid())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, self, 0.0)
}
