package server

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the calling thread's CPU clock (user and system time).
func threadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
