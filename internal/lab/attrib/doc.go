// Package attrib says where a server's CPU went: it folds a CPU profile
// (as /debug/pprof/profile serves it, read with github.com/google/pprof's
// profile package) into a small fixed set of categories — the store, the
// server around it, gRPC and HTTP/2, protobuf, system calls, channels,
// locks, the scheduler, the garbage collector, and other — and divides them
// by the calls served over the same window: microseconds of CPU per call,
// per category. Two designs' costs per call then differ category by
// category, which says why one costs more, not only by how much.
//
// # The categories
//
// Categories is the one table: each row a name, a line saying what it
// holds, and its rules — whole function names and name prefixes (a package
// path, a method set) matched against a sample's frames. Everything that
// lists categories ranges over it.
//
// # Which frame decides
//
// A sample is a stack; many of its frames match some rule. Classify walks
// it from the leaf, where the CPU was being spent, towards the root, and
// the first frame a rule claims decides. Mechanisms — a channel send, a
// lock, a park or a wake-up, a system call, a GC assist — are called by
// code, so they sit nearer the leaf and win over the code that asked for
// them: a mutex design's Lock counts as locks, not as store, and the write
// under gRPC's loopy writer counts as syscalls, not as gRPC. That is the
// question the designs differ on: the same store code costs more under one
// design because it hands commands over a channel and wakes goroutines,
// not because its own instructions are slower. It cuts the other way too:
// code a mechanism calls back (a goroutine started by sync.WaitGroup.Go)
// belongs to that code. Frames no rule names — the allocator, memmove,
// stack growth — go to the nearest named caller, so the allocations
// protobuf makes are protobuf's.
//
// One exception: the runtime's own lock and semaphores serve every
// mechanism, so they are weak rules. They count as locks only when no
// mechanism is found above them before code is: a channel's internal lock
// is part of the channel, the scheduler's is part of the scheduler, and
// sync.Mutex reaches the semaphore through functions the locks row names.
//
// Kernel time is in the profile: Go's profiler samples each thread's CPU
// clock, which counts time in system calls, and a sample taken then has
// the system call at its leaf. So syscalls holds the kernel's part of a
// socket write as well as the runtime's.
//
// # Reading a breakdown
//
// The profile covers the whole process: the /debug/pprof handler serving
// it (other) and the Prometheus metrics that a server with -metrics-addr,
// the flag that serves /debug/pprof, records on every call (server). The
// profiler takes 100
// samples per second of CPU, so a category's figure is a count of samples:
// a category with a few dozen samples over a window is known to tens of
// percent, one with thousands to a few percent. Compare categories of runs
// with enough samples, and compare per call, not per second.
//
// A sample is taken at the kernel's next clock tick after a thread's CPU
// timer expires, so it can land up to a tick (a few milliseconds) later in
// that thread's run than the CPU it counts. Where code alternates at a finer
// grain than the tick in no fixed pattern, as an RPC server's calls of tens
// of microseconds do, that shifts little between categories; where a short
// burst always comes just before a long stretch — a goroutine woken, then a
// long Apply — the burst's samples lean into the stretch, and the known-
// answer test below shows it as the store a few percent above its own
// clock.
//
// A CPU profile shows CPU, not waiting: a design whose commands wait for the
// owner shows that wait in the runtime trace and in the scheduling latency,
// here only as the CPU the parking and waking cost.
//
// # System calls per call
//
// ReadIO reads a process's count of read and write system calls from
// /proc/PID/io; two readings around a window, divided by the calls served
// (IO.PerCall), give the writes per RPC — fewer when a server batches
// responses into one write. The runtime counts no system calls itself, and
// the kernel's counters need no tracing, cost nothing, and count every
// write(2) Go makes on a socket (and the few the runtime makes to wake its
// network poller, so the figure is a ceiling on socket writes).
//
// # Checked against a known answer
//
// The package's tests profile a store (mutex and inputQ) in-process while
// every command spins a calibrated amount of CPU inside Apply (package
// work, as the server's -work does), and check that the spins' own CPU
// lands in store within 20%; a control moves the same spin into the caller,
// and the check fails while the cost moves to the caller's category.
package attrib
