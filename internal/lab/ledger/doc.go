// Package ledger says where each call's time went: it reads the Go
// runtime's execution trace of a server (runtime/trace's format, as
// /debug/pprof/trace serves it; read with golang.org/x/exp/trace) and puts
// every call's time, from the handler's first interceptor to its return, in
// a small fixed set of states — running, runnable, blocked on a channel,
// blocked on a lock, in a system call or the network poller, the garbage
// collector's, other waits — with what the trace cannot place shown as
// unattributed.
//
// A CPU profile (package attrib) says where the server's CPU went; it
// cannot see time spent not running. An owner design's caller spends most
// of a call waiting for the owner, a lock design's caller waiting for the
// lock under contention, and both wait for a P when callers outnumber
// CPUs: that is the time this ledger counts.
//
// # Calls
//
// The server marks every call with a region of type calltrace.Region on
// the handler's goroutine (package server/calltrace), only while a trace is
// being taken. Read sweeps the trace in time order, keeps each goroutine's
// state (and whether it is in a GC mark assist, and whether the world is
// stopped), and adds the time between two events of a goroutine inside a
// call to the call's category for the state it had. A call's categories
// add up to its whole time. Calls cut by the trace's start or end are
// counted apart (Ledger.Partial) and left out.
//
// The ledger is the handler goroutine's view. An owner design's owner runs
// the call's command on another goroutine; the caller's ledger shows that
// as time blocked on a channel, and the store's own clocks (mailbox age,
// batch size) say how much of it was queueing. The reply's encoding and
// write, after the handler returns, are outside the call.
//
// # The categories
//
// Categories is the one table; Classify is the one mapping from a
// goroutine's state and wait reason (the runtime's own strings) to a row
// of it. Summarize gives, per category, the median and 99th percentile
// over calls, and the mean breakdown of the calls around the median, of
// those around the 99th percentile, and of the tail above it.
//
// # Checked against known answers
//
// The package's tests run a real server on loopback, traced in-process,
// with the server's -work inside the critical section: spun, it lands in
// running; slept, in other waits; slept under a lock four callers share,
// the rest of a call is blocked on the lock; spun by an owner, the caller
// is blocked on a channel. A control reads the same traces with every
// state moved to the next category, and every check fails.
package ledger
