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

	// The store's own clocks over the same window (store.SerialStats):
	// how long a command waited before the serial resource took it — the
	// lock wait of a lock design, the mailbox age of an owner design —
	// over Waits commands timed (one in SampleEvery), in µs; and the
	// batches the resource took (owner designs, combining) with the
	// commands in them. All 0 in a record from a server without the
	// clocks, and Waits 0 where there is no serial resource.
	Waits         uint64  `json:"waits,omitempty"`
	WaitMeanUs    float64 `json:"wait_mean_us,omitempty"`
	WaitP50Us     float64 `json:"wait_p50_us,omitempty"`
	WaitP99Us     float64 `json:"wait_p99_us,omitempty"`
	Batches       uint64  `json:"batches,omitempty"`
	BatchCommands uint64  `json:"batch_commands,omitempty"`
}

// HasWait reports whether the record holds the wait clock's figures.
func (s *Serial) HasWait() bool { return s != nil && s.Waits > 0 }

// MeanBatch is the commands per batch the serial resource took; 0 without
// a batch (lock designs, older records).
func (s *Serial) MeanBatch() float64 {
	if s == nil || s.Batches == 0 {
		return 0
	}
	return float64(s.BatchCommands) / float64(s.Batches)
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
				Waits: sd.GetWaits(), WaitMeanUs: sd.GetWaitMeanNs() / 1e3, WaitP50Us: sd.GetWaitP50Ns() / 1e3,
				WaitP99Us: sd.GetWaitP99Ns() / 1e3, Batches: sd.GetBatches(), BatchCommands: sd.GetBatchCommands(),
			}
		}
	}
	return nil
}
