package attrib

import (
	"cmp"
	"slices"
	"strings"
)

// Category is one row of the table: a name, what it holds, and the rules
// that put a profile frame in it.
type Category struct {
	Name  string
	Holds string // one line for docs and reports
	// Funcs are whole function names (closures such as F.func1 match F).
	Funcs []string
	// Prefixes match the start of a function name: a package path with
	// its dot ("syscall."), or a method set ("sync.(*Mutex).").
	Prefixes []string
	// Weak are whole function names that count only when no frame nearer
	// the root than them (and nearer than the next code frame) matches a
	// mechanism: see Classify.
	Weak []string
	// Mechanism: the runtime or the kernel working for the code that
	// called it, rather than code of its own (see Classify).
	Mechanism bool
}

// Other is the category of a stack no rule matches.
const Other = "other"

// categories is the one list of categories. Everything that lists them —
// Fold's breakdown, the docs' table, the tests — ranges over it.
var categories = []Category{
	{
		Name:  "store",
		Holds: "locklab's store: the designs' own code, the workloads' machines, the -work spin inside Apply, the durable wrapper and the write-ahead log's encoding",
		Prefixes: []string{
			"github.com/locklab/locklab/store.",
			"github.com/locklab/locklab/workload.",
			"github.com/locklab/locklab/internal/work.",
			"github.com/locklab/locklab/server/internal/durable.",
			"github.com/locklab/locklab/server/internal/wal.",
			// The same three before they moved out of the public API:
			// profiles recorded then carry these names.
			"github.com/locklab/locklab/work.",
			"github.com/locklab/locklab/durable.",
			"github.com/locklab/locklab/wal.",
		},
	},
	{
		Name:  "server",
		Holds: "locklab's server around the store: its handlers, admission, and the Prometheus metrics it records (always on while /debug/pprof is served)",
		Prefixes: []string{
			"github.com/locklab/locklab/server.",
			"github.com/grpc-ecosystem/",
			"github.com/prometheus/",
		},
	},
	{
		Name:  "grpc",
		Holds: "gRPC-Go and its HTTP/2 transport: framing, HPACK, flow control, the server's stream handling",
		Prefixes: []string{
			"google.golang.org/grpc.", "google.golang.org/grpc/",
			"golang.org/x/net/http2.", "golang.org/x/net/http2/",
		},
	},
	{
		Name:  "protobuf",
		Holds: "protobuf encoding and decoding, and the generated message code",
		Prefixes: []string{
			"google.golang.org/protobuf/",
			"github.com/locklab/locklab/proto/",
		},
	},
	{
		Name: "syscalls", Mechanism: true,
		Holds: "system calls for I/O: socket and file reads and writes (their kernel time too), the network poller, and the runtime's bookkeeping around a call",
		Funcs: []string{
			"runtime.entersyscall", "runtime.reentersyscall", "runtime.entersyscallblock",
			"runtime.exitsyscall", "runtime.exitsyscallfast",
		},
		Prefixes: []string{
			"syscall.", "internal/poll.", "golang.org/x/sys/unix.",
			"runtime.netpoll", "runtime.poll_runtime_",
		},
	},
	{
		Name: "channels", Mechanism: true,
		Holds: "channel operations: send, receive, select, close, and the channel's own lock",
		Funcs: []string{
			"runtime.chansend", "runtime.chansend1", "runtime.chanrecv", "runtime.chanrecv1",
			"runtime.chanrecv2", "runtime.selectgo", "runtime.selectnbsend", "runtime.selectnbrecv",
			"runtime.closechan", "runtime.makechan", "runtime.send", "runtime.recv",
			"runtime.sendDirect", "runtime.recvDirect", "runtime.sellock", "runtime.selunlock",
			"runtime.block", "runtime.reflect_chansend", "runtime.reflect_chanrecv",
			"runtime.reflect_rselect", "runtime.chanparkcommit", "runtime.selparkcommit",
		},
	},
	{
		Name: "locks", Mechanism: true,
		Holds: "sync's locks, conditions and wait groups, their spinning and their semaphores; the runtime's own lock and semaphores where no other mechanism took them",
		Funcs: []string{
			// Not WaitGroup.Go, which runs the caller's function.
			"sync.(*WaitGroup).Add", "sync.(*WaitGroup).Done", "sync.(*WaitGroup).Wait",
		},
		Prefixes: []string{
			"sync.(*Mutex).", "sync.(*RWMutex).", "sync.(*Cond).",
			"internal/sync.(*Mutex).", "internal/sync.(*RWMutex).",
			"sync.runtime_", "internal/sync.runtime_", "runtime.sync_runtime_",
			"runtime.internal_sync_runtime_", "runtime.notifyList",
		},
		// The runtime's own lock and semaphores serve the scheduler, the
		// channels and the GC as well as sync's locks (which reach them
		// through the sync_runtime_ functions above).
		Weak: []string{
			"runtime.lock", "runtime.lock2", "runtime.unlock", "runtime.unlock2",
			"runtime.lockWithRank", "runtime.unlockWithRank",
			"runtime.semacquire", "runtime.semacquire1", "runtime.semrelease", "runtime.semrelease1",
			"runtime.readyWithTime",
		},
	},
	{
		Name: "scheduler", Mechanism: true,
		Holds: "the Go scheduler: parking and readying goroutines, finding the next one to run, waking and idling threads, preemption",
		Funcs: []string{
			"runtime.gopark", "runtime.goparkunlock", "runtime.goready", "runtime.ready",
			"runtime.mcall", "runtime.park_m", "runtime.schedule", "runtime.findRunnable",
			"runtime.findrunnable", "runtime.execute", "runtime.gogo", "runtime.gosched_m",
			"runtime.goschedImpl", "runtime.gopreempt_m", "runtime.goschedguarded_m",
			"runtime.preemptPark", "runtime.wakep", "runtime.startm", "runtime.stopm",
			"runtime.handoffp", "runtime.acquirep", "runtime.releasep", "runtime.mPark",
			"runtime.notesleep", "runtime.notewakeup", "runtime.notetsleep", "runtime.notetsleepg",
			"runtime.resetspinning", "runtime.injectglist", "runtime.runqput", "runtime.runqget",
			"runtime.runqgrab", "runtime.runqsteal", "runtime.stealWork", "runtime.globrunqget",
			"runtime.globrunqput", "runtime.checkTimers", "runtime.newproc", "runtime.newproc1",
			"runtime.goexit0", "runtime.goexit1", "runtime.gdestroy", "runtime.mstart",
			"runtime.mstart0", "runtime.mstart1", "runtime.sysmon", "runtime.retake",
			"runtime.preemptone", "runtime.Gosched", "runtime.exitsyscall0",
			"runtime.asyncPreempt", "runtime.asyncPreempt2",
		},
	},
	{
		Name: "gc", Mechanism: true,
		Holds: "the garbage collector: background and assist marking, write barriers while it marks, sweeping, scavenging, stopping the world",
		Funcs: []string{
			"runtime.greyobject", "runtime.bgsweep", "runtime.bgscavenge",
			"runtime.sweepone", "runtime.deductSweepCredit", "runtime.stopTheWorldWithSema",
			"runtime.startTheWorldWithSema", "runtime.forEachP", "runtime.finishsweep_m",
			"runtime.wbBufFlush", "runtime.wbBufFlush1",
		},
		Prefixes: []string{
			"runtime.gc", "runtime.(*gc", "runtime.scan", "runtime.markroot",
			"runtime.(*sweepLocked).", "runtime.(*scavengerState).", "runtime.(*spanQueue).",
			"runtime.(*mheap).reclaim", "runtime.(*pageAlloc).scavenge", "runtime.(*wbBuf).",
			"runtime.bulkBarrier", "runtime.tryDeferToSpanScan",
		},
	},
}

// Categories returns the categories in table order, Other last.
func Categories() []Category {
	out := make([]Category, 0, len(categories)+1)
	for _, c := range categories {
		c.Funcs = append([]string(nil), c.Funcs...)
		c.Prefixes = append([]string(nil), c.Prefixes...)
		c.Weak = append([]string(nil), c.Weak...)
		out = append(out, c)
	}
	return append(out, Category{Name: Other, Holds: otherHolds})
}

const otherHolds = "stacks no rule claims: the profiler and the /debug/pprof handler serving it, runtime helpers with no named caller, a stack the profiler could not walk"

// CategoryNames returns the names of Categories in order.
func CategoryNames() []string {
	cs := Categories()
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return names
}

// Classify names the category of one stack, given as function names from
// the leaf (where the sample was taken) towards the root. The leaf-most
// frame that a rule claims decides, so a mechanism wins over the code that
// called it (the channel send, not the store that sent), and code wins over
// a mechanism that called it back (the spin, not the sync.WaitGroup.Go that
// started its goroutine). The one exception is a Weak frame — the runtime's
// own lock — which goes to the first mechanism found above it, if any is
// found before code: a channel's internal lock is part of the channel.
// A stack no rule claims is Other.
func Classify(stack []string) string {
	weak := ""
	for _, fn := range stack {
		c, how := match(fn)
		switch {
		case how == weakRule:
			weak = cmp.Or(weak, c.Name)
		case how == strongRule && c.Mechanism:
			return c.Name
		case how == strongRule:
			return cmp.Or(weak, c.Name)
		}
	}
	return cmp.Or(weak, Other)
}

type matchKind int

const (
	noRule matchKind = iota
	weakRule
	strongRule
)

// match finds the first row (in table order) whose rules match fn, and how.
func match(fn string) (Category, matchKind) {
	fn = baseName(fn)
	for _, c := range categories {
		if slices.Contains(c.Funcs, fn) || hasAnyPrefix(fn, c.Prefixes) {
			return c, strongRule
		}
		if slices.Contains(c.Weak, fn) {
			return c, weakRule
		}
	}
	return Category{}, noRule
}

func hasAnyPrefix(s string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s, p) })
}

// baseName drops what varies between builds of the same function: the type
// arguments of a generic ("[...]" or spelled out) and closure suffixes
// (".func1", ".func2.1", ".gowrap1"), so that a rule naming F matches F's
// closures too.
func baseName(fn string) string {
	if i := strings.IndexByte(fn, '['); i >= 0 {
		if j := strings.LastIndexByte(fn, ']'); j > i {
			fn = fn[:i] + fn[j+1:]
		}
	}
	for {
		i := strings.LastIndexByte(fn, '.')
		if i < 0 {
			return fn
		}
		last := fn[i+1:]
		switch {
		case isDigits(last):
		case strings.HasPrefix(last, "func") && isDigits(last[len("func"):]):
		case strings.HasPrefix(last, "gowrap") && isDigits(last[len("gowrap"):]):
		case strings.HasPrefix(last, "deferwrap") && isDigits(last[len("deferwrap"):]):
		default:
			return fn
		}
		fn = fn[:i]
	}
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
