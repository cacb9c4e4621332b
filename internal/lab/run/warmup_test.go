package run

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// k6 refuses a scenario shorter than a second, so its warm-up lasts at
// least that long; the other drivers warm up for -warmup as given, and no
// driver warms up with -warmup 0.
func TestWarmupFor(t *testing.T) {
	tests := []struct {
		driver string
		warmup time.Duration
		want   time.Duration
	}{
		{"k6", DefaultWarmup, time.Second},
		{"k6", 2 * time.Second, 2 * time.Second},
		{"k6", 0, 0},
		{"go", DefaultWarmup, DefaultWarmup},
		{"h2load", DefaultWarmup, DefaultWarmup},
		{"go", 0, 0},
	}
	for _, tt := range tests {
		d, ok := LookupDriver(tt.driver)
		require.True(t, ok, tt.driver)
		assert.Equal(t, tt.want, warmupFor(Config{Warmup: tt.warmup}, d), "%s at -warmup %v", tt.driver, tt.warmup)
	}
}
