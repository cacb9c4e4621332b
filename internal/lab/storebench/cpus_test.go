package storebench

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCPUList(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{
		{1, "1,2"},
		{2, "1,2"},
		{3, "1,2,3"},
		{4, "1,2,4"},
		{6, "1,2,4,6"},
		{8, "1,2,4,8"},
		{12, "1,2,4,8,12"},
		{64, "1,2,4,8,16,32,64"},
		{96, "1,2,4,8,16,32,64,96"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, JoinCPUs(CPUList(tt.n)), "n=%d", tt.n)
	}
}
