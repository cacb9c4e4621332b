package record

import locklabv1 "github.com/locklab/locklab/proto/locklab/v1"

// Serial is how busy the run's store's serial resources were — the lock,
// the owner goroutine, the combiner's role, each shard's — over the
// server's window since the run's Reset: the window the server's requests
// and CPU seconds cover too, so that D_serial and D_cpu divide by the same
// calls over the same time.
type Serial struct {
	Resources      int     `json:"resources"`        // 0: none (atomic)
	BusySeconds    float64 `json:"busy_seconds"`     // summed over the resources
	MaxBusySeconds float64 `json:"max_busy_seconds"` // the busiest one: the one that binds
	SampleEvery    int     `json:"sample_every"`     // lock holds timed one in this many
	WindowSeconds  float64 `json:"window_seconds"`
	Calls          uint64  `json:"calls"` // the server's requests in the window
}

// DemandUs is the serial demand per call, D_serial, in µs: the busiest
// resource's busy time over the calls (the utilization law); 0 without
// calls.
func (s *Serial) DemandUs() float64 {
	if s.Calls == 0 {
		return 0
	}
	return s.MaxBusySeconds / float64(s.Calls) * 1e6
}

// Util is the busiest resource's share of the window.
func (s *Serial) Util() float64 {
	if s.WindowSeconds <= 0 {
		return 0
	}
	return s.MaxBusySeconds / s.WindowSeconds
}

// serialOf is the serial demand of the run's workload in the stats after
// the run, or nil where the server reports none for it (noop; a server
// older than the measurement).
func serialOf(kind string, st *locklabv1.GetStatsResponse) *Serial {
	for _, sd := range st.GetSerial() {
		if sd.GetWorkload() == kind {
			return &Serial{
				Resources: int(sd.GetResources()), BusySeconds: sd.GetBusySeconds(), MaxBusySeconds: sd.GetMaxBusySeconds(),
				SampleEvery: int(sd.GetSampleEvery()), WindowSeconds: st.GetWindowSeconds(), Calls: st.GetRequests(),
			}
		}
	}
	return nil
}
