// Package store makes a sequential state machine safe to call from many
// goroutines, with one of several concurrency designs behind one interface.
//
// A workload is written once as a plain [Machine]: no locks, no goroutines,
// easy to test. A design wraps it. The designs are the rows of one registry
// ([Designs]); [New] builds any of them by name:
//
//   - mutex: a sync.Mutex around every Apply ([NewMutex]).
//   - rwmutex: commands that only read share an RLock.
//   - sharded: one lock per shard; a two-shard command locks both in order.
//   - atomic: the machine's own lock-free Apply; no lock, no goroutine.
//   - inputQ: one owner goroutine alone touches the machine and serialises
//     commands arriving on a bounded channel, the "inputQ" or single-writer
//     design ([NewInputQ]).
//   - inputQ-batch: one owner that drains many queued commands per wake-up,
//     applies them, commits once and answers them all.
//   - inputQ-spin: one owner, locked to an OS thread, that polls a lock-free
//     queue for a bounded time (Config.SpinBudget) before it parks, so that
//     under load no command waits for its wake-up.
//   - sharded-inputQ: one owner per shard; a two-shard command travels up the
//     owners in shard order.
//   - combining: flat combining; callers publish commands and whoever takes
//     the lock applies all of them.
//   - db-rowlock: nothing in the process; every command is a database
//     transaction of its own ([Transactional]) and the database's row locks
//     order them. It serves only a machine whose state is in a database.
//
// Every design satisfies [Store] and passes the same contract tests, so a
// caller (or a benchmark) switches design by changing one name.
//
// Some designs need more of a machine than Apply: which commands only read
// ([ReadOnly]), how the state splits into shards ([Sharded]), a lock-free
// Apply ([Atomic]), a transaction per command ([Transactional]). A machine declares these by implementing small
// interfaces; [New] refuses a design whose needs the machine does not meet
// with [ErrUnsupported]. A machine that implements [Committer] is durable:
// designs commit before they answer, the lock designs once per command, the
// batching ones (inputQ-batch, combining) once per batch.
//
// Commands are values — small structs holding an op code and its arguments —
// never closures. That keeps every design on the same calling convention, avoids
// a heap allocation per command, and lets designs log, replay or batch
// commands. Inside, every design is an engine with the command types erased,
// behind one generic façade that owns the typed parts; so a design is one
// file plus one registry row, and all of them are reached through the same
// code.
//
// Every design's store also reports how busy its serial resource was — the
// lock, a shard's lock, the owner goroutine, the combiner's role — through
// [SerialReporter], when made with Config.MeasureSerial: the serial demand
// that bounds throughput whatever the core count. An owner design made with
// Config.RejectWhenFull refuses a command with [ErrOverloaded] when its
// queue is full, instead of waiting for room.
//
// Results must not alias the machine's state: Apply returns values or fresh
// copies, because the caller reads them after the design has released the
// machine (after Unlock, or after the owner has moved on to the next command).
//
// This package uses the standard library only.
package store
