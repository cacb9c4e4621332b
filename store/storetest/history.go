package storetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/locklab/locklab/store"
)

// call is one Do a client made.
type call[C, R any] struct {
	client, n  int // the client and its call number
	cmd        C
	r          R
	err        error
	start, end int64 // ticks just before Do and just after it returned
}

// history is what one run of concurrent calls left.
type history[C, R any] struct {
	calls    []call[C, R]
	applies  []applied[C, R] // in the order they began
	overlaps []string
	late     []string
	shards   int   // the shard count the design set; 0 if none
	closedAt int64 // the tick just after Close returned; 0 if it did not
	pending  int   // calls still in the design when the run gave up on it
}

// clientLog is one client's calls; its lock is for reading them while the
// client may still be stuck in the design (the run gave up).
type clientLog[C, R any] struct {
	mu      sync.Mutex
	calls   []call[C, R]
	pending bool // a call is in the design
}

// record runs clients goroutines against a new store of s around a
// recording machine and returns the history, with the store closed. With
// closeAfter 0 each client makes the kit's number of calls and the store is
// closed after the last; otherwise clients call until they are refused, and
// the store is closed under them once closeAfter calls have returned: each
// client then makes at most the kit's number of calls while Close runs, and
// at most one that begins after Close returned.
//
// A call to Do or Close that does not return within the watch's bound ends
// the run: record then returns the history so far with an error wrapping
// ErrHang (the history is nil only if the store could not be built).
func (k *kit[C, R]) record(s subject[C, R], seed uint64, clients, closeAfter int) (*history[C, R], error) {
	var clock atomic.Int64
	rec := newRecorder(k.machine(), &clock)
	st, err := s.new(rec)
	if err != nil {
		return nil, fmt.Errorf("cannot build the store: %w", err)
	}
	w := newWatch(k.o.hang)
	logs := make([]clientLog[C, R], clients)
	var returned atomic.Int64
	var stop atomic.Bool    // set only when the run gives up
	var closing atomic.Bool // set just before Close is called under load
	var closed atomic.Bool  // set once that Close has returned
	var closeErr error      // what it returned; read once the clients are done
	// The client whose call is the closeAfter-th to return calls Close
	// itself, at once: a waiter woken to do it could find hundreds more
	// calls made by then on a loaded machine.
	closeSlot := w.slot("Close", nil)
	closeUnderLoad := func() {
		closing.Store(true)
		closeSlot.begin(0)
		err := st.Close()
		closeSlot.end()
		rec.closed()
		closed.Store(true)
		closeErr = err
	}
	var wg sync.WaitGroup
	for c := range clients {
		sl := w.slot(fmt.Sprintf("client %d", c), k.describeCall(seed, c))
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(c)))
			log := &logs[c]
			duringClose := 0 // calls begun after Close began
			for n := 0; closeAfter > 0 || n < k.o.calls; n++ {
				if stop.Load() {
					return
				}
				// A Close that does not return while the design goes on
				// answering would otherwise have the clients call, and the
				// history grow, until the hang bound: the load stops after
				// a client's share of calls.
				if closing.Load() {
					if duringClose++; duringClose > k.o.calls {
						return
					}
				}
				afterClose := closed.Load()
				cmd := k.gen(rng)
				log.mu.Lock()
				log.pending = true
				log.mu.Unlock()
				sl.begin(n)
				start := clock.Add(1)
				r, err := st.Do(context.Background(), cmd)
				end := clock.Add(1)
				sl.end()
				log.mu.Lock()
				log.calls = append(log.calls, call[C, R]{client: c, n: n, cmd: cmd, r: r, err: err, start: start, end: end})
				log.pending = false
				log.mu.Unlock()
				if returned.Add(1) == int64(closeAfter) {
					closeUnderLoad()
				}
				if afterClose || errors.Is(err, store.ErrClosed) {
					return
				}
			}
		})
	}
	clientsDone := doneWaiting(&wg)
	runErr := func() error {
		if err := w.wait(clientsDone); err != nil {
			return err
		}
		if closing.Load() {
			if closeErr != nil {
				return fmt.Errorf("Close: %w", closeErr)
			}
			return nil
		}
		// Each client made its calls; or, calling until refused, the
		// clients were all refused (wrongly) before closeAfter returned.
		if err := closeWatched(st, w); err != nil {
			return err
		}
		rec.closed()
		return nil
	}()
	if runErr != nil {
		stop.Store(true)
	}
	h := &history[C, R]{}
	for i := range logs {
		logs[i].mu.Lock()
		h.calls = append(h.calls, logs[i].calls...)
		if logs[i].pending {
			h.pending++
		}
		logs[i].mu.Unlock()
	}
	h.applies, h.overlaps, h.late, _ = rec.snapshot()
	slices.SortFunc(h.applies, func(a, b applied[C, R]) int { return cmp.Compare(a.begin, b.begin) })
	rec.mu.Lock()
	h.shards = rec.shards
	h.closedAt = rec.closedAt
	rec.mu.Unlock()
	return h, runErr
}

// doneWaiting returns a channel closed once wg is done.
func doneWaiting(wg *sync.WaitGroup) <-chan struct{} {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	return done
}

// either returns a channel closed once a or b is.
func either(a, b <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		select {
		case <-a:
		case <-b:
		}
		close(done)
	}()
	return done
}

// closeWatched calls Close and waits for it within the watch's bound.
func closeWatched[C, R any](st store.Store[C, R], w *watch) error {
	var err error
	if hang := w.run(w.slot("Close", nil), 0, func() { err = st.Close() }); hang != nil {
		return hang
	}
	if err != nil {
		return fmt.Errorf("Close: %w", err)
	}
	return nil
}

// doWatched calls Do once and waits for it within the watch's bound; hang
// is non-nil if it did not return.
func doWatched[C, R any](ctx context.Context, st store.Store[C, R], w *watch, cmd C) (r R, err, hang error) {
	hang = w.run(w.slot(fmt.Sprintf("Do(%+v)", cmd), nil), 0, func() { r, err = st.Do(ctx, cmd) })
	return r, err, hang
}

// verify checks a history: no forbidden overlap, nothing applied or
// answered after Close returned, a replay of the applies on a fresh machine,
// in an order that fits when they ran, gives what they gave, and every
// answer came from an Apply of that command made during its call. Together:
// the calls took effect one at a time, each between its start and its end —
// linearizable.
func (k *kit[C, R]) verify(h *history[C, R]) error {
	var errs []error
	if len(h.overlaps) > 0 {
		errs = append(errs, fmt.Errorf("Apply ran concurrently with a conflicting Apply (%d times); first: %s", len(h.overlaps), h.overlaps[0]))
	}
	if len(h.late) > 0 {
		errs = append(errs, fmt.Errorf("Apply after Close returned (%d times); first: %s", len(h.late), h.late[0]))
	}
	if err := lateAnswers(h); err != nil {
		errs = append(errs, err)
	}
	if err := k.replay(h); err != nil {
		errs = append(errs, err)
	}
	if err := k.match(h); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// lateAnswers: a call that began after Close returned must be refused.
func lateAnswers[C, R any](h *history[C, R]) error {
	if h.closedAt == 0 {
		return nil
	}
	var first *call[C, R]
	n := 0
	for i, c := range h.calls {
		if c.start > h.closedAt && !errors.Is(c.err, store.ErrClosed) {
			if n++; first == nil || c.start < first.start {
				first = &h.calls[i]
			}
		}
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("Do begun after Close returned (at tick %d) was not refused with store.ErrClosed (%d times); first: call %d of client %d, %+v -> %s during ticks %d..%d",
		h.closedAt, n, first.n, first.client, first.cmd, answer(first.r, first.err), first.start, first.end)
}

// replay looks for an order of the recorded applies, each taking effect
// while it ran (so one that ended before another began comes first), in
// which a fresh machine gives every apply what it gave under the design.
// Applies that did not overlap have one order; those that did (reads,
// disjoint shards, ApplyAtomic) are tried in each order that fits, depth
// first, within the search budget (SearchBudget), past which the result is
// ErrInconclusive rather than a verdict. No such order means two conflicting commands did overlap, or the
// machine's declarations (ReadOnly, ShardsOf, ApplyAtomic) let commands
// run together that are not safe together, or the machine is not
// deterministic.
func (k *kit[C, R]) replay(h *history[C, R]) error {
	aps := h.applies
	n := len(aps)
	fresh := func() store.Machine[C, R] {
		m := k.machine()
		if s, ok := m.(store.Sharded[C]); ok && h.shards > 0 {
			s.SetShards(h.shards)
		}
		return m
	}
	// A search that rebuilds the machine by replay at every step costs
	// about n² applies; a history that needs more is hopeless.
	budget := 2*n*n + 100_000
	if k.o.budget > 0 {
		budget = k.o.budget
	}
	total := budget
	deepest := 0 // the most applies placed in an order that fits
	order := make([]int, 0, n)
	placed := make([]bool, n)
	m := fresh()
	type miss struct {
		depth, apply int
		r            R
		err          error
		order        []int
	}
	worst := miss{depth: -1} // the deepest point the search reached, for the report
	// restore puts m back in the state after the applies placed so far:
	// from saved, a clone of it, if there is one; else by replay.
	restore := func(saved store.Machine[C, R]) {
		if saved != nil {
			m = k.clone(saved)
			return
		}
		m = fresh()
		for _, i := range order {
			m.Apply(aps[i].cmd)
		}
		budget -= len(order)
	}
	// With Clone, states are also compared, with reflect.DeepEqual on the
	// machine's value (unless a machine's fresh copies do not compare
	// equal: it holds a func, say). Two uses follow. The search does not
	// search from the same set of applies and the same state twice: many
	// orders of overlapping applies lead to one state, and a dead end found
	// late would otherwise be found again under each. And where several
	// applies could go next, one that leaves the state as it was (a read, or
	// a write of what was there) is tried first: an apply that answered
	// from a state the others then changed can go nowhere later, and trying
	// those others first finds that out only deep in the search. Without
	// Clone, a copy costs a replay from the start, and the search only
	// tries declared reads first.
	compare := k.clone != nil && reflect.DeepEqual(stateOf(fresh()), stateOf(fresh()))
	memo := map[string][]store.Machine[C, R]{}
	memoStates := 0
	bits := make([]byte, (n+7)/8)
	var search func(first int) bool
	search = func(first int) bool {
		for first < n && placed[first] {
			first++
		}
		if first == n {
			return true
		}
		// Candidates to go next: unplaced applies that began before every
		// unplaced one ended.
		minEnd := aps[first].end
		var cands []int
		for j := first; j < n && aps[j].begin < minEnd; j++ {
			if !placed[j] {
				cands = append(cands, j)
				minEnd = min(minEnd, aps[j].end)
			}
		}
		cands = slices.DeleteFunc(cands, func(j int) bool { return aps[j].begin > minEnd })
		// Earliest end first: of two applies alike, the one that ended
		// first may go first in any order the other could (an exchange
		// argument), so only it is tried below.
		slices.SortFunc(cands, func(a, b int) int { return cmp.Compare(aps[a].end, aps[b].end) })
		// Declared reads first: they leave the state as it was, so one
		// placed now is never in the others' way.
		slices.SortStableFunc(cands, func(a, b int) int {
			switch ra, rb := aps[a].read, aps[b].read; {
			case ra == rb:
				return 0
			case ra:
				return -1
			}
			return 1
		})
		var uniq []int
		for _, j := range cands {
			// An apply just like one already tried here (same command, same
			// answer) leads to the same states: the search would only
			// repeat itself.
			if !slices.ContainsFunc(uniq, func(i int) bool {
				return reflect.DeepEqual(aps[i].cmd, aps[j].cmd) && k.equal(aps[i].r, aps[j].r) && sameMessage(aps[i].err, aps[j].err)
			}) {
				uniq = append(uniq, j)
			}
		}
		place := func(j int) bool {
			placed[j] = true
			order = append(order, j)
			bits[j/8] |= 1 << (j % 8)
			deepest = max(deepest, len(order))
			ok := search(first)
			placed[j] = false
			order = order[:len(order)-1]
			bits[j/8] &^= 1 << (j % 8)
			return ok
		}
		// tryOne applies the j-th apply to m and reports whether it gave
		// what it gave under the design.
		tryOne := func(j int) bool {
			r, err := m.Apply(aps[j].cmd)
			budget--
			if !k.equal(r, aps[j].r) || !sameMessage(err, aps[j].err) {
				if len(order) > worst.depth {
					worst = miss{len(order), j, r, err, slices.Clone(order)}
				}
				return false
			}
			return true
		}
		if len(uniq) == 1 {
			if budget <= 0 {
				return false
			}
			if !tryOne(uniq[0]) {
				return false
			}
			return place(uniq[0])
		}

		if k.clone == nil {
			// Without Clone every step back is a replay from the start, so
			// each apply that fits is searched from at once, in order.
			dirty := false
			for _, j := range uniq {
				if budget <= 0 {
					return false
				}
				if dirty {
					restore(nil)
				}
				dirty = true
				if tryOne(j) && place(j) {
					return true
				}
			}
			return false
		}
		key := string(bits)
		if compare {
			for _, st := range memo[key] {
				if reflect.DeepEqual(stateOf(st), stateOf(m)) {
					return false // searched from here before
				}
			}
		}
		pre := k.clone(m) // the state here; restore clones it, never changes it
		if compare && memoStates < maxMemoStates {
			memo[key] = append(memo[key], pre)
			memoStates++
		}
		// In the order of their ends, each apply that fits here and leaves
		// the state as it was is searched from at once; those that fit
		// and change it are searched from after.
		var changing []int
		current := -1 // the apply m holds the state after, if any
		dirty := false
		for _, j := range uniq {
			if budget <= 0 {
				return false
			}
			if dirty {
				restore(pre)
			}
			dirty, current = true, -1
			if !tryOne(j) {
				continue
			}
			if compare && reflect.DeepEqual(stateOf(m), stateOf(pre)) {
				if place(j) {
					return true
				}
				continue
			}
			changing = append(changing, j)
			current = j
		}
		for _, j := range changing {
			if budget <= 0 {
				return false
			}
			if current != j {
				restore(pre)
				if !tryOne(j) {
					continue // the machine is not deterministic
				}
			}
			current = -1
			if place(j) {
				return true
			}
		}
		return false
	}
	if search(0) {
		return nil
	}
	if budget <= 0 {
		return fmt.Errorf("%w after %d applies (the search budget): of the %d recorded applies, %d overlapped another, so their order was searched for; "+
			"the search placed at most %d of them in an order that fits, and neither finished one nor ruled them all out. "+
			"Exclusion and the answers were checked in full. Give Clone, use fewer Calls, or raise SearchBudget",
			ErrInconclusive, total-budget, n, overlapping(aps), deepest)
	}
	a := aps[worst.apply]
	shown := worst.order[max(0, len(worst.order)-describeLimit+1):]
	var b strings.Builder
	fmt.Fprintf(&b, "the furthest order found (replay it on a fresh machine to reproduce; %d applies before these):\n", len(worst.order)-len(shown))
	for _, i := range shown {
		fmt.Fprintf(&b, "  %+v -> %s (ticks %d..%d)\n", aps[i].cmd, answer(aps[i].r, aps[i].err), aps[i].begin, aps[i].end)
	}
	fmt.Fprintf(&b, "  %+v -> %s under the design (ticks %d..%d)\n", a.cmd, answer(a.r, a.err), a.begin, a.end)
	return fmt.Errorf("no order of the applies, each taking effect while it ran, gives what they gave: replayed after %d others, %+v gives %s, but gave %s under the design\n%s",
		worst.depth, a.cmd, answer(worst.r, worst.err), answer(a.r, a.err), b.String())
}

// maxMemoStates bounds the states the replay's search remembers.
const maxMemoStates = 1 << 16

// stateOf is what the replay's memo compares of a machine: the user's
// machine, without the wrapper the options may add.
func stateOf[C, R any](m store.Machine[C, R]) any {
	if a, ok := m.(*augmented[C, R]); ok {
		return a.m
	}
	return m
}

// ErrInconclusive is wrapped by the error of a check whose search for an
// order of the applies ran out of its budget (SearchBudget) before it found
// one or ruled every one out: the history was neither shown linearizable
// nor shown not to be.
var ErrInconclusive = errors.New("storetest: replay inconclusive")

// overlapping counts the applies (in the order they began) that ran while
// another did: one began before it ended, or it began before one ended.
func overlapping[C, R any](aps []applied[C, R]) int {
	n := 0
	var maxEnd int64 = -1 // of the applies before i
	for i, a := range aps {
		if a.begin < maxEnd || (i+1 < len(aps) && aps[i+1].begin < a.end) {
			n++
		}
		maxEnd = max(maxEnd, a.end)
	}
	return n
}

// match pairs every answered call with an Apply of its command that began
// after the call started, ended before it returned and gave exactly its
// answer, each Apply used once; and every Apply with a call. The pairing is
// the classic one for points and intervals: calls in order of their end,
// each taking the earliest fitting Apply.
func (k *kit[C, R]) match(h *history[C, R]) error {
	calls := slices.Clone(h.calls)
	slices.SortFunc(calls, func(a, b call[C, R]) int { return cmp.Compare(a.end, b.end) })
	used := make([]bool, len(h.applies))
	nAnswered, abandoned := 0, h.pending // a call still in the design may have been applied
	for _, c := range calls {
		switch {
		case errors.Is(c.err, store.ErrClosed):
			continue // refused: never applied
		case !answered(c.err):
			abandoned++ // may have been applied after all, for no one
			continue
		}
		nAnswered++
		first, _ := slices.BinarySearchFunc(h.applies, c.start, func(a applied[C, R], t int64) int { return cmp.Compare(a.begin, t) })
		found := false
		for i := first; i < len(h.applies) && h.applies[i].begin < c.end; i++ {
			a := h.applies[i]
			if !used[i] && a.end < c.end && reflect.DeepEqual(a.cmd, c.cmd) && k.equal(a.r, c.r) && sameError(a.err, c.err) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			return fmt.Errorf("call %d of client %d, %+v -> %s during ticks %d..%d: %s\n%s",
				c.n, c.client, c.cmd, answer(c.r, c.err), c.start, c.end, k.explain(h, c), k.describeAround(h, c))
		}
	}
	if extra := len(h.applies) - nAnswered; extra > abandoned {
		i := slices.Index(used, false)
		a := h.applies[i]
		return fmt.Errorf("%d Apply calls answered no caller, %d abandoned calls could explain (a command applied twice, or for no one); first: %+v at ticks %d..%d",
			extra, abandoned, a.cmd, a.begin, a.end)
	}
	return nil
}

// explain says why no Apply fits a call, from the Applies of its command.
func (k *kit[C, R]) explain(h *history[C, R], c call[C, R]) string {
	for _, a := range h.applies {
		if !reflect.DeepEqual(a.cmd, c.cmd) || !k.equal(a.r, c.r) || !sameError(a.err, c.err) {
			continue
		}
		switch {
		case a.begin > c.end:
			return fmt.Sprintf("the answer came before the command was applied, after its call returned (ticks %d..%d): calls may take effect against real time", a.begin, a.end)
		case a.end > c.end:
			return fmt.Sprintf("the call returned while its Apply (ticks %d..%d) was still running", a.begin, a.end)
		case a.begin < c.start:
			return fmt.Sprintf("the only Apply that gave this answer (ticks %d..%d) ran before the call started", a.begin, a.end)
		}
	}
	for _, a := range h.applies {
		if reflect.DeepEqual(a.cmd, c.cmd) && a.begin > c.start {
			if a.begin > c.end {
				return fmt.Sprintf("the command was applied after its call returned (ticks %d..%d), in another order than it was answered: the Apply gave %s",
					a.begin, a.end, answer(a.r, a.err))
			}
			break
		}
	}
	return "no Apply of this command gave this answer: the design changed or invented it"
}

// describeLimit is how many lines of history a failure prints.
const describeLimit = 12

// describeApplies prints the applies up to and including the i-th, the last
// describeLimit of them.
func (k *kit[C, R]) describeApplies(h *history[C, R], i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the applies in the order they ran (replay them on a fresh machine to reproduce; %d before these):\n", max(0, i+1-describeLimit))
	for j := max(0, i+1-describeLimit); j <= i; j++ {
		a := h.applies[j]
		fmt.Fprintf(&b, "  #%d %+v -> %s (ticks %d..%d)\n", j, a.cmd, answer(a.r, a.err), a.begin, a.end)
	}
	return b.String()
}

// describeAround prints the applies that ran near a failing call.
func (k *kit[C, R]) describeAround(h *history[C, R], c call[C, R]) string {
	last, _ := slices.BinarySearchFunc(h.applies, c.end, func(a applied[C, R], t int64) int { return cmp.Compare(a.begin, t) })
	if last == 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "no Apply began before the call returned; the first ones:\n")
		for j := 0; j < min(describeLimit, len(h.applies)); j++ {
			a := h.applies[j]
			fmt.Fprintf(&b, "  #%d %+v -> %s (ticks %d..%d)\n", j, a.cmd, answer(a.r, a.err), a.begin, a.end)
		}
		return b.String()
	}
	return k.describeApplies(h, min(last, len(h.applies))-1)
}

// answered: the call got the machine's answer, not a refusal by the store
// or its context.
func answered(err error) bool {
	return !errors.Is(err, store.ErrClosed) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

func answer[R any](r R, err error) string {
	if err != nil {
		return fmt.Sprintf("error %q", err)
	}
	return fmt.Sprintf("%+v", r)
}

// sameError: the design passes the machine's error through, so it is the
// same value (compared deeply where the error's type is not comparable).
func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	if reflect.TypeOf(a).Comparable() && reflect.TypeOf(b).Comparable() {
		return a == b
	}
	return reflect.DeepEqual(a, b)
}

// sameMessage: two machines' errors for one command, equal by message.
func sameMessage(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error()
}
