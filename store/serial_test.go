package store

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// busyMachine spins a calibrated time in every Apply and keeps the time it
// really spent there: the serial work a design's measurement should find,
// whatever the machine's load made of the calibration. Commands alternate
// between shards 0 and 1, so a sharded design's busiest shard holds half.
type busyMachine struct {
	sp    spinner // used under the design's exclusion
	iters int
	spent atomic.Int64 // nanoseconds in Apply and Commit
}

func newBusyMachine(d time.Duration) *busyMachine {
	return &busyMachine{iters: int(calibrated() * float64(d.Nanoseconds()) / 1000)}
}

func (m *busyMachine) Apply(cmd int) (int, error) {
	t0 := time.Now()
	m.sp.spin(m.iters)
	m.spent.Add(int64(time.Since(t0)))
	return cmd, nil
}

func (m *busyMachine) ReadOnly(int) bool { return false }
func (m *busyMachine) SetShards(int)     {}
func (m *busyMachine) ShardsOf(cmd int) (int, int) {
	return cmd % 2, cmd % 2
}

// ApplyAtomic lets the atomic design serve it; it has no serial resource.
func (m *busyMachine) ApplyAtomic(cmd int) (int, error) {
	var sp spinner
	sp.spin(m.iters)
	return cmd, nil
}

// committingBusy also spins in Commit, which inputQ-batch runs on its
// syncer, a serial stage of its own.
type committingBusy struct {
	*busyMachine
	csp spinner // Commit is serial too
}

func (m *committingBusy) Commit() error {
	t0 := time.Now()
	m.csp.spin(m.iters / 2)
	m.spent.Add(int64(time.Since(t0)))
	return nil
}

// distortion turns a store's true SerialStats into what a broken design
// would report; nil reports them as they are.
type distortion func(SerialStats) SerialStats

// busyRun drives n commands from one caller through design over m and
// returns the busy time the store reports, and the time m really spent.
func busyRun(t *testing.T, design string, m Machine[int, int], spent *atomic.Int64, cfg Config, n int, distort distortion) (SerialStats, time.Duration) {
	t.Helper()
	s, err := New(design, m, cfg)
	require.NoError(t, err)
	defer s.Close()
	for i := range n {
		_, err := s.Do(context.Background(), i)
		require.NoError(t, err)
	}
	st, ok := s.(SerialReporter).SerialStats()
	require.True(t, ok, "made with MeasureSerial")
	if distort != nil {
		st = distort(st)
	}
	return st, time.Duration(spent.Load())
}

// checkBusy is the check: the reported busy time is within [lo, hi] times
// the machine's own.
func checkBusy(got, truth time.Duration, lo, hi float64) error {
	r := float64(got) / float64(truth)
	if r < lo || r > hi {
		return fmt.Errorf("busy %v against %v spent in the machine: ratio %.2f outside [%.2f, %.2f]", got, truth, r, lo, hi)
	}
	return nil
}

// The check's bounds on reported/true busy time. The busy time is the
// content of Apply and Commit, timed from outside them: the calls and the
// clock reads around the machine's own, and on a loaded machine a
// preemption between them (busyHi); zero and double (at least 2 × busyLo)
// stay outside (TestSerialBusyCheckCanFail).
// The designs time every hold here (SerialSampleEvery 1), so that the
// machine's preempted commands count on both sides: a sample of 1 in 16
// would miss most of them on a loaded machine. TestSerialSampleUnbiased
// checks the sample's arithmetic on its own.
const (
	busyLo, busyHi = 0.9, 1.8
	busyN          = 200 // commands per run
	// Long beside a hand-off, and a run long beside a preemption: a
	// command's hand-off preempted on a loaded machine (under a parallel
	// make test) lands in the busy time but not in the machine's, and with
	// 50 µs commands one such preemption moved a run's ratio to 1.77.
	busySpin = 200 * time.Microsecond
	busyRuns = 5 // runs per check; the median's decides
)

// inputQ-spin's callers poll for their answers until they come
// (SpinForever), as they do under a load of short commands: a caller that
// blocked would have the owner wake it, and on a loaded machine the kernel
// often hands the CPU at once to the thread woken by one that has used
// much — the polling owner — which then waits its turn for milliseconds.
var busyCfg = Config{MeasureSerial: true, SerialSampleEvery: 1, SpinBudget: SpinForever}

// busyMedian runs busyRun busyRuns times and returns the median ratio's run,
// so that one run disturbed by the rest of a shared machine does not decide.
func busyMedian(t *testing.T, design string, commits bool, distort distortion) (SerialStats, time.Duration) {
	t.Helper()
	type run struct {
		st    SerialStats
		truth time.Duration
	}
	var runs []run
	for range busyRuns {
		bm := newBusyMachine(busySpin)
		var m Machine[int, int] = bm
		if commits {
			m = &committingBusy{busyMachine: bm}
		}
		st, truth := busyRun(t, design, m, &bm.spent, busyCfg, busyN, distort)
		runs = append(runs, run{st, truth})
	}
	slices.SortFunc(runs, func(a, b run) int {
		ra, rb := float64(a.st.Total())/float64(a.truth), float64(b.st.Total())/float64(b.truth)
		switch {
		case ra < rb:
			return -1
		case ra > rb:
			return 1
		}
		return 0
	})
	return runs[busyRuns/2].st, runs[busyRuns/2].truth
}

// TestSerialBusy drives every design with a known serial work per command
// and checks that its serial stats add up to the work the machine did.
func TestSerialBusy(t *testing.T) {
	for _, commits := range []bool{false, true} {
		for _, d := range Designs() {
			var sample Machine[int, int] = newBusyMachine(0)
			if commits {
				sample = &committingBusy{busyMachine: newBusyMachine(0)}
			}
			if Supports(d.Name, sample) != nil {
				continue
			}
			t.Run(fmt.Sprintf("commit=%v/%s", commits, d.Name), func(t *testing.T) {
				if d.Needs&CapAtomic != 0 {
					st, _ := busyRun(t, d.Name, sample, new(atomic.Int64), busyCfg, 10, nil)
					assert.Zero(t, st.Resources(), "atomic has no serial resource")
					return
				}
				// A machine others load can stretch every run of a median
				// (a descheduled owner is busy, not in Apply): such an
				// attempt is measured again, at most twice; the last decides.
				var (
					st    SerialStats
					truth time.Duration
				)
				for attempt := 1; ; attempt++ {
					st, truth = busyMedian(t, d.Name, commits, nil)
					err := checkBusy(st.Total(), truth, busyLo, busyHi)
					if err == nil || attempt == 3 {
						break
					}
					t.Logf("attempt %d: %v", attempt, err)
				}
				assert.NoError(t, checkBusy(st.Total(), truth, busyLo, busyHi))
				assert.Equal(t, 1, st.SampleEvery)
				switch {
				case d.Needs&CapShards != 0:
					// Two shards share the work, each about half of it: the
					// busiest holds at most 85% of the total (a preempted
					// spin lengthens one shard's share on a loaded machine),
					// and no other shard is ever busy.
					assert.Equal(t, DefaultShards, st.Resources())
					assert.LessOrEqual(t, float64(st.Max())/float64(st.Total()), 0.85, "busiest shard of %v", st.Busy)
					busy := 0
					for _, b := range st.Busy {
						if b > 0 {
							busy++
						}
					}
					assert.Equal(t, 2, busy, "the two shards the commands name: %v", st.Busy)
				case d.GroupCommit && d.Owner && commits:
					assert.Equal(t, 2, st.Resources(), "owner and syncer")
					assert.Positive(t, st.Busy[syncerResource], "the syncer's commits")
				default:
					assert.Equal(t, 1, st.Resources())
					assert.Equal(t, st.Total(), st.Max())
				}
			})
		}
	}
}

// TestSerialBusyCheckCanFail is TestSerialBusy's control: a design that
// reported nothing, or twice its busy time, fails the same check.
func TestSerialBusyCheckCanFail(t *testing.T) {
	distortions := map[string]distortion{
		"zero": func(s SerialStats) SerialStats { return SerialStats{Busy: make([]time.Duration, len(s.Busy))} },
		"double": func(s SerialStats) SerialStats {
			for i := range s.Busy {
				s.Busy[i] *= 2
			}
			return s
		},
	}
	for _, design := range []string{"mutex", "inputQ", "combining"} {
		for name, distort := range distortions {
			t.Run(design+"/"+name, func(t *testing.T) {
				st, truth := busyMedian(t, design, false, distort)
				assert.Error(t, checkBusy(st.Total(), truth, busyLo, busyHi))
			})
		}
	}
}

// sampledTotal feeds a meter sampling one in every n holds of d each, the
// way the lock designs do, and returns its estimate of their total;
// distort scales what it reports (the control).
func sampledTotal(every, n int, d time.Duration, distort int64) time.Duration {
	m := newSerialMeter(1, Config{MeasureSerial: true, SerialSampleEvery: every})
	for range n {
		if m.sample() {
			m.held(access{}, int64(d)*distort)
		}
	}
	return m.stats().Total()
}

// TestSerialSampleUnbiased: one hold in 16, chosen at random and counted 16
// times, adds up to the holds' total (within 4 standard deviations of the
// binomial sample); scaled twice, or not at all, it does not (the control).
func TestSerialSampleUnbiased(t *testing.T) {
	const n, d = 200_000, time.Microsecond
	truth := time.Duration(n) * d
	assert.NoError(t, checkBusy(sampledTotal(DefaultSerialSampleEvery, n, d, 1), truth, 0.965, 1.035))
	assert.NoError(t, checkBusy(sampledTotal(1, n, d, 1), truth, 1, 1), "every hold timed: exact")
	assert.Error(t, checkBusy(sampledTotal(DefaultSerialSampleEvery, n, d, 2), truth, 0.965, 1.035), "control: double")
	assert.Error(t, checkBusy(sampledTotal(DefaultSerialSampleEvery, n, d, 0), truth, 0.965, 1.035), "control: zero")
}

// sameRuleSpin is a short command's content: short enough that a hand-off
// (a channel receive and an answer, a few hundred ns; several µs under the
// race detector) would be a large share of it.
const sameRuleSpin = 500 * time.Nanosecond

// sameRuleRuns short runs of sameRuleCommands each: a preemption inside a
// timed content (the machine's load, the runtime's preemption of a polling
// owner) lands in a few of them, and the median leaves those out.
const sameRuleRuns, sameRuleCommands = 15, 300

// sameRuleCfg times every content. inputQ-spin's owner and caller poll
// for a nanosecond only: polling beside the owner (on its SMT sibling, or
// for its CPU on a loaded machine) slows everything the owner does, its
// clock reads around Apply too, which is not the rule under test.
var sameRuleCfg = Config{MeasureSerial: true, SerialSampleEvery: 1, SpinBudget: time.Nanosecond}

// sameRuleRatios is, over sameRuleRuns runs of one caller's short commands,
// the median of a design's reported busy time over the time its machine
// spent in Apply, divided by mutex's in the same run; and the median of
// the same for the caller's whole time per command, which is what a
// figure that counted every hand-off would be at least.
func sameRuleRatios(t *testing.T, design string) (busy, whole float64) {
	t.Helper()
	ratio := func(design string) (busy, whole float64) {
		m := newBusyMachine(sameRuleSpin)
		t0 := time.Now()
		st, truth := busyRun(t, design, m, &m.spent, sameRuleCfg, sameRuleCommands, nil)
		wall := time.Since(t0)
		return float64(st.Total()) / float64(truth), float64(wall) / float64(truth)
	}
	var bs, ws []float64
	for range sameRuleRuns {
		mb, _ := ratio("mutex")
		b, w := ratio(design)
		bs, ws = append(bs, b/mb), append(ws, w/mb)
	}
	slices.Sort(bs)
	slices.Sort(ws)
	return bs[sameRuleRuns/2], ws[sameRuleRuns/2]
}

// sameRule is the check: a design's busy time over its machine's time is
// within 0.8–2.5 times mutex's, the lock whose acquire, release and
// hand-off are outside its holds. Not closer: an owner on a thread of its
// own (inputQ-spin) takes each command's cache lines from the caller's core
// inside its first touch of them, which is inside the content (about a
// fifth more than mutex's at this length here, alone or beside busy loops;
// 1.5 to 1.7 times beside the other packages' tests in make test); a
// counted hand-off — a receive, an answer, a thread's wake-up — is more
// than the content itself: the control's figures are 5 to 60 times
// mutex's.
func sameRule(design string, r float64) error {
	if r < 0.8 || r > 2.5 {
		return fmt.Errorf("%s: busy/spent %.2f× mutex's: not the same rule", design, r)
	}
	return nil
}

// TestSerialSameRuleForEveryKind: every design kind — locks, owners, the
// combiner — counts the same thing as serial busy time, the content of
// Apply and Commit, and leaves its hand-offs out. With short commands, an
// owner that counted its receives and answers (as its busy period did
// once) would report far more than mutex; the control is, for each owner
// design, the figure that counts every hand-off — the caller's whole time
// per command — which the same check rejects.
func TestSerialSameRuleForEveryKind(t *testing.T) {
	for _, d := range Designs() {
		if d.Needs&(CapAtomic|CapTx|CapOwned) != 0 || d.Name == "mutex" { // its machine has neither
			continue
		}
		t.Run(d.Name, func(t *testing.T) {
			var err error
			for attempt := 1; attempt <= 3; attempt++ { // a loaded machine may stretch a median: measure again
				busy, whole := sameRuleRatios(t, d.Name)
				if err = sameRule(d.Name, busy); err == nil {
					if d.Owner {
						assert.Error(t, sameRule(d.Name+", counting every hand-off", whole), "the control")
					}
					return
				}
				t.Logf("attempt %d: %v", attempt, err)
			}
			assert.NoError(t, err)
		})
	}
}

// TestSerialStatsOff: a store made without MeasureSerial reports nothing.
func TestSerialStatsOff(t *testing.T) {
	for _, d := range Designs() {
		t.Run(d.Name, func(t *testing.T) {
			s, err := New(d.Name, Machine[int, int](capableOf[int, int](newBusyMachine(0))), Config{})
			require.NoError(t, err)
			defer s.Close()
			_, err = s.Do(context.Background(), 1)
			require.NoError(t, err)
			st, ok := s.(SerialReporter).SerialStats()
			assert.False(t, ok)
			assert.Zero(t, st.Resources())
		})
	}
}

func TestSerialStatsArithmetic(t *testing.T) {
	s0 := SerialStats{Busy: []time.Duration{1, 5, 2}, SampleEvery: 16}
	s1 := SerialStats{Busy: []time.Duration{4, 9, 2}, SampleEvery: 16}
	w := s1.Sub(s0)
	assert.Equal(t, []time.Duration{3, 4, 0}, w.Busy)
	assert.Equal(t, time.Duration(7), w.Total())
	assert.Equal(t, time.Duration(4), w.Max())
	assert.Equal(t, 16, w.SampleEvery)
	assert.Equal(t, []time.Duration{1, 5, 2}, s0.Busy, "Sub leaves its operands alone")
	assert.Zero(t, SerialStats{}.Max())
}

func TestSerialSampleEveryRefused(t *testing.T) {
	for _, n := range []int{-1, 3, 12} {
		_, err := New("mutex", Machine[int, int](newBusyMachine(0)), Config{MeasureSerial: true, SerialSampleEvery: n})
		assert.Error(t, err, "SerialSampleEvery %d", n)
	}
}
