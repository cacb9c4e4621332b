package ledger

import (
	"strings"

	"golang.org/x/exp/trace"
)

// A Category is one state a call's time is put in: one row of Categories.
type Category struct {
	Name string // short, for records and figures: "chan"
	Help string // what it holds, for the report's legend
}

// The categories' names, in Categories' order; Categories is the table
// everything ranges over, and these name its rows for the code that maps
// states to them.
const (
	Running      = "running"
	Runnable     = "runnable"
	Chan         = "chan"
	Sync         = "sync"
	Syscall      = "syscall"
	GC           = "gc"
	OtherWait    = "other-wait"
	Unattributed = "unattributed"
)

// Categories is the table of states, in the order of stacked bars and
// columns. Unattributed is last: the part of a call the trace does not
// put in a state.
var Categories = []Category{
	{Running, "running on a CPU: the call's own code, the store's, the runtime's on its behalf"},
	{Runnable, "ready to run, waiting for a P: the scheduler's queue"},
	{Chan, "blocked on a channel: a send, a receive or a select (an owner design's caller waiting for its answer)"},
	{Sync, "blocked on a lock or a condition: sync.Mutex, RWMutex, WaitGroup, Cond"},
	{Syscall, "in a system call, or parked on the network poller"},
	{GC, "the garbage collector's: assisting its mark, waiting on it, or stopped by a stop-the-world pause"},
	{OtherWait, "blocked on anything else: a sleep, a timer, an unnamed wait"},
	{Unattributed, "time the trace puts in no state: the goroutine's state was not yet known"},
}

// Names is the categories' names, in order.
func Names() []string {
	out := make([]string, len(Categories))
	for i, c := range Categories {
		out[i] = c.Name
	}
	return out
}

// index is each category's position in Categories.
var index = func() map[string]int {
	m := make(map[string]int, len(Categories))
	for i, c := range Categories {
		m[c.Name] = i
	}
	return m
}()

// waitReasons puts a waiting goroutine's reason, as the runtime states it,
// in a category; a reason not here is OtherWait. The reasons are the
// runtime's (its traceBlockReason strings).
var waitReasons = map[string]string{
	"chan receive":                 Chan,
	"chan send":                    Chan,
	"select":                       Chan,
	"sync":                         Sync,
	"sync.(*Cond).Wait":            Sync,
	"network":                      Syscall,
	"GC mark assist wait for work": GC,
	"wait until GC ends":           GC,
	"GC weak to strong wait":       GC,
}

// State is what the trace says a goroutine is doing at an instant: its
// state, the reason it waits, and whether it is inside a GC mark assist or
// the world is stopped.
type State struct {
	Go     trace.GoState
	Reason string
	Assist bool // inside a "GC mark assist" range of its own
	STW    bool // a stop-the-world pause is under way
}

// Classify is the mapping from a goroutine's state to a category: the
// ledger's one rule, which the known-answer tests check (and a broken copy
// of which their control shows failing).
func Classify(s State) string {
	switch s.Go {
	case trace.GoRunning:
		if s.Assist || s.STW {
			return GC
		}
		return Running
	case trace.GoRunnable:
		if s.STW {
			return GC
		}
		return Runnable
	case trace.GoSyscall:
		return Syscall
	case trace.GoWaiting:
		if c, ok := waitReasons[s.Reason]; ok {
			return c
		}
		return OtherWait
	}
	return Unattributed
}

// isAssist and isSTW name the runtime's ranges the mapping reads.
func isAssist(name string) bool { return name == "GC mark assist" }
func isSTW(name string) bool    { return strings.HasPrefix(name, "stop-the-world") }
