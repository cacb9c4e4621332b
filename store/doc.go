// Package store makes a sequential state machine safe to call from many
// goroutines, with one of several concurrency designs behind one interface.
//
// A workload is written once as a plain [Machine]: no locks, no goroutines,
// easy to test. A design wraps it:
//
//   - [Mutex] holds a sync.Mutex around every Apply.
//   - [InputQ] starts one owner goroutine that alone touches the machine and
//     serialises commands arriving on a bounded channel (the "inputQ" or
//     single-writer design).
//
// Both satisfy [Store] and pass the same contract tests, so a caller (or a
// benchmark) switches design by changing one constructor.
//
// Commands are values — small structs holding an op code and its arguments —
// never closures. That keeps every design on the same calling convention, avoids
// a heap allocation per command, and lets later designs log, replay or batch
// commands.
//
// Results must not alias the machine's state: Apply returns values or fresh
// copies, because the caller reads them after the design has released the
// machine (after Unlock, or after the owner has moved on to the next command).
//
// This package uses the standard library only.
package store
