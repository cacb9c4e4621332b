package cpuset

import (
	"testing"

	"github.com/prometheus/procfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRead reads a fixture /proc/stat (in ticks of 1/100 s):
// CPU 0 ran 1 s user, 0.5 s system, 0.05 s each of irq and softirq, idled
// 8 s, waited 0.1 s on I/O and lost 0.3 s to steal; CPU 1 lost 1 s of 10.
func TestRead(t *testing.T) {
	fs, err := procfs.NewFS("testdata/procstat")
	require.NoError(t, err)
	c, err := Read(fs)
	require.NoError(t, err)
	require.Len(t, c, 2)

	cpu0 := c.Set([]int{0})
	assert.Equal(t, []int{0}, cpu0.CPUs)
	assert.InDelta(t, 10.0, cpu0.Total(), 1e-9)
	assert.InDelta(t, 0.16, cpu0.Busy(), 1e-9, "user, system, irq and softirq of the whole")
	assert.InDelta(t, 0.03, cpu0.StealShare(), 1e-9)
	cpu1 := c.Set([]int{1})
	assert.InDelta(t, 0.1, cpu1.StealShare(), 1e-9)
	all := c.Set(nil)
	assert.InDelta(t, 20.0, all.Total(), 1e-9, "unpinned: the whole machine")
	assert.InDelta(t, 1.3/20, all.StealShare(), 1e-9)

	_, err = Read(procfs.FS{}) // no mount point at all
	assert.Error(t, err)
}

// TestSetArithmetic: Minus is the window between two readings, Lerp a
// moment inside it.
func TestSetArithmetic(t *testing.T) {
	a := Usage{CPUs: []int{0}, User: 1, Nice: 2, System: 3, Idle: 4, Iowait: 5, IRQ: 6, SoftIRQ: 7, Steal: 8}
	b := Usage{CPUs: []int{0}, User: 3, Nice: 4, System: 5, Idle: 6, Iowait: 7, IRQ: 8, SoftIRQ: 9, Steal: 10}
	d := b.Minus(a)
	assert.Equal(t, Usage{CPUs: []int{0}, User: 2, Nice: 2, System: 2, Idle: 2, Iowait: 2, IRQ: 2, SoftIRQ: 2, Steal: 2}, d)
	mid := Lerp(a, b, 0.5)
	assert.Equal(t, Usage{CPUs: []int{0}, User: 2, Nice: 3, System: 4, Idle: 5, Iowait: 6, IRQ: 7, SoftIRQ: 8, Steal: 9}, mid)
	assert.Equal(t, Usage{CPUs: []int{0}, User: 1.6, Idle: 0.01}.Round(0.001), Usage{CPUs: []int{0}, User: 1.5999999999985448, Idle: 0.009999999999990905}.Round(0.001))
}
