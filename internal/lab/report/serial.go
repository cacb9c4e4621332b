package report

import (
	"fmt"
	"slices"

	"github.com/locklab/locklab/internal/lab/record"
)

// The serial resource's figures (the lock, the owner goroutine, the
// combiner's role, each shard's): rows of the catalogue, and the D_serial
// of the bottleneck section below.
var (
	mSerialDemand = &Metric{Key: "serial_demand_us_per_call", Label: "serial demand per call (D_serial, busiest resource)",
		Unit: UnitUs, Better: Lower, Block: BlockServer, HideEmpty: true, Applies: hasSerial,
		Read: serial(func(s *record.Serial) float64 { return s.DemandUs() })}
	mSerialUtil = &Metric{Key: "serial_util", Label: "serial resource busy (of the window)",
		Unit: UnitShare, Block: BlockServer, HideEmpty: true, Applies: hasSerial,
		Read: serial(func(s *record.Serial) float64 { return s.Util() })}
	mSerialResources = &Metric{Key: "serial_resources", Label: "serial resources",
		Unit: UnitCount, Block: BlockServer, HideEmpty: true, Applies: func(r *record.Run) bool { return r.Derived.Serial != nil },
		Read: serial(func(s *record.Serial) float64 { return float64(s.Resources) })}
)

// hasSerial: the server timed a serial resource over calls (atomic has
// none; noop has no store).
func hasSerial(r *record.Run) bool {
	s := r.Derived.Serial
	return s != nil && s.Resources > 0 && s.Calls > 0
}

func serial(f func(*record.Serial) float64) func(*record.Run) (float64, error) {
	return func(r *record.Run) (float64, error) {
		if r.Derived.Serial == nil {
			return 0, fmt.Errorf("run %s: no serial demand", r.ID)
		}
		return f(r.Derived.Serial), nil
	}
}

// sharedNote flags a section whose runs had the driver on the server's CPUs.
const sharedNote = "shared CPUs: throughput is shared-CPU throughput; the server's CPU per call and serial demand are still the server's own"

// sharedNotes is the flag of a section some of whose runs shared CPUs.
func (rep *Report) sharedNotes(sec Section) []block {
	for _, g := range rep.Groups {
		if g.Section == sec && slices.ContainsFunc(g.records, func(r *record.Run) bool { return r.SharedCPUs }) {
			return []block{para("**" + sharedNote + "** (the driver ran on the server's CPUs, `-share-cpus`).")}
		}
	}
	return nil
}
