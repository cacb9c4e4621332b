package run

import (
	"runtime"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// turns gives the server CPUs to one arm at a time (-duet-cpu turns): the
// arm whose turn it is runs, every other arm's server and the processes it
// started are stopped (SIGSTOP), and after each turn the next arm in the
// round's order takes the CPUs. An arm is read during its own turn, so
// that between its two reads it held the CPUs for a whole number of turns
// and no other arm's server ran beside it at any instant; its rates are
// per second of the time it held them (duet.Measure.Held).
type turns struct {
	turn  time.Duration
	procs [][]int // each arm's server and its descendants, in the round's order
	reads chan *turnRead
	quit  chan struct{}
	done  chan struct{}
}

// turnRead asks for every arm to be read once, each at the start of its
// own next turn: fn gets the arm's index and the time it has held the CPUs
// so far.
type turnRead struct {
	fn   func(arm int, held time.Duration)
	done chan struct{}
}

// startTurns stops every arm's processes but the first's and starts
// handing the CPUs round, each turn lasting turn, from a thread pinned to
// cpus (the drivers' set, so that the turns take nothing from the
// servers').
func startTurns(procs [][]int, turn time.Duration, cpus []int) *turns {
	t := &turns{turn: turn, procs: procs, reads: make(chan *turnRead, 1), quit: make(chan struct{}), done: make(chan struct{})}
	for i := 1; i < len(procs); i++ {
		t.signal(i, syscall.SIGSTOP)
	}
	go t.run(cpus)
	return t
}

func (t *turns) signal(arm int, sig syscall.Signal) {
	for _, pid := range t.procs[arm] {
		_ = syscall.Kill(pid, sig) // a process gone is the round's failure to report, not this
	}
}

func (t *turns) run(cpus []int) {
	defer close(t.done)
	// The thread ends with the goroutine (never unlocked), and its
	// affinity with it.
	runtime.LockOSThread()
	if len(cpus) > 0 {
		var set unix.CPUSet
		for _, c := range cpus {
			set.Set(c)
		}
		_ = unix.SchedSetaffinity(0, &set) // unpinned, the turns still hold; only their timing is less exact
	}
	held := make([]time.Duration, len(t.procs))
	var read *turnRead
	var readDone []bool
	left := 0
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for arm := 0; ; arm = (arm + 1) % len(t.procs) {
		start := time.Now()
		t.signal(arm, syscall.SIGCONT)
		if read == nil {
			select {
			case read = <-t.reads:
				readDone, left = make([]bool, len(t.procs)), len(t.procs)
			default:
			}
		}
		if read != nil && !readDone[arm] {
			read.fn(arm, held[arm]+time.Since(start))
			readDone[arm] = true
			if left--; left == 0 {
				close(read.done)
				read = nil
			}
		}
		timer.Reset(t.turn)
		select {
		case <-timer.C:
		case <-t.quit:
			for i := range t.procs {
				t.signal(i, syscall.SIGCONT)
			}
			if read != nil {
				close(read.done)
			}
			return
		}
		t.signal(arm, syscall.SIGSTOP)
		t.settle(arm)
		held[arm] += time.Since(start)
	}
}

// stopWithin bounds how long a turn's end waits for its arm's stop to
// land. A stop lands within microseconds on a quiet machine; on a busy one
// a millisecond was sometimes not enough, and the next arm then ran beside
// it (and was read beside it).
const stopWithin = 100 * time.Millisecond

// settle waits, for at most stopWithin, until every process of arm has
// stopped: a stop lands once the process next runs, and the next arm's
// turn starts only after it.
func (t *turns) settle(arm int) {
	deadline := time.Now().Add(stopWithin)
	for _, pid := range t.procs[arm] {
		for !stoppedOrGone(pid) && time.Now().Before(deadline) {
			runtime.Gosched()
		}
	}
}

// stoppedOrGone says whether pid is stopped (state T) or no longer there.
func stoppedOrGone(pid int) bool {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return true
	}
	st, err := p.Stat()
	if err != nil {
		return true
	}
	switch st.State {
	case "T", "t", "Z", "X":
		return true
	}
	return false
}

// readEach reads every arm once, each during its own next turn, and
// returns when all were read (or the turns ended).
func (t *turns) readEach(fn func(arm int, held time.Duration)) {
	r := &turnRead{fn: fn, done: make(chan struct{})}
	select {
	case t.reads <- r:
	case <-t.done:
		return
	}
	select {
	case <-r.done:
	case <-t.done:
	}
}

// stop ends the turns and lets every arm's processes run again (nil:
// there were no turns).
func (t *turns) stop() {
	if t == nil {
		return
	}
	select {
	case <-t.quit:
	default:
		close(t.quit)
	}
	<-t.done
}
