package run

import (
	"fmt"
	"os"
	"runtime"
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
	// DefaultSlice is every server thread's slice unless -duet-slice
	// says otherwise, on a kernel that keeps one (sliceKept); on one
	// that does not, the runner goes on with the kernel's own and says
	// so in the report's setup.
	DefaultSlice = 12 * time.Millisecond
	// SliceKernel, as Options.DuetSlice (-duet-slice kernel or 0), asks
	// for the kernel's own slice.
	SliceKernel time.Duration = -1
)

// ErrNoSlice: the kernel kept its own slice where a custom one was asked.
var ErrNoSlice = fmt.Errorf("this kernel takes no custom scheduler slice (EEVDF's, Linux 6.12 or later)")

// sliceKept says whether this kernel keeps the custom slice d: it gives
// d to a thread of the runner's own, reads it back, and lets the thread
// go (a goroutine that ends locked to its thread ends the thread), so
// that no other goroutine ever runs with d.
func sliceKept(d time.Duration) (bool, error) {
	type result struct {
		kept bool
		err  error
	}
	c := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL, Runtime: uint64(d)}
		if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
			c <- result{err: err}
			return
		}
		got, err := unix.SchedGetAttr(0, 0)
		if err != nil {
			c <- result{err: err}
			return
		}
		c <- result{kept: time.Duration(got.Runtime) == d}
	}()
	r := <-c
	return r.kept, r.err
}

// resolveSlice checks, before the first round, that the kernel keeps
// the duet's slice, with kept (sliceKept). Where it does not, a slice
// that was asked for (-duet-slice given) is refused with ErrNoSlice; the
// default one gives way to the kernel's own, and note says so for the
// report's setup. A plan over a database keeps the kernel's own unless
// a slice is asked for: there every arm's server has a database whose
// threads wait for each other's row locks, and a longer slice keeps a
// waiter waiting for a holder switched out, which changed the designs'
// answers (make study NAME=slice-db).
func resolveSlice(d Duet, overDB bool, kept func(time.Duration) (bool, error)) (_ Duet, note string, _ error) {
	if d.Slice == 0 {
		return d, "", nil
	}
	if overDB && d.SliceFallback {
		d.Slice = 0
		return d, "the servers' threads keep the kernel's own scheduler slice, as every plan over a database does unless -duet-slice asks for one: there a longer slice keeps a transaction waiting for a row lock whose holder is switched out, and changed the designs' answers", nil
	}
	ok, err := kept(d.Slice)
	switch {
	case err != nil && !d.SliceFallback:
		return d, "", fmt.Errorf("-duet-slice %v: %w", d.Slice, err)
	case ok:
		return d, "", nil
	case !d.SliceFallback:
		return d, "", fmt.Errorf("-duet-slice %v: %w", d.Slice, ErrNoSlice)
	}
	why := "it kept its own"
	if err != nil {
		why = err.Error()
	}
	note = fmt.Sprintf("the servers' threads keep the kernel's own scheduler slice: this kernel took no custom one (%v asked for by default; %s), which needs EEVDF's, Linux 6.12 or later; the arms' servers are switched about every millisecond", d.Slice, why)
	d.Slice = 0
	return d, note, nil
}

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
