//go:build !linux

package server

import "time"

// threadCPU: no thread CPU clock is read here; the spin's cost goes
// unread (GetStats' call_work_samples stays 0).
func threadCPU() (time.Duration, bool) { return 0, false }
