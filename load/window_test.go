package load

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestWindowSecond: a call counts in the second of the window it ended in;
// one that ended before the window in its first, and one that ended after
// it (an open-model call due inside the window, answered late) in its last,
// so that a 2.5 s window has three entries whatever the machine's load.
func TestWindowSecond(t *testing.T) {
	from := time.Unix(1000, 0)
	w := window{from: from, to: from.Add(2500 * time.Millisecond)}
	for _, c := range []struct {
		at   time.Duration
		want int
	}{{-time.Second, 0}, {0, 0}, {999 * time.Millisecond, 0}, {time.Second, 1}, {2400 * time.Millisecond, 2},
		{2500 * time.Millisecond, 2}, {3100 * time.Millisecond, 2}, {10 * time.Second, 2}} {
		assert.Equal(t, c.want, w.second(from.Add(c.at)), "%v into the window", c.at)
	}
	whole := window{from: from, to: from.Add(2 * time.Second)}
	assert.Equal(t, 1, whole.second(from.Add(2*time.Second)), "a whole-second window has no third entry")
}
