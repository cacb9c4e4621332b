// Package storetest checks and benchmarks a state machine under every
// design of package store, the way testing/fstest checks a file system: one
// call against the whole contract.
//
// A user of store writes a plain sequential [store.Machine] and wants two
// answers: is it safe under every design, and which design is fastest for
// its commands at its parallelism? [Check] answers the first and
// [Benchmark] the second:
//
//	func TestMachine(t *testing.T) {
//		storetest.Check(t, newMachine, gen)
//	}
//
//	func BenchmarkMachine(b *testing.B) {
//		storetest.Benchmark(b, newMachine, gen)
//	}
//
// where newMachine returns a fresh machine and gen draws a random command.
// `go run github.com/locklab/locklab/cmd/storeverdict rounds -verdict
// ./yourpkg` then runs rounds of the benchmark, each design of a round in
// its own go test in an order drawn per round, notes what else took the
// machine's CPU, and compares the designs on the user's own machine,
// paired round by round as the lab pairs its blocks (docs/storetest.md).
//
// Check needs no model of the machine: the machine is its own
// specification. It gives each design a recording machine that notes, on
// one logical clock shared with the callers, when every Apply began and
// ended and what it returned. From that record it checks that Apply calls
// never overlapped where the machine forbids it (it may declare reads with
// [store.ReadOnly] or shards with [store.Sharded]); that replaying the
// applies in the order they ran on a fresh machine gives the same answers;
// and that every caller's answer is exactly what one Apply of its command,
// made during its call, returned. Together these make the history
// linearizable. The atomic design's Apply calls overlap by contract, so for
// it the order is searched for instead: depth first, over the orders the
// record allows, each tried on a machine rebuilt by replay or, faster, on
// copies the [Clone] option makes. See docs/storetest.md for what this
// proves and what it cannot.
//
// Every search is bounded: past [SearchBudget] calls to Apply the check
// fails with [ErrInconclusive], saying how far it got, rather than run on.
// Every wait is bounded too, by the calls themselves: a call to Do or Close
// is declared hung once it has run [HangFactor] times longer than the
// slowest call the check has seen complete, or [HangAfter] (a second by
// default) if that is longer, and the check fails with [ErrHang]. Each check
// is a subtest of its own that fails as soon as it ends and logs the time it
// took, so a forbidden overlap is reported within seconds even when a later
// check finds a design that never answers. [Results] yields the same
// results one by one outside a test; [Verify] gathers them into one error.
//
// Options add what the machine's methods do not say ([ReadOnly], [Shards],
// [Clone], [Equal]), choose designs ([Designs]) or add a design of one's own
// beside the registry's ([Store]), size the run ([Calls], [Seed], [Pars],
// [BenchCommands]) and bound its waits and searches ([HangAfter],
// [SearchBudget]).
package storetest
