package chart

import (
	"fmt"

	"gonum.org/v1/plot"
)

// LevelTicks labels exactly the given levels on an axis (a log axis's own
// ticks would fall between a study's load levels).
type LevelTicks []int

// Ticks implements plot.Ticker.
func (t LevelTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for _, l := range t {
		if v := float64(l); v >= min && v <= max {
			ticks = append(ticks, plot.Tick{Value: v, Label: fmt.Sprint(l)})
		}
	}
	return ticks
}

// PercentileX places percentile pct (0 to 100) on a latency curve's x
// axis, HDR style: 1/(1-p) on a log scale, so that 90%, 99%, 99.9% … are
// evenly spaced and the tail gets the room. 100% is at infinity.
func PercentileX(pct float64) float64 { return 1 / (1 - pct/100) }

// percentileLabels are the ticks of PercentileTicks: x as PercentileX
// places them, written out so that a tick sits on the exact power of ten.
var percentileLabels = []struct {
	x     float64
	label string
}{{1, "0%"}, {2, "50%"}, {10, "90%"}, {100, "99%"}, {1000, "99.9%"}, {10000, "99.99%"}, {100000, "99.999%"}}

// PercentileTicks labels a PercentileX axis in percentiles.
type PercentileTicks struct{}

// Ticks implements plot.Ticker.
func (PercentileTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for _, t := range percentileLabels {
		if t.x >= min && t.x <= max {
			ticks = append(ticks, plot.Tick{Value: t.x, Label: t.label})
		}
	}
	return ticks
}
