package study

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// Engine says what runs a study's plans.
type Engine string

const (
	// Runner: cmd/compare's comparison, once per plan.
	Runner Engine = "runner"
	// Capacity: cmd/compare's capacity search (the highest rate each
	// design serves within an objective), once per plan.
	Capacity Engine = "capacity"
	// Seed: the runner's plans, if any, then cmd/seeds (SeedArgs), which
	// renders the seed's own table and, for the seeds ghz drives, runs them.
	Seed Engine = "seed"
)

// Engines are the engines, in the order the listing names them.
var Engines = []Engine{Runner, Capacity, Seed}

// Dir is where every study writes, relative to the repository's root.
const Dir = "docs/results"

// A Plan is one run of the engine: its arguments as the runner takes them
// (go run ./cmd/compare -h) and the sub-folder of the study's folder it
// writes ("" the folder itself).
type Plan struct {
	Sub  string
	Args string
}

// A Study is one row of the catalogue.
type Study struct {
	Name   string
	Engine Engine
	Plans  []Plan
	// SeedArgs are cmd/seeds' arguments, run after the plans (Engine
	// Seed only). {out} stands for the study's folder, {server} for the
	// server binary the runner was given.
	SeedArgs string
	Out      string        // the folder under Dir
	Budget   time.Duration // the most its runs may take by the runner's estimate; 0: none is estimated
	Burst    bool          // the plans run beside a bursty background load (scripts/burst.sh)
	Desc     string        // one line: what it measures
}

// duetMethod is the duet-method study's comparison: inputQ against mutex on
// the counter, the Go driver at 10 callers and h2load at 100, side by side
// for a fixed 20 rounds. Its plans ran under equal quotas when those were
// the default; the ones that did ask for them, so that run again they
// measure what they measured (weight/ against group/ among them).
const duetMethod = "-measure duet -workloads counter -driver go,h2load -vus 10 -h2load-vus 100 -modes mutex,inputQ -reps 20 -precision 0"

// isolatedCounter is duetMethod's comparison isolated, for 10 blocks: the
// reference the duet-method and sched studies set their side-by-side
// figures beside.
const isolatedCounter = "-measure isolated -workloads counter -driver go,h2load -vus 10 -h2load-vus 100 -modes mutex,inputQ -reps 10"

// windowH2load and windowGo are the window study's groups: the default
// groups' arms under each driver, h2load on the counter at 100 callers and
// the Go driver on the counter and the bank at 10 and 100.
const (
	windowH2load = "-measure duet -workloads counter -driver h2load -h2load-vus 100"
	windowGo     = "-measure duet -workloads counter,bank-A -driver go -vus 10,100"
)

// alternated is how a study that sets two ways of running side by side
// against each other runs the default plan for each: 12 rounds, no more,
// and the setting that follows.
const alternated = "-reps 12 -precision 0 "

// sliceRuns and schedRuns are the slice studies' and sched-alt's runs of
// the default plan, each before the value of its setting.
const (
	sliceRuns = alternated + "-duet-slice "
	schedRuns = alternated + "-duet-sched "
)

// twiceEach is the plans of a study that sets two values of one setting
// against each other: run (which ends where the value goes) with the
// first, then the second, twice, in alternation, so that the hour's drift
// falls on both alike; each plan's folder is its value and its turn
// (kernel-1, 12ms-1, kernel-2, 12ms-2).
func twiceEach(run, first, second string) []Plan {
	var plans []Plan
	for turn := 1; turn <= 2; turn++ {
		for _, v := range []string{first, second} {
			plans = append(plans, Plan{Sub: fmt.Sprintf("%s-%d", v, turn), Args: run + v})
		}
	}
	return plans
}

// slice100 is the slice-100 study's question: the counter's inputQ
// against the mutex at 100 callers under the Go driver and h2load.
const slice100 = "-workloads counter -driver go,h2load -vus 100 -h2load-vus 100 -modes mutex,inputQ"

// sliceDB is the slice-db study's plan: bank-db's arms at one pool and
// one caller count, 4-s rounds as bank-db's.
const sliceDB = "-measure duet -workloads bank-A -driver go -backend mysql -db-pool 9 -vus 10 -modes all -duet-metrics calls/s,CPU/call,p99 -duration 4s -reps 8 -precision 0"

// knownAnswer is the known-answer study's plan: the baseline, its twin and
// the baseline with a known spin, side by side, the Go driver at 10
// callers and h2load at 100, for a fixed 20 rounds.
const knownAnswer = "-measure duet -workloads counter -driver go,h2load -vus 10 -h2load-vus 100 -modes mutex -reps 20 -precision 0"

// knownSpins are the known-answer plan at each spin the studies of the
// known answer measure, each with then (which may be empty) after its
// spin; each plan's folder is its spin.
func knownSpins(then string) []Plan {
	var plans []Plan
	for _, spin := range []string{"500ns", "2us", "8us"} {
		plans = append(plans, Plan{Sub: spin, Args: knownAnswer + " -known " + spin + then})
	}
	return plans
}

// Studies is the catalogue: every study, one row each. `make study
// NAME=...` and `go run ./cmd/compare -study NAME` run a row; the listing,
// make help, the index of docs/results/README.md and the budget test read
// this table.
var Studies = []Study{
	{
		Name: "default", Engine: Runner, Plans: []Plan{{}}, Out: "default", Budget: 8 * time.Minute,
		Desc: "the main job's defaults through the validity gate, with the A/A control (`make compare` runs the same plan into results/)",
	},
	{
		Name: "busy", Engine: Runner, Plans: []Plan{{Args: "-workloads counter -driver h2load"}}, Out: "busy", Budget: 6 * time.Minute, Burst: true,
		Desc: "the counter with h2load beside a bursty background load on every CPU: what the validity gate does with it",
	},
	{
		Name: "duet-method", Engine: Runner, Out: "duet-method", Budget: 19 * time.Minute,
		Plans: []Plan{
			{Sub: "group", Args: duetMethod + " -duet-cpu quota"},
			{Sub: "pairs", Args: duetMethod + " -duet-cpu quota -aa=false -known 0"},
			{Sub: "no-quota", Args: duetMethod + " -duet-cpu none"},
			{Sub: "weight", Args: duetMethod + " -duet-cpu weight"},
			{Sub: "known-10us", Args: duetMethod + " -duet-cpu weight -known 10us"},
			{Sub: "window-500ms", Args: duetMethod + " -duet-cpu quota -duration 500ms"},
			{Sub: "window-2s", Args: duetMethod + " -duet-cpu quota -duration 2s -reps 10"},
			{Sub: "isolated", Args: isolatedCounter},
		},
		Desc: "how side-by-side rounds are run: equal weights against equal quotas and no CPU groups, every arm at once against a pair, three round lengths, and the same comparison isolated",
	},
	{
		Name: "known-answer", Engine: Runner, Out: "known-answer", Budget: 17 * time.Minute,
		Plans: append(knownSpins(""),
			Plan{Sub: "quota-2us", Args: knownAnswer + " -known 2us -duet-cpu quota"},
			// The baseline and the known arm alone, at both drivers and both
			// loads: whether the spin reads its size when no other arm shares
			// the CPU, and where it does not.
			Plan{Sub: "pair-2us", Args: "-measure duet -workloads counter -driver go,h2load -vus 10,100 -h2load-vus 10,100 -modes mutex -aa=false -reps 20 -precision 0 -known 2us"},
		),
		Desc: "the known-answer arm at three spins and under quotas: how much CPU per call a known spin adds side by side, and its wake-ups per call and per second; and the baseline and the known arm alone, at 10 and 100 callers of each driver",
	},
	// known-batch asks how the known spin's excess side by side grows with
	// the spin, under SCHED_BATCH, whose narrow intervals show it: in
	// proportion to the spin (a share of each server's CPU paid by the
	// second, which an arm serving fewer calls spreads over fewer) or by
	// about as much whatever its size (a cost of serving more slowly).
	{
		Name: "known-batch", Engine: Runner, Out: "known-batch", Budget: 12 * time.Minute,
		Plans: knownSpins(" -duet-sched batch"),
		Desc:  "the known-answer arm at three spins under SCHED_BATCH, whose narrow intervals show how a spin's excess side by side grows with its size: in proportion, or by about as much at every size",
	},
	// known-isolated is the known answer one run after another: the
	// baseline with and without the 2 µs spin in every block, beside the
	// side-by-side figures of known-answer and default.
	{
		Name: "known-isolated", Engine: Runner, Out: "known-isolated", Budget: 9 * time.Minute,
		Plans: []Plan{{Args: "-measure isolated -workloads counter -driver go,h2load -vus 10 -h2load-vus 100 -modes mutex -call-work 0,2us -reps 20 -precision 0"}},
		Desc:  "the known-answer spin isolated: the baseline with and without 2 µs spun in every call, in the same blocks, at 10 Go callers and 100 h2load callers, with the A/A control",
	},
	// window measures a round's window for each driver at equal time (a
	// round took about 0.8 s more than its window when it was set; a Go
	// round, ended once its window is read, now takes about 0.5 s more):
	// 40 rounds of 1 s, 27 of 2 s and 16 of 4 s under h2load; 30 of 1 s,
	// 20 of 2 s and 14 of 3 s under the Go driver, in every Go-driven
	// group of the default plan.
	{
		Name: "window", Engine: Runner, Out: "window", Budget: 19 * time.Minute,
		Plans: []Plan{
			{Sub: "h2load-1s", Args: windowH2load + " -reps 40 -precision 0 -duration 1s"},
			{Sub: "h2load-2s", Args: windowH2load + " -reps 27 -precision 0 -duration 2s"},
			{Sub: "h2load-4s", Args: windowH2load + " -reps 16 -precision 0 -duration 4s"},
			{Sub: "go-1s", Args: windowGo + " -reps 30 -precision 0 -duration 1s"},
			{Sub: "go-2s", Args: windowGo + " -reps 20 -precision 0 -duration 2s"},
			{Sub: "go-3s", Args: windowGo + " -reps 14 -precision 0 -duration 3s"},
		},
		Desc: "a side-by-side round's window for each driver, for the same time: 1-s, 2-s and 4-s rounds under h2load, and 1-s, 2-s and 3-s rounds under the Go driver on the counter and the bank",
	},
	// noise-100 asks whose noise the 100-caller groups carry, the
	// noisiest of the default plan: the Go driver's and h2load's groups at
	// 100 callers on the counter, each with the same 2-s window, in the
	// same rounds of the same hour.
	{
		Name: "noise-100", Engine: Runner, Out: "noise-100", Budget: 6 * time.Minute,
		Plans: []Plan{{Args: "-measure duet -workloads counter -driver go,h2load -vus 100 -h2load-vus 100 -reps 30 -precision 0 -duration 2s"}},
		Desc:  "whose noise the 100-caller groups carry: the Go driver and h2load at 100 callers on the counter, each with a 2-s window, in the same rounds",
	},
	// slice measures the servers' scheduler slice side by side
	// (-duet-slice): the default plan with the kernel's own slice and with
	// every server's threads given 12 ms, twice each in alternation, so
	// that the hour's drift falls on both alike.
	{
		Name: "slice", Engine: Runner, Out: "slice", Budget: 15 * time.Minute,
		Plans: twiceEach(sliceRuns, "kernel", "12ms"),
		Desc:  "the servers' scheduler slice side by side: the default plan's five groups with the kernel's own slice and with every server's threads given 12 ms, 12 rounds each, twice in alternation",
	},
	// slice-length asks how long the servers' slice should be: the
	// default plan with slices from 3 ms to 24 ms and the kernel's own,
	// one run each, in an order that puts neither end of the scale first
	// or last.
	{
		Name: "slice-length", Engine: Runner, Out: "slice-length", Budget: 19 * time.Minute,
		Plans: []Plan{
			{Sub: "6ms", Args: sliceRuns + "6ms"},
			{Sub: "24ms", Args: sliceRuns + "24ms"},
			{Sub: "kernel", Args: sliceRuns + "kernel"},
			{Sub: "3ms", Args: sliceRuns + "3ms"},
			{Sub: "12ms", Args: sliceRuns + "12ms"},
		},
		Desc: "how long the servers' scheduler slice should be: the default plan's five groups with slices of 3, 6, 12 and 24 ms and the kernel's own, 12 rounds each",
	},
	// slice-100 asks where the two modes part at 100 callers: the
	// counter's inputQ against the mutex under h2load and the Go driver
	// at 100, isolated and side by side with the kernel's slice and with
	// 12 ms, in one hour.
	{
		Name: "slice-100", Engine: Runner, Out: "slice-100", Budget: 10 * time.Minute,
		Plans: []Plan{
			{Sub: "isolated", Args: "-measure isolated " + slice100 + " -reps 8"},
			{Sub: "kernel", Args: "-measure duet " + slice100 + " " + sliceRuns + "kernel"},
			{Sub: "12ms", Args: "-measure duet " + slice100 + " " + sliceRuns + "12ms"},
		},
		Desc: "where isolated and side-by-side runs part at 100 callers: the counter's inputQ against the mutex under h2load and the Go driver, isolated and side by side with the kernel's slice and with 12 ms, in one hour",
	},
	// slice-db asks what the servers' slice does over a database, where
	// ten arms each run a server and a private MariaDB on the one server
	// CPU and a call costs hundreds of microseconds: the bank at a pool
	// of 9 and 10 callers with every design, the kernel's own slice and
	// 12 ms, twice each in alternation.
	{
		Name: "slice-db", Engine: Runner, Out: "slice-db", Budget: 12 * time.Minute,
		Plans: twiceEach(sliceDB+" -duet-slice ", "kernel", "12ms"),
		Desc:  "the servers' scheduler slice over a database: the bank in MariaDB at a pool of 9 and 10 callers, every design, with the kernel's own slice and with 12 ms, 8 rounds each, twice in alternation",
	},
	// How a round's servers are scheduled: SCHED_BATCH or the kernel's
	// default (the lab's), for the same rounds of the default groups, and
	// the counter's two questions isolated in the same run, as the
	// reference for what a server costs alone.
	{
		Name: "sched", Engine: Runner, Out: "sched", Budget: 15 * time.Minute,
		Plans: []Plan{
			{Sub: "batch", Args: "-duet-sched batch -reps 20 -precision 0"},
			{Sub: "normal", Args: "-duet-sched normal -reps 20 -precision 0"},
			{Sub: "isolated", Args: isolatedCounter},
		},
		Desc: "how a side-by-side round's servers are scheduled: SCHED_BATCH, where a server woken by a call does not preempt another, against the kernel's default, and the same questions isolated",
	},
	// sched-alt asks whether SCHED_BATCH's narrower intervals in sched,
	// which ran batch and then the kernel's default, were the method's or
	// the hour's: the default plan each way, 12 rounds each, twice in
	// alternation, the kernel's first.
	{
		Name: "sched-alt", Engine: Runner, Out: "sched-alt", Budget: 15 * time.Minute,
		Plans: twiceEach(schedRuns, "normal", "batch"),
		Desc:  "SCHED_BATCH against the kernel's default scheduling for the servers side by side, the default plan's five groups for 12 rounds each, twice in alternation: whether batch's narrower intervals are the method's or the hour's",
	},
	// warmup asks how long a round's drivers should warm its fresh
	// servers before the window opens: the default plan with the
	// runner's 400 ms and with 1600 ms, twice each in alternation, so that
	// a process's first seconds, if they are its noisiest, show as the
	// narrower rounds of the longer warm-up, set against the rounds it
	// costs.
	{
		Name: "warmup", Engine: Runner, Out: "warmup", Budget: 18 * time.Minute,
		Plans: twiceEach(alternated+"-warmup ", "400ms", "1600ms"),
		Desc:  "how long a side-by-side round warms its fresh servers before the window: the default plan's five groups with a warm-up of 400 ms and of 1600 ms, 12 rounds each, twice in alternation",
	},
	// turns asks whether giving the server CPUs to one arm at a time, in
	// turns of a few milliseconds, removes side by side's excess on the
	// known spin, against equal weights in the same run.
	{
		Name: "turns", Engine: Runner, Out: "turns", Budget: 13 * time.Minute,
		Plans: []Plan{
			{Sub: "turns", Args: "-duet-cpu turns -duet-turn 2ms -reps 20 -precision 0"},
			{Sub: "weight", Args: "-duet-cpu weight -reps 20 -precision 0"},
		},
		Desc: "how the arms share the server CPU: one arm at a time in turns of 2 ms, every other stopped, against groups of equal weight, the default groups for 20 rounds each",
	},
	{
		Name: "cores", Engine: Runner, Out: "cores", Budget: 6 * time.Minute,
		Plans: []Plan{
			{Sub: "model", Args: "-measure isolated -aa=false -server-cpus 1,2 -share-cpus -reps 5 -work 0,20us,40us -workloads counter -driver h2load -modes mutex,inputQ,inputQ-batch,combining"},
			{Sub: "no-work", Args: "-measure isolated -aa=false -server-cpus 1 -workloads counter,bank-A -driver go -vus 100 -modes all -reps 3"},
		},
		Desc: "a queueing model fitted on the 1-CPU runs predicts the runs it held out, at 1 and 2 server CPUs; every design's serial demand without work",
	},
	{
		Name: "crossover", Engine: Runner, Out: "crossover", Budget: 10 * time.Minute,
		Plans: []Plan{{Args: "-measure isolated -aa=false -server-cpus 1,2 -share-cpus -reps 6 -work 0,5us,10us,20us,40us -workloads counter -driver h2load -modes mutex,inputQ,inputQ-batch,inputQ-spin"}},
		Desc:  "the work per command at which each owner design overtakes mutex at 2 server CPUs: predicted by the model, measured on a ladder of work levels",
	},
	// why and ledger run the blocks their plans name (-precision 0): they
	// ask where the CPU and a call's time go, read from profiles and traces
	// of every run, and more blocks would grow their archives, not answer
	// a different question.
	{
		Name: "why", Engine: Runner, Out: "why", Budget: 5 * time.Minute,
		Plans: []Plan{
			{Sub: "h2load", Args: "-aa=false -workloads counter -driver h2load -h2load-vus 100 -modes mutex,inputQ,noop -attribute off,on -reps 12 -precision 0"},
			{Sub: "cores-2cpu-20us", Args: "-aa=false -server-cpus 2 -share-cpus -work 20us -workloads counter -driver h2load -h2load-vus 100 -modes mutex,inputQ,inputQ-batch,noop -attribute on -reps 11 -precision 0"},
		},
		Desc: "where each design's server CPU goes, by category, with and without attribution; and the 2-CPU case with 20 µs of work",
	},
	{
		Name: "ledger", Engine: Runner, Out: "ledger", Budget: 12 * time.Minute,
		Plans: []Plan{
			{Sub: "default", Args: "-aa=false -driver go -modes mutex,inputQ,inputQ-spin,noop -ledger on -reps 6 -precision 0"},
			{Sub: "cores-2cpu-20us", Args: "-aa=false -server-cpus 2 -share-cpus -work 20us -workloads counter -driver h2load -modes mutex,inputQ,inputQ-spin,noop -ledger off,on -reps 6 -precision 0"},
		},
		Desc: "each call's server-side time by state from execution traces: the default groups, and the 2-CPU case with 20 µs of work traced and not",
	},
	{
		Name: "runtimes", Engine: Runner, Out: "runtimes", Budget: 25 * time.Minute,
		Plans: []Plan{
			{Sub: "default", Args: "-modes mutex,inputQ,inputQ-spin -runtime go1.26.8,go1.27.3"},
			{Sub: "cores-2cpu-20us", Args: "-aa=false -server-cpus 2 -share-cpus -reps 11 -work 20us -workloads counter -driver h2load -modes mutex,inputQ,inputQ-spin,inputQ-batch,combining,noop -runtime go1.26.8,go1.27.3"},
		},
		Desc: "every design built by two Go releases: side by side in the same rounds, each design against itself built by the first, in the default groups; isolated in the same blocks, the 2-CPU case with 20 µs of work",
	},
	// bank-db's rounds last 4 s, not 1 s. A round's start (ten fresh
	// servers, each with its private database) takes about 3 s whatever
	// the window, and over a database the first seconds are not the
	// steady state: with 1-s windows rwmutex's lead in calls/s at 100
	// callers read two to three times what 4-s windows read, and the excess
	// of its p99 over the mutex's a third to two fifths as much
	// (docs/methodology.md, "a round's window"). The counter's answers do
	// not move with the window.
	//
	// 100 callers, where every pool is short of them and the tail is the
	// queue's; judged on calls/s and p99. With every arm's server and
	// database using the whole of an equal share, CPU per call is the
	// share over calls/s: at b2045c5c its every estimate was calls/s's
	// mirrored, 1/(1+x) − 1, within 1.3 points. At 10 callers a pool of
	// 32 is never short of callers, and a round's ~400 calls an arm leave
	// a p99 that is about its fourth slowest call: those p99s asked 278
	// to 1,055 rounds to decide.
	{
		Name: "bank-db", Engine: Runner, Out: "bank-db", Budget: 30 * time.Minute,
		Plans: []Plan{{Args: "-workloads bank-A -driver go -vus 100 -backend mysql -db-pool 1,9,32 -modes all -duet-metrics calls/s,p99 -duration 4s -time-budget 26m"}},
		Desc:  "the bank in MariaDB, a private instance per run: every design that serves it, db-rowlock among them, at three database pools with 100 callers, judged on calls/s and p99",
	},
	{
		Name: "capacity", Engine: Capacity, Plans: []Plan{{}}, Out: "capacity", Budget: 10 * time.Minute,
		Desc: "each design's capacity under a p99 objective set from the noop server's floor, latency at fixed rates, and overload under each admission policy",
	},
	{
		Name: "durability", Engine: Runner, Out: "durability", Budget: 7 * time.Minute,
		Plans: []Plan{{Args: "-workloads bank-A -read-ratio 0 -modes mutex,inputQ,inputQ-batch,combining,noop -durability none,wal -vus 100 -reps 11 -driver go"}},
		Desc:  "bank transfers with and without the write-ahead log",
	},
	{
		Name: "work", Engine: Runner, Out: "work", Budget: 7 * time.Minute,
		Plans: []Plan{{Args: "-workloads counter -modes mutex,inputQ,inputQ-batch,combining,noop -work 10us,50us -vus 100 -reps 11 -driver go"}},
		Desc:  "the critical section's length through gRPC, one server CPU",
	},
	{
		Name: "skew", Engine: Runner, Out: "skew", Budget: 7 * time.Minute,
		Plans: []Plan{{Args: "-workloads bank-A -modes mutex,sharded,inputQ,sharded-inputQ,noop -skew 0,0.99 -vus 100 -reps 11 -driver go"}},
		Desc:  "uniform against Zipf-skewed account choice",
	},
	{
		Name: "readratio", Engine: Runner, Out: "readratio", Budget: 7 * time.Minute,
		Plans: []Plan{{Args: "-workloads bank-A -modes mutex,rwmutex,inputQ,noop -read-ratio 0.5,0.95 -vus 100 -reps 11 -driver go"}},
		Desc:  "a read-heavy bank mix (GetBalance) against the read-write lock",
	},
	{
		Name: "conns1", Engine: Runner, Out: "conns1", Budget: 2 * time.Minute,
		Plans: []Plan{{Args: "-measure isolated -conns 0 -driver go -reps 3"}},
		Desc:  "an older default plan with one connection per caller, as a k6 VU (too few blocks for tests)",
	},
	{
		Name: "drivers", Engine: Runner, Out: "drivers", Budget: 2 * time.Minute,
		Plans: []Plan{{Args: "-driver go,k6 -modes mutex,noop -aa=false -workloads counter -vus 10,100 -reps 5"}},
		Desc:  "the Go driver against k6 on the noop and mutex servers, interleaved",
	},
	{
		Name: "drivers-conns1", Engine: Runner, Out: "drivers-conns1", Budget: 2 * time.Minute,
		Plans: []Plan{{Args: "-driver go,k6 -modes mutex,noop -aa=false -workloads counter -vus 10,100 -reps 5 -conns 0"}},
		Desc:  "the same with one connection per Go caller",
	},
	{
		Name: "ladder", Engine: Runner, Out: "ladder", Budget: 7 * time.Minute,
		Plans: []Plan{{Args: "-driver k6 -ladder -reps 2"}},
		Desc:  "the seed's k6 ladder of callers in the runner's own report, with the A/A control",
	},
	{
		Name: "seed-ladder", Engine: Seed, Out: "seeds/ladder", Budget: 5 * time.Minute,
		Plans:    []Plan{{Args: "-driver k6 -ladder -workloads counter -modes mutex,inputQ -reps 2 -duration 5s -warmup 1s"}},
		SeedArgs: "ladder -in {out}",
		Desc:     "the inputQ-against-mutex k6 ladder of callers, in the seed's own k6 columns",
	},
	{
		Name: "seed-bank", Engine: Seed, Out: "seeds/bank",
		SeedArgs: "bank -out {out} -modes mutex,inputQ -server {server}",
		Desc:     "the gRPC bank benchmark with ghz: its scenarios and request counts",
	},
	{
		Name: "seed-bank-db", Engine: Seed, Out: "seeds/bank-db", Budget: 6 * time.Minute,
		SeedArgs: "bank -backend mysql -out {out} -modes mutex,inputQ,db-rowlock -server {server}",
		Desc:     "the bank benchmark as it ran: over MariaDB and Redis, reads with the cache off and on",
	},
	{
		Name: "seed-rpcx", Engine: Seed, Out: "seeds/rpcx",
		SeedArgs: "rpcx -out {out} -modes mutex,inputQ -server {server}",
		Desc:     "the rpcx page: a fixed value at a ladder of clients, its latency columns and TPS",
	},
	{
		Name: "seed-ngrinder", Engine: Seed, Out: "seeds/ngrinder", Budget: 2 * time.Minute,
		Plans: []Plan{
			{Sub: "before", Args: "-measure isolated -driver go -workloads bank-A -vus 100 -durability wal -duration 5s -warmup 1s -reps 3 -modes mutex -baseline mutex"},
			{Sub: "after", Args: "-measure isolated -driver go -workloads bank-A -vus 100 -durability wal -duration 5s -warmup 1s -reps 3 -modes inputQ-batch -baseline inputQ-batch"},
		},
		SeedArgs: "ngrinder -before {out}/before -after {out}/after -out {out}",
		Desc:     "the nGrinder before/after report: mutex before, inputQ-batch after",
	},
	{
		Name: "replicas", Engine: Seed, Out: "replicas", Budget: 15 * time.Minute,
		SeedArgs: "replicas -out {out} -server {server}",
		Desc:     "replicas of every design behind HAProxy, nginx or the client's own balancing: anomalies under round robin and key routing, in memory and over one shared MariaDB (routed-owner and db-rowlock held to their claim of safety), the hop's cost at one, two and three replicas, routed-owner against db-rowlock and the mutex over the database, and the nGrinder and rpcx seeds' replica tables",
	},
}

// Reserved are the words -study takes besides the names of the studies.
var Reserved = []string{"list", "index"}

// ErrUnknown: no study has the name.
var ErrUnknown = errors.New("study: no such study")

// Lookup finds the study called name in studies.
func Lookup(studies []Study, name string) (Study, error) {
	i := slices.IndexFunc(studies, func(s Study) bool { return s.Name == name })
	if i < 0 {
		return Study{}, fmt.Errorf("%w %q: want one of %s", ErrUnknown, name, strings.Join(Names(studies), ", "))
	}
	return studies[i], nil
}

// Names are the studies' names, in the table's order.
func Names(studies []Study) []string {
	var out []string
	for _, s := range studies {
		out = append(out, s.Name)
	}
	return out
}

// Folder is where the plan writes, relative to the repository's root.
func (s Study) Folder(p Plan) string { return path.Join(s.Root(), p.Sub) }

// Command is how a reader runs the study.
func (s Study) Command() string { return "make study NAME=" + s.Name }

// Root is the study's folder, relative to the repository's root.
func (s Study) Root() string { return path.Join(Dir, s.Out) }

// Seeds are cmd/seeds' arguments, {out} (the study's folder, root) and
// {server} filled in; nil when the study has no seeds step.
func (s Study) Seeds(root, server string) []string {
	if s.SeedArgs == "" {
		return nil
	}
	r := strings.NewReplacer("{out}", root, "{server}", server)
	return strings.Fields(r.Replace(s.SeedArgs))
}

// Check reports what is wrong with the table: a name twice or reserved, an
// engine it does not know, plans where the engine runs none, two plans into
// one folder, a seeds step on an engine that has none.
func Check(studies []Study) error {
	var errs []error
	seen := map[string]bool{}
	folders := map[string]string{}
	for _, s := range studies {
		switch {
		case s.Name == "" || strings.ContainsAny(s.Name, " \t/"):
			errs = append(errs, fmt.Errorf("study %q: want a name of one word", s.Name))
		case seen[s.Name]:
			errs = append(errs, fmt.Errorf("study %q: named twice", s.Name))
		case slices.Contains(Reserved, s.Name):
			errs = append(errs, fmt.Errorf("study %q: the name is one of -study's own words (%s)", s.Name, strings.Join(Reserved, ", ")))
		}
		seen[s.Name] = true
		if !slices.Contains(Engines, s.Engine) {
			errs = append(errs, fmt.Errorf("study %s: engine %q: want one of %v", s.Name, s.Engine, Engines))
		}
		if s.Engine != Seed && len(s.Plans) == 0 {
			errs = append(errs, fmt.Errorf("study %s: no plan", s.Name))
		}
		if (s.Engine == Seed) != (s.SeedArgs != "") {
			errs = append(errs, fmt.Errorf("study %s: a seeds step goes with the seed engine, and the seed engine with one", s.Name))
		}
		if s.Out == "" || s.Desc == "" {
			errs = append(errs, fmt.Errorf("study %s: want a folder and a description", s.Name))
		}
		for _, p := range s.Plans {
			f := s.Folder(p)
			if other, ok := folders[f]; ok {
				errs = append(errs, fmt.Errorf("study %s: writes %s, as %s does", s.Name, f, other))
			}
			folders[f] = s.Name
		}
	}
	return errors.Join(errs...)
}

// Index markers: the block of docs/results/README.md between them is
// Index's, rewritten by WriteIndex.
const (
	IndexBegin = "<!-- studies: begin (generated by `go run ./cmd/compare -study index` from internal/lab/study; do not edit) -->"
	IndexEnd   = "<!-- studies: end -->"
)

// Pages are the files a reader opens first, relative to Dir: the seed's
// page for the seeds, the runner's report of each plan for the others.
func (s Study) Pages() []string {
	if s.Engine == Seed {
		return []string{path.Join(s.Out, "README.md")}
	}
	var out []string
	for _, p := range s.Plans {
		out = append(out, path.Join(s.Out, p.Sub, "report.md"))
	}
	return out
}

// Index is the Markdown table of the studies, its links relative to Dir:
// name, pages, command, what it is.
func Index(studies []Study) string {
	var b strings.Builder
	b.WriteString("| study | report | command | what it is |\n| --- | --- | --- | --- |\n")
	for _, s := range studies {
		var links []string
		for _, p := range s.Pages() {
			links = append(links, fmt.Sprintf("[`%s/`](%s)", path.Dir(p), p))
		}
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s |\n", s.Name, strings.Join(links, ", "), s.Command(), s.Desc)
	}
	return b.String()
}

// ErrNoMarkers: the page lacks the index's markers.
var ErrNoMarkers = errors.New("study: the page has no index block (" + IndexBegin + " … " + IndexEnd + ")")

// WithIndex is page with its index block replaced by index.
func WithIndex(page, index string) (string, error) {
	before, rest, ok := strings.Cut(page, IndexBegin+"\n")
	if !ok {
		return "", ErrNoMarkers
	}
	_, after, ok := strings.Cut(rest, IndexEnd)
	if !ok {
		return "", ErrNoMarkers
	}
	return before + IndexBegin + "\n" + index + IndexEnd + after, nil
}

// WriteIndex rewrites the index block of the page at path from studies;
// the page is left as it was when it has no block.
func WriteIndex(path string, studies []Study) error {
	page, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := WithIndex(string(page), Index(studies))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, []byte(out), 0o644)
}
