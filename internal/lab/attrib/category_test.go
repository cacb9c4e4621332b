package attrib

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Frames as Go 1.26's profiles name them, generics spelled out.
const (
	workSpin   = "github.com/locklab/locklab/internal/work.spin"
	workApply  = "github.com/locklab/locklab/internal/work.(*Machine[go.shape.struct { Op github.com/locklab/locklab/workload.CounterOp; Delta int64 },go.shape.int64]).Apply"
	storeDo    = "github.com/locklab/locklab/store.(*facade[go.shape.struct { Op github.com/locklab/locklab/workload.CounterOp; Delta int64 },go.shape.int64]).Do"
	ownerRun   = "github.com/locklab/locklab/store.(*inputQEngine).run"
	handler    = "github.com/locklab/locklab/server.(*counterService).Increment"
	genHandler = "github.com/locklab/locklab/proto/locklab/v1._CounterService_Increment_Handler"
	processRPC = "google.golang.org/grpc.(*Server).processRPC"
	handleStrm = "google.golang.org/grpc.(*Server).handleStream"
	serveFunc  = "google.golang.org/grpc.(*Server).serveStreams.func2.1"
	loopyRun   = "google.golang.org/grpc/internal/transport.(*loopyWriter).run"
	protoMarsh = "google.golang.org/protobuf/proto.MarshalOptions.marshal"
)

// rpc is the bottom of a server handler goroutine's stack, leaf first.
var rpc = []string{handler, genHandler, processRPC, handleStrm, serveFunc}

func stack(frames ...any) []string {
	var s []string
	for _, f := range frames {
		switch f := f.(type) {
		case string:
			s = append(s, f)
		case []string:
			s = append(s, f...)
		}
	}
	return s
}

type classifyCase struct {
	name  string
	stack []string
	want  string
}

// classifyCases are stacks, leaf first, with the category each must land
// in: every category has at least one (TestEveryCategoryHasACase), and the
// precedence rules each have one that would fail under the other order.
var classifyCases = []classifyCase{
	{"the spin inside Apply", stack(workSpin, "github.com/locklab/locklab/internal/work.Spinner.Spin", workApply, storeDo, rpc), "store"},
	{"the spin in a profile recorded before work moved to internal/", stack("github.com/locklab/locklab/work.spin", "github.com/locklab/locklab/work.Spinner.Spin", rpc), "store"},
	{"the write-ahead log's encoding", stack("github.com/locklab/locklab/server/internal/wal.(*Log).Append", "github.com/locklab/locklab/server/internal/durable.(*Machine[go.shape.int64,go.shape.int64]).Apply", storeDo, rpc), "store"},
	{"the spin on the owner goroutine", stack(workSpin, workApply, ownerRun), "store"},
	{"a closure of the store", stack("github.com/locklab/locklab/store.(*mutexEngine).exec.func1", storeDo, rpc), "store"},
	{"code wins over a mechanism that called it back", stack(workSpin, workApply, storeDo, "sync.(*WaitGroup).Go.func1"), "store"},
	{"the handler itself", stack(rpc), "server"},
	{"the metrics interceptor", stack("github.com/prometheus/client_golang/prometheus.(*histogram).Observe", "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus.(*ServerMetrics).UnaryServerInterceptor.func1", processRPC, handleStrm), "server"},
	{"the handler's allocation", stack("runtime.mallocgc", "runtime.newobject", rpc), "server"},
	{"gRPC's own code", stack(processRPC, handleStrm, serveFunc), "grpc"},
	{"HPACK", stack("runtime.memmove", "golang.org/x/net/http2/hpack.(*Encoder).WriteField", loopyRun), "grpc"},
	{"HTTP/2 framing", stack("golang.org/x/net/http2.(*Framer).ReadFrame", "google.golang.org/grpc/internal/transport.(*http2Server).HandleStreams"), "grpc"},
	{"protobuf under gRPC", stack(protoMarsh, "google.golang.org/grpc/encoding/proto.(*codecV2).Marshal", processRPC), "protobuf"},
	{"allocation goes to the code that allocates", stack("runtime.nextFreeFast", "runtime.mallocgc", protoMarsh, processRPC), "protobuf"},
	{"generated message code", stack("github.com/locklab/locklab/proto/locklab/v1.(*IncrementRequest).ProtoReflect", protoMarsh), "protobuf"},
	{"a socket write and its kernel time", stack("internal/runtime/syscall/linux.Syscall6", "syscall.RawSyscall6", "syscall.Syscall", "syscall.write", "syscall.Write", "internal/poll.(*FD).Write", "net.(*conn).Write", loopyRun), "syscalls"},
	{"the runtime's bookkeeping around a syscall", stack("runtime.exitsyscall", "syscall.Syscall", "syscall.write"), "syscalls"},
	{"the network poller, though the scheduler called it", stack("internal/runtime/syscall/linux.EpollWait", "runtime.netpoll", "runtime.findRunnable", "runtime.schedule", "runtime.park_m", "runtime.mcall"), "syscalls"},
	{"a channel send", stack("runtime.chansend", "runtime.chansend1", storeDo, rpc), "channels"},
	{"the owner's select", stack("runtime.selectgo", "github.com/locklab/locklab/store.(*mailbox).next", ownerRun), "channels"},
	{"a channel's own lock stays with the channel", stack("runtime.lock2", "runtime.lockWithRank", "runtime.lock", "runtime.chansend", storeDo), "channels"},
	{"the wake-up a send causes is the scheduler's", stack("runtime.futex", "runtime.futexwakeup", "runtime.notewakeup", "runtime.startm", "runtime.wakep", "runtime.ready", "runtime.goready.func1", "runtime.systemstack", "runtime.goready", "runtime.send", "runtime.chansend", storeDo), "scheduler"},
	{"a mutex's fast path", stack("internal/sync.(*Mutex).Lock", "sync.(*Mutex).Lock", "github.com/locklab/locklab/store.(*mutexEngine).exec", storeDo, rpc), "locks"},
	{"a mutex's spinning", stack("runtime.procyield", "internal/sync.(*Mutex).lockSlow", "internal/sync.(*Mutex).Lock", "sync.(*Mutex).Lock", storeDo), "locks"},
	{"a mutex's semaphore", stack("runtime.lock2", "runtime.semacquire1", "internal/sync.runtime_SemacquireMutex", "internal/sync.(*Mutex).lockSlow", storeDo), "locks"},
	{"the runtime's lock under code no mechanism names", stack("runtime.unlock2", "runtime.unlockWithRank", "runtime.unlock", "runtime.(*timer).stop", "time.(*Timer).Stop", loopyRun), "locks"},
	{"the runtime's lock alone", stack("runtime.lock2"), "locks"},
	{"parking", stack("runtime.gopark", "runtime.chanrecv", "runtime.chanrecv1", storeDo), "scheduler"},
	{"finding work on g0", stack("runtime.(*timers).check", "runtime.findRunnable", "runtime.schedule", "runtime.park_m", "runtime.mcall"), "scheduler"},
	{"the scheduler's lock is the scheduler's", stack("runtime.lock2", "runtime.lockWithRank", "runtime.lock", "runtime.findRunnable", "runtime.schedule"), "scheduler"},
	{"a preemption", stack("runtime.asyncPreempt", "internal/sync.(*Mutex).Lock", "sync.(*Mutex).Lock", storeDo), "scheduler"},
	{"a mark worker", stack("runtime.scanobject", "runtime.gcDrain", "runtime.gcDrainMarkWorkerFractional", "runtime.gcBgMarkWorker.func2", "runtime.systemstack", "runtime.gcBgMarkWorker"), "gc"},
	{"a mark assist inside an allocation", stack("runtime.scanblock", "runtime.gcDrainN", "runtime.gcAssistAlloc1", "runtime.gcAssistAlloc", "runtime.mallocgc", protoMarsh, processRPC), "gc"},
	{"the GC's semaphore is the GC's", stack("runtime.lock2", "runtime.semacquire1", "runtime.semacquire", "runtime.gcMarkDone", "runtime.gcAssistAlloc", "runtime.mallocgc", processRPC), "gc"},
	{"sweeping to allocate", stack("runtime.(*sweepLocked).sweep", "runtime.sweepone", "runtime.deductSweepCredit", "runtime.(*mcentral).cacheSpan", "runtime.mallocgc", storeDo), "gc"},
	{"a write barrier while marking", stack("runtime.(*wbBuf).get2", "runtime.bulkBarrierPreWrite", "runtime.typedslicecopy", "golang.org/x/net/http2/hpack.(*dynamicTable).add"), "gc"},
	{"the profiler", stack("runtime/pprof.(*profileBuilder).addCPUData", "runtime/pprof.profileWriter"), Other},
	{"a runtime helper with no named caller", stack("runtime.nanotime1"), Other},
	{"an empty stack", nil, Other},
}

func TestClassify(t *testing.T) {
	for _, tt := range classifyCases {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Classify(tt.stack), "%v", tt.stack)
		})
	}
}

func TestEveryCategoryHasACase(t *testing.T) {
	for _, name := range CategoryNames() {
		assert.True(t, slices.ContainsFunc(classifyCases, func(c classifyCase) bool { return c.want == name }),
			"no Classify case lands in %q", name)
	}
}

// Every rule of the table, alone on a stack, lands in its own category: no
// row's rule is shadowed by an earlier row's.
func TestEveryRuleReachesItsCategory(t *testing.T) {
	for _, c := range Categories() {
		for _, f := range slices.Concat(c.Funcs, c.Weak) {
			assert.Equal(t, c.Name, Classify([]string{f}), "function %s", f)
		}
		for _, p := range c.Prefixes {
			fn := p + "X"
			if strings.HasSuffix(p, "/") {
				fn = p + "x.F"
			}
			assert.Equal(t, c.Name, Classify([]string{fn}), "prefix %s", p)
		}
	}
}

func TestCategoriesDeclaredOnce(t *testing.T) {
	cs := Categories()
	names := CategoryNames()
	require.Len(t, names, len(cs))
	assert.Equal(t, Other, names[len(names)-1], "Other comes last")
	for i, c := range cs {
		assert.Equal(t, c.Name, names[i])
		assert.NotEmpty(t, c.Holds, "%s says what it holds", c.Name)
		assert.Equal(t, 1, countOf(names, c.Name), "%s is one row", c.Name)
	}
	// Categories hands out copies: a caller cannot change the rules.
	cs[0].Prefixes[0] = "mutated."
	assert.NotEqual(t, "mutated.", Categories()[0].Prefixes[0])
}

func countOf(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

func TestBaseName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"runtime.chansend", "runtime.chansend"},
		{"runtime.chansend.func1", "runtime.chansend"},
		{"runtime.goready.func1", "runtime.goready"},
		{"google.golang.org/grpc.(*Server).serveStreams.func2.1", "google.golang.org/grpc.(*Server).serveStreams"},
		{"main.run.gowrap1", "main.run"},
		{"main.run.deferwrap2", "main.run"},
		{storeDo, "github.com/locklab/locklab/store.(*facade).Do"},
		{"github.com/locklab/locklab/store.(*facade[...]).Do", "github.com/locklab/locklab/store.(*facade).Do"},
		{"pkg.funcName", "pkg.funcName"},
		{"gopkg.in/yaml.v3.Marshal", "gopkg.in/yaml.v3.Marshal"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, baseName(tt.in), tt.in)
	}
}
