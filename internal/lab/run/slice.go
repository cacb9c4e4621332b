package run

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// The scheduler slice of the servers' threads side by side (-duet-slice).
// Every arm's server shares the server CPUs with the others' under equal
// weights, and the kernel switches among them every slice: by default
// about a millisecond (0.7 ms times 1 + log2 of the CPUs, EEVDF's base
// slice). A Go server with one P whose thread is switched out inside a
// system call has its P taken back by the runtime's monitor, which wakes
// another thread to run it: wake-ups that cost every arm CPU per second,
// not per call, and whose number differs from one server to its twin.
// A longer slice, the same for every arm, switches among them less often.
// Custom slices are EEVDF's (Linux 6.12 or later): sched_setattr's
// sched_runtime for the normal and batch policies, inherited by the
// threads and processes started after.
const (
	MinSlice = 100 * time.Microsecond // the kernel's bounds on a custom slice
	MaxSlice = 100 * time.Millisecond
)

// ErrNoSlice: the kernel kept its own slice where a custom one was asked.
var ErrNoSlice = fmt.Errorf("this kernel takes no custom scheduler slice (EEVDF's, Linux 6.12 or later)")

// setSlice gives every thread of the processes pids the scheduler slice
// d under the policy sched (DuetScheds), and checks the kernel kept it.
// A thread gone meanwhile is skipped.
func setSlice(pids []int, d time.Duration, sched string) error {
	policy := uint32(unix.SCHED_NORMAL)
	if sched == SchedBatch {
		policy = unix.SCHED_BATCH
	}
	for _, pid := range pids {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return err
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: policy, Runtime: uint64(d)}
			if err := unix.SchedSetAttr(tid, &attr, 0); err != nil {
				if err == unix.ESRCH {
					continue
				}
				return fmt.Errorf("-duet-slice: thread %d of %d: %w", tid, pid, err)
			}
			got, err := unix.SchedGetAttr(tid, 0)
			if err == unix.ESRCH {
				continue
			}
			if err != nil {
				return fmt.Errorf("-duet-slice: thread %d of %d: %w", tid, pid, err)
			}
			if time.Duration(got.Runtime) != d {
				return fmt.Errorf("-duet-slice %v: %w (thread %d has %v)", d, ErrNoSlice, tid, time.Duration(got.Runtime))
			}
		}
	}
	return nil
}
