package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

// Config is one load run. DefaultConfig gives the defaults; Run validates.
type Config struct {
	// Addr is the server, host:port.
	Addr string
	// Workload is one of WorkloadNames, the rows of workloads.json.
	Workload string
	// Scenario is the bank scenario ("A", "B", "C"): what Reset funds, and
	// whether a refused transfer is expected. "" is workloads.json's default.
	Scenario string
	// Mix is a bank mix spec ("transfer:2,balance-random:1"); "" is
	// workloads.json's mix, or the one ReadRatio stands for.
	Mix string
	// Model is "closed" (Callers loop back to back) or "open" (Rate calls/s
	// whatever the latency, at most Callers in flight).
	Model string
	// Callers is the number of concurrent callers (closed) or the bound on
	// calls in flight (open).
	Callers int
	// Conns is the number of gRPC connections the callers share, round
	// robin; 0 (or more than Callers) is one per caller, as k6 gives each
	// VU its own.
	Conns int
	// Rate is the open model's arrival rate, calls per second.
	Rate float64
	// Warmup runs before the measured window and is not counted.
	Warmup time.Duration
	// Duration is the measured window.
	Duration time.Duration
	// Skew is the Zipf θ (0 <= θ < 1) of account and key choice; 0 is
	// uniform.
	Skew float64
	// ReadRatio is the share of reads: GetBalance among bank calls (the mix
	// becomes balance-random vs transfer), Get among kv calls. Negative is
	// the workload's default (bank: Mix; kv: workloads.json's ratio).
	ReadRatio float64
	// ValueSize is the kv value size in bytes; negative is the default.
	ValueSize int
	// Accounts is the bank's size when Reset is set; 0 is the default.
	Accounts int
	// Reset resets the server (AdminService/Reset to Scenario and Accounts)
	// before the run.
	Reset bool
	// Timeout bounds each call; 0 is DefaultTimeout.
	Timeout time.Duration
	// DropAfter (open model) drops a call that could not start within it of
	// its intended start; 0 is DefaultDropAfter.
	DropAfter time.Duration
	// DialOptions are added to the grpc-go connection's, the one setup and
	// requests too large for the driver's own connections take (tests).
	DialOptions []grpc.DialOption
	// Marks, when set (closed model), marks the measured window from
	// outside: it runs from the first time received on it to the second,
	// so that the windows of drivers started one after another can all
	// match one observer's (cmd/load -window-stdin: lines on stdin). Warmup plus
	// Duration then bound the whole run, which must take in both marks:
	// the callers keep calling until the run's end, past the window.
	Marks <-chan time.Time
	// Timeline, when > 0, adds to the summary the window cut into
	// intervals of this length: each interval's calls, errors and
	// latency percentiles (by intended start in the open model, by end in
	// the closed), so that a recovery can be timed.
	Timeline time.Duration
}

// Defaults of Config.
const (
	DefaultTimeout   = 10 * time.Second
	DefaultDropAfter = time.Second
	// LateAfter is how long a due call may wait for a free caller
	// before the open model counts it late.
	LateAfter = time.Millisecond
	// connectTimeout bounds connecting before the run.
	connectTimeout = 10 * time.Second
)

// GCPercent is the garbage collector's target cmd/load runs with when GOGC
// does not set one. The driver's live heap is its histograms, a few MB,
// and its garbage is grpc-go's, some 5 kB a call: collecting a quarter as
// often as the default 100 took about a tenth off the driver's CPU per call
// (BenchmarkDriverCallCPU, GOGC=400 against GOGC=100).
const GCPercent = 400

// DefaultConfig is the configuration cmd/load starts from: counter, closed
// model, 10 callers for 10 s after a 1 s warm-up.
func DefaultConfig() Config {
	return Config{
		Addr: "127.0.0.1:50055", Workload: "counter", Model: "closed",
		Callers: 10, Rate: 1000, Warmup: time.Second, Duration: 10 * time.Second,
		ReadRatio: -1, ValueSize: -1,
	}
}

// Validate checks c and fills in what defaults (Scenario, Conns, ValueSize,
// Accounts, Timeout, DropAfter) from workloads.json. Run calls it.
func (c *Config) Validate() error {
	d := Workloads()
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Addr == "" {
		bad("no address")
	}
	if !slices.Contains(WorkloadNames(), c.Workload) {
		bad("workload %q: want one of %v", c.Workload, WorkloadNames())
	}
	if c.Scenario == "" {
		c.Scenario = d.Bank.Defaults.Scenario
	}
	if _, ok := d.Bank.Scenarios[c.Scenario]; !ok {
		bad("scenario %q: want one of %v", c.Scenario, d.ScenarioNames())
	}
	if c.Model != "closed" && c.Model != "open" {
		bad("model %q: want closed or open", c.Model)
	}
	if c.Callers < 1 {
		bad("callers %d: want at least 1", c.Callers)
	}
	if c.Conns < 0 {
		bad("conns %d: want 0 (one per caller) or more", c.Conns)
	}
	if c.Conns == 0 || c.Conns > c.Callers {
		c.Conns = c.Callers
	}
	if c.Model == "open" && !(c.Rate > 0 && c.Rate <= 1e8) {
		bad("rate %v: want calls/s in (0, 1e8] in the open model", c.Rate)
	}
	if c.Duration <= 0 {
		bad("duration %v: want > 0", c.Duration)
	}
	if c.Warmup < 0 {
		bad("warm-up %v: want >= 0", c.Warmup)
	}
	if !(c.Skew >= 0 && c.Skew < 1) {
		bad("skew %v: want a Zipf θ in [0, 1)", c.Skew)
	}
	if c.ReadRatio > 1 || math.IsNaN(c.ReadRatio) {
		bad("read ratio %v: want 0..1 (negative: the workload's default)", c.ReadRatio)
	}
	if c.Workload == "bank" && c.Mix != "" && c.ReadRatio >= 0 {
		bad("a mix and a read ratio: give one")
	}
	if c.Mix != "" {
		if _, err := d.ParseMix(c.Mix); err != nil {
			errs = append(errs, err)
		}
	}
	if c.ValueSize < 0 {
		c.ValueSize = d.KV.Defaults.ValueSize
	}
	if c.ValueSize > 1<<20 {
		bad("value size %d: the server takes at most 1 MiB", c.ValueSize)
	}
	if c.Accounts < 0 || c.Accounts == 1 || c.Accounts > 1_000_000 {
		bad("accounts %d: want 2..1,000,000 (0: the default)", c.Accounts)
	}
	if c.Accounts == 0 {
		c.Accounts = d.Bank.Defaults.Accounts
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.DropAfter <= 0 {
		c.DropAfter = DefaultDropAfter
	}
	if c.Timeline < 0 || (c.Timeline > 0 && c.Duration/c.Timeline > maxTimeline) {
		bad("timeline %v: want 0 (none) or an interval that cuts the window into at most %d", c.Timeline, maxTimeline)
	}
	if c.Marks != nil && c.Model != "closed" {
		bad("a marked window: only in the closed model (the open model's calls count by their due time, set from the start)")
	}
	if c.Marks != nil && c.Timeline > 0 {
		bad("a marked window and a timeline: the timeline's intervals start at a window known in advance")
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	return nil
}

// clients are one connection's stubs.
type clients struct {
	conn    grpc.ClientConnInterface // for a workload's calls that have no stub here
	counter pb.CounterServiceClient
	bank    pb.BankServiceClient
	kv      pb.KVServiceClient
	admin   pb.AdminServiceClient
}

func newClients(cc *grpc.ClientConn) clients {
	return clients{
		conn: cc, counter: pb.NewCounterServiceClient(cc), bank: pb.NewBankServiceClient(cc),
		kv: pb.NewKVServiceClient(cc), admin: pb.NewAdminServiceClient(cc),
	}
}

// Run drives the server as cfg says and returns the run's summary. An
// unexpected answer is counted, not returned: Run fails only when the run
// could not happen (bad config, no server), or returns ErrInterrupted with a
// summary when ctx ended during the window.
func Run(ctx context.Context, cfg Config) (*summary.Summary, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	conns, err := dialAll(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer conns.close()
	p, err := setup(ctx, cfg, Workloads(), conns.clients(0))
	if err != nil {
		return nil, err
	}
	rec := newRecorder(len(p.cases), min(cfg.Callers, 4*runtime.GOMAXPROCS(0)))
	callers := make([]*caller, cfg.Callers)
	for i := range callers {
		if callers[i], err = newCaller(i, p, conns.clients(i), rec.shard(i)); err != nil {
			return nil, err
		}
	}

	// An interrupted run (ctx ends) stops early, as k6 does on SIGINT: the
	// calls that ended before the interruption are summarised over the
	// part of the window that ran, and Run returns ErrInterrupted with the
	// summary.
	var stoppedAt atomic.Pointer[time.Time] // nil while running
	stop := context.AfterFunc(ctx, func() { at := time.Now(); stoppedAt.Store(&at) })
	defer stop()
	start := time.Now()
	w := window{from: start.Add(cfg.Warmup), to: start.Add(cfg.Warmup + cfg.Duration)}
	rec.timeline(w.from, cfg.Timeline)
	switch {
	case cfg.Marks != nil:
		done := make(chan struct{})
		m, watched := watchMarks(cfg.Marks, done)
		runClosed(ctx, callers, window{from: start, to: w.to}, m)
		close(done)
		<-watched // a mark sent before the run ended is the run's
		from, to, ok := m.window()
		if !ok {
			if cause := context.Cause(ctx); cause != nil {
				return nil, fmt.Errorf("%w: %d of its 2 marks came before the run ended (%w)", ErrUnmarked, m.n.Load(), cause)
			}
			return nil, fmt.Errorf("%w: %d of its 2 marks came in the run's %v", ErrUnmarked, m.n.Load(), cfg.Warmup+cfg.Duration)
		}
		w = window{from: from, to: to}
		cfg.Duration = to.Sub(from)
	case cfg.Model == "closed":
		runClosed(ctx, callers, w, w)
	default:
		runOpen(ctx, callers, w, cfg, rec.shard(0))
	}
	var interrupted error
	if at, ok := endedAt(ctx, &stoppedAt); ok && at.Before(w.to) {
		cfg.Duration = max(0, at.Sub(w.from))
		interrupted = fmt.Errorf("%w after %v of the window: %w", ErrInterrupted, cfg.Duration.Round(time.Millisecond), context.Cause(ctx))
		if cfg.Duration == 0 {
			return nil, interrupted
		}
	}
	sum, err := rec.summary(cfg, p)
	if err != nil {
		return nil, err
	}
	// Acknowledged work is counted over the whole run, warm-up included:
	// it is what the server's state must show afterwards.
	for _, c := range callers {
		sum.AckedIncrementDelta += c.ackedDelta
		sum.AckedTransfers += c.ackedTransfers
	}
	return sum, interrupted
}

// ErrUnmarked: a run whose window is marked from outside (Config.Marks)
// ended before its second mark. Run returns no summary: no window was
// measured.
var ErrUnmarked = errors.New("load: the window was not marked")

// ErrInterrupted: the run's context ended before the window did. Run
// returns it with the summary of what ran.
var ErrInterrupted = errors.New("load: run interrupted")

// conns are a run's connections: cfg.Conns of the driver's own for the
// workload's calls (h2.go), the callers spread over them round robin, and
// one of grpc-go's for setup's calls and any request too large for the
// driver's.
type conns struct {
	setup *grpc.ClientConn
	calls []*h2Client
}

// clients are caller i's stubs.
func (c *conns) clients(i int) clients {
	cl := newClients(c.setup)
	cl.conn = c.calls[i%len(c.calls)]
	return cl
}

func (c *conns) close() {
	for _, h := range c.calls {
		_ = h.Close()
	}
	_ = c.setup.Close()
}

// dialAll opens the run's connections and waits until each is ready, so
// that connecting is not part of any call's latency.
func dialAll(ctx context.Context, cfg Config) (*conns, error) {
	opts := append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(newCodec())),
	}, cfg.DialOptions...)
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	cc, err := grpc.NewClient(cfg.Addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("load: %s: %w", cfg.Addr, err)
	}
	c := &conns{setup: cc}
	fail := func(err error) (*conns, error) {
		c.close()
		return nil, err
	}
	cc.Connect()
	for s := cc.GetState(); s != connectivity.Ready; s = cc.GetState() {
		// A refused connection is final here: the server is started
		// before the driver, so retrying would only wait out the timeout.
		if s == connectivity.TransientFailure {
			return fail(fmt.Errorf("load: cannot connect to %s (%v)", cfg.Addr, s))
		}
		if !cc.WaitForStateChange(ctx, s) {
			return fail(fmt.Errorf("load: cannot connect to %s (%v): %w", cfg.Addr, s, ctx.Err()))
		}
	}
	for range cfg.Conns {
		h, err := newH2Client(ctx, cfg.Addr, cfg.Timeout, cc)
		if err != nil {
			return fail(err)
		}
		c.calls = append(c.calls, h)
	}
	return c, nil
}

// ended reports whether ctx has ended by t. A deadline counts from the
// moment it passes: grpc-go fails a call whose deadline has passed before
// the context's own timer marks it done.
func ended(ctx context.Context, t time.Time) bool {
	if ctx.Err() != nil {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && !t.Before(dl)
}

// endedAt is when ctx ended, if it has: its deadline, or when it was
// cancelled (stoppedAt, with its monotonic reading, so that the part of
// the window that ran is measured on the clock the window is).
func endedAt(ctx context.Context, stoppedAt *atomic.Pointer[time.Time]) (time.Time, bool) {
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return dl, true
	}
	if ctx.Err() == nil {
		return time.Time{}, false
	}
	if at := stoppedAt.Load(); at != nil {
		return *at, true
	}
	return time.Now(), true // the AfterFunc that records the time has not run yet
}

// window is the measured part of the run.
type window struct{ from, to time.Time }

func (w window) contains(t time.Time) bool { return !t.Before(w.from) && t.Before(w.to) }

// second is the second of the window t falls in, from 0. A time before the
// window counts in its first second, as an open-model call scheduled inside
// the window cannot end before it; a time after it counts in its last, as an
// open-model call due inside the window is the window's even when it ends
// late (on a loaded machine, more than a partial second late).
func (w window) second(t time.Time) int {
	last := max(0, int((w.to.Sub(w.from)-1)/time.Second))
	return min(max(0, int(t.Sub(w.from)/time.Second)), last)
}

// counts says whether a call that ended at t is the window's, and in which
// second of it.
type counts interface {
	count(t time.Time) (second int, ok bool)
}

func (w window) count(t time.Time) (int, bool) { return w.second(t), w.contains(t) }

// marked is a window marked from outside while the run goes on
// (Config.Marks): nil until marked. A mark keeps its monotonic reading, so
// the window is the marks' own span: held as wall-clock nanoseconds it
// moved with the wall clock's slew (25 µs in 38 ms,
// TestMarkedThenInterrupted).
type marked struct {
	from, to atomic.Pointer[time.Time]
	n        atomic.Int32
}

// watchMarks takes the first two marks; it stops at the second, or when
// done closes, after taking the marks sent by then: an interruption that
// follows the second mark (the runner ends its drivers once it has read
// the window) may end the run before this goroutine ran, and the mark
// waiting in the channel is still the window's end. The returned channel
// closes when it has stopped.
func watchMarks(marks <-chan time.Time, done <-chan struct{}) (*marked, <-chan struct{}) {
	m := &marked{}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for m.n.Load() < 2 {
			select {
			case <-done:
				for m.n.Load() < 2 {
					select {
					case t, ok := <-marks:
						if !ok {
							return
						}
						m.take(t)
					default:
						return
					}
				}
				return
			case t, ok := <-marks:
				if !ok {
					return
				}
				m.take(t)
			}
		}
	}()
	return m, stopped
}

// take records a mark: the window's start, then its end.
func (m *marked) take(t time.Time) {
	if m.n.Add(1) == 1 {
		m.from.Store(&t)
	} else {
		m.to.Store(&t)
	}
}

func (m *marked) count(t time.Time) (int, bool) {
	from, to := m.from.Load(), m.to.Load()
	if from == nil || t.Before(*from) || (to != nil && !t.Before(*to)) {
		return 0, false
	}
	return int(t.Sub(*from) / time.Second), true
}

// window is the marked window, once both marks came.
func (m *marked) window() (from, to time.Time, ok bool) {
	f, t := m.from.Load(), m.to.Load()
	if f == nil || t == nil {
		return time.Time{}, time.Time{}, false
	}
	return *f, *t, true
}

// runClosed lets every caller call back to back until the run ends (run's
// end). A call is counted when it ends inside the window (w).
func runClosed(ctx context.Context, callers []*caller, run window, w counts) {
	var wg sync.WaitGroup
	for _, c := range callers {
		wg.Go(func() {
			for !ended(ctx, time.Now()) {
				t0 := time.Now()
				res := c.do(ctx)
				t1 := time.Now()
				if second, ok := w.count(t1); ok && !ended(ctx, t1) { // a call cut short by the interruption is not the server's answer
					c.rec.record(res, t1, t1.Sub(t0), second)
				}
				if !t1.Before(run.to) {
					return
				}
			}
		})
	}
	wg.Wait()
}

// runOpen starts calls at cfg.Rate from the run's start to the window's end,
// each on the first free caller. A call is timed from when it was due, not
// from when a caller got to it: if the server holds every caller, the calls
// due meanwhile wait in a queue, and the wait is in their latency, as a user
// would see it (no coordinated omission). Calls waiting over DropAfter past
// their scheduled start, or finding the queue full, are dropped. A call
// counts when its scheduled start is inside the window.
//
// "Due" is the scheduled start, or the moment the pacer woke and released
// the call if that was later: Go's timers wake an idle process through
// epoll, in whole milliseconds (a 200 µs timer fired 0.9 ms late here), and
// that lateness belongs to the driver, not to the server. Sleeping in
// nanosleep(2) instead wakes within ~30 µs, but the sleeping thread keeps
// its P, so the callers it has just woken and the answers arriving meanwhile
// wait for it: tried here, the p50 at 1000 calls/s went to 316 ms (on a busy
// machine; one closed-model caller saw 0.13 ms). The runner gives the
// driver GOMAXPROCS=1, where that P is the only one.
func runOpen(ctx context.Context, callers []*caller, w window, cfg Config, rec *shard) {
	interval := time.Duration(float64(time.Second) / cfg.Rate)
	backlog := max(len(callers), int(min(cfg.Rate*cfg.DropAfter.Seconds(), 1<<20)))
	due := make(chan dueCall, backlog)
	var dropped, late atomic.Int64

	var wg sync.WaitGroup
	for _, c := range callers {
		wg.Go(func() {
			for d := range due {
				if ctx.Err() != nil {
					continue // drain
				}
				counted := w.contains(d.scheduled)
				now := time.Now()
				if now.Sub(d.scheduled) > cfg.DropAfter {
					if counted {
						dropped.Add(1)
					}
					continue
				}
				if counted && now.Sub(d.released) > LateAfter {
					late.Add(1)
				}
				res := c.do(ctx)
				if now := time.Now(); counted && !ended(ctx, now) {
					c.rec.record(res, d.scheduled, now.Sub(d.released), w.second(now))
				}
			}
		})
	}
	pace(ctx, due, w.from.Add(-cfg.Warmup), interval, w, &dropped)
	close(due)
	wg.Wait()
	rec.addOpen(dropped.Load(), late.Load())
}

// dueCall is one call of the open model: when it was scheduled to start,
// and when the pacer released it (the same, or later if it woke late).
type dueCall struct{ scheduled, released time.Time }

// pace queues every start from start to the window's end, one per interval,
// and counts those the queue had no room for. Each wake-up releases every
// start that is due, so a late wake-up loses no call.
func pace(ctx context.Context, due chan<- dueCall, start time.Time, interval time.Duration, w window, dropped *atomic.Int64) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for k := int64(0); ; {
		next := start.Add(time.Duration(k) * interval)
		if !next.Before(w.to) {
			return
		}
		if wait := time.Until(next); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		}
		now := time.Now()
		for ; !next.After(now) && next.Before(w.to); next = start.Add(time.Duration(k) * interval) {
			select {
			case due <- dueCall{scheduled: next, released: now}:
			default:
				if w.contains(next) {
					dropped.Add(1)
				}
			}
			k++
		}
	}
}

// ---- recording ---------------------------------------------------------------

// result is one call's outcome.
type result struct {
	caseIdx int
	code    codes.Code
	class   outcome
	// acked: the increment delta or transfer the server acknowledged.
	ackedDelta    int64
	ackedTransfer bool
}

type outcome uint8

const (
	outcomeOK outcome = iota
	outcomeRefusal
	outcomeUnexpected
)

// recorder holds the run's counts and histograms in a few shards, so that
// callers rarely share a lock and memory stays bounded (one histogram per
// case per shard, ~140 kB each) whatever the number of callers.
type recorder struct {
	shards []*shard
}

// shard is one part of the recorder.
type shard struct {
	mu sync.Mutex // guards the fields below
	// hist[case] is the latency of that case's calls, µs.
	hist []*hdrhistogram.Histogram
	// okHist is the latency of the calls answered OK: under admission
	// control the refused calls are quick, and would hide the tail of
	// the accepted ones.
	okHist                     *hdrhistogram.Histogram
	tl                         timeline
	byCode                     map[codes.Code]int64
	ok, refusals, unexpected   int64
	ackedDelta, ackedTransfers int64
	dropped, late              int64
	perSecond                  []int64 // calls ended in each second of the window
}

func newRecorder(cases, shards int) *recorder {
	r := &recorder{shards: make([]*shard, max(shards, 1))}
	for i := range r.shards {
		s := &shard{hist: make([]*hdrhistogram.Histogram, cases), byCode: map[codes.Code]int64{}, okHist: summary.NewHistogram()}
		for c := range s.hist {
			s.hist[c] = summary.NewHistogram()
		}
		r.shards[i] = s
	}
	return r
}

func (r *recorder) shard(i int) *shard { return r.shards[i%len(r.shards)] }

// record adds one call that started (open: was due) or ended (closed) at
// at, took latency, and ended in the window's second second.
func (s *shard) record(res result, at time.Time, latency time.Duration, second int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	recordUs(s.hist[res.caseIdx], latency)
	s.tl.add(at, res.class, latency)
	for len(s.perSecond) <= second {
		s.perSecond = append(s.perSecond, 0)
	}
	s.perSecond[second]++
	s.byCode[res.code]++
	switch res.class {
	case outcomeOK:
		recordUs(s.okHist, latency)
		s.ok++
	case outcomeRefusal:
		s.refusals++
	default:
		s.unexpected++
	}
}

func (s *shard) addOpen(dropped, late int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropped += dropped
	s.late += late
}

// summary adds up the shards. Callers have stopped.
func (r *recorder) summary(cfg Config, p *plan) (*summary.Summary, error) {
	s := &summary.Summary{
		Schema: summary.Schema, Driver: "go",
		DriverVersion: fmt.Sprintf("locklab load, its own HTTP/2 calls (x/net/http2), grpc-go %s for setup, %s", grpc.Version, runtime.Version()),
		Workload:      cfg.Workload, Model: cfg.Model, Callers: cfg.Callers, Conns: cfg.Conns,
		Skew: cfg.Skew, ReadRatio: p.reportedReadRatio, DurationS: cfg.Duration.Seconds(),
		ByCode: map[string]int64{}, ByCase: map[string]summary.CaseStats{},
	}
	if cfg.Model == "open" {
		s.Rate = cfg.Rate
	}
	if cfg.Workload == "bank" {
		s.Scenario = cfg.Scenario
		s.Mix = p.mix.String()
	}
	all, ok := summary.NewHistogram(), summary.NewHistogram()
	var tl timeline
	perCase := make([]*hdrhistogram.Histogram, len(p.cases))
	for i := range perCase {
		perCase[i] = summary.NewHistogram()
	}
	for _, sh := range r.shards {
		sh.mu.Lock()
		for i, h := range sh.hist {
			perCase[i].Merge(h)
		}
		for code, n := range sh.byCode {
			s.ByCode[summary.CodeName(code)] += n
		}
		s.OK += sh.ok
		s.ExpectedRefusals += sh.refusals
		s.UnexpectedErrors += sh.unexpected
		s.Dropped += sh.dropped
		s.Late += sh.late
		ok.Merge(sh.okHist)
		tl.merge(sh.tl)
		for i, n := range sh.perSecond {
			for len(s.PerSecond) <= i {
				s.PerSecond = append(s.PerSecond, 0)
			}
			s.PerSecond[i] += n
		}
		sh.mu.Unlock()
	}
	for i, h := range perCase {
		all.Merge(h)
		if p.drawn[i] {
			s.ByCase[p.cases[i]] = summary.CaseStats{
				Count: h.TotalCount(), P50Ms: ms(h.ValueAtPercentile(50)), P99Ms: ms(h.ValueAtPercentile(99)),
			}
		}
	}
	s.Calls = s.OK + s.ExpectedRefusals + s.UnexpectedErrors
	s.CallsPerS = float64(s.Calls) / s.DurationS
	s.LatencyMs = summary.LatencyOf(all)
	s.Percentiles = summary.PercentilesOf(all)
	okLat := summary.LatencyOf(ok)
	s.LatencyOKMs = &okLat
	s.Timeline = tl.points(cfg.Duration)
	var err error
	if s.HDR, err = summary.EncodeHDR(all); err != nil {
		return nil, err
	}
	return s, s.Validate()
}
