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
	"time"

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
	design   string
	seed     uint64
	calls    []call[C, R]
	applies  []applied[C, R] // in the order they began
	overlaps []string
	late     []string
	shards   int // the shard count the design set; 0 if none
}

// hangLimit bounds how long a run may take before the design counts as hung:
// generous, for the race detector on a shared machine.
const hangLimit = 2 * time.Minute

// record runs clients goroutines against a new store of s around a
// recording machine and returns the history, with the store closed. With
// closeAfter 0 each client makes the kit's number of calls and the store is
// closed after the last; otherwise clients call until they are refused, and
// the store is closed under them once closeAfter calls have returned.
func (k *kit[C, R]) record(s subject[C, R], seed uint64, clients, closeAfter int) (*history[C, R], error) {
	var clock atomic.Int64
	rec := newRecorder(k.machine(), &clock)
	st, err := s.new(rec)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot build the store: %w", s.name, err)
	}
	calls := make([][]call[C, R], clients)
	var returned atomic.Int64
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(c)))
			for n := 0; closeAfter > 0 || n < k.o.calls; n++ {
				cmd := k.gen(rng)
				start := clock.Add(1)
				r, err := st.Do(context.Background(), cmd)
				calls[c] = append(calls[c], call[C, R]{client: c, n: n, cmd: cmd, r: r, err: err, start: start, end: clock.Add(1)})
				returned.Add(1)
				if errors.Is(err, store.ErrClosed) {
					return
				}
			}
		})
	}
	if closeAfter > 0 {
		deadline := time.Now().Add(hangLimit)
		for returned.Load() < int64(closeAfter) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Microsecond)
		}
		if err := closeWithin(st, hangLimit); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		rec.closed()
	}
	if !waitGroupWithin(&wg, hangLimit) {
		return nil, fmt.Errorf("%s: a call neither answered nor was refused within %v", s.name, hangLimit)
	}
	if closeAfter == 0 {
		if err := closeWithin(st, hangLimit); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		rec.closed()
	}
	h := &history[C, R]{design: s.name, seed: seed, calls: slices.Concat(calls...)}
	h.applies, h.overlaps, h.late, _ = rec.snapshot()
	slices.SortFunc(h.applies, func(a, b applied[C, R]) int { return cmp.Compare(a.begin, b.begin) })
	rec.mu.Lock()
	h.shards = rec.shards
	rec.mu.Unlock()
	return h, nil
}

func waitGroupWithin(wg *sync.WaitGroup, limit time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(limit):
		return false
	}
}

func closeWithin[C, R any](st store.Store[C, R], limit time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- st.Close() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("Close: %v", err)
		}
		return nil
	case <-time.After(limit):
		return fmt.Errorf("Close did not return within %v", limit)
	}
}

// verify checks a history: no forbidden overlap, a replay of the applies on
// a fresh machine, in an order that fits when they ran, gives what they gave, and every answer came from an Apply
// of that command made during its call. Together: the calls took effect one
// at a time, each between its start and its end — linearizable.
func (k *kit[C, R]) verify(h *history[C, R]) error {
	var errs []error
	if len(h.overlaps) > 0 {
		errs = append(errs, fmt.Errorf("Apply ran concurrently with a conflicting Apply (%d times); first: %s", len(h.overlaps), h.overlaps[0]))
	}
	if len(h.late) > 0 {
		errs = append(errs, fmt.Errorf("Apply after Close returned (%d times); first: %s", len(h.late), h.late[0]))
	}
	if err := k.replay(h); err != nil {
		errs = append(errs, err)
	}
	if err := k.match(h); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("design %s, Seed(%d):\n%w", h.design, h.seed, errors.Join(errs...))
}

// replay looks for an order of the recorded applies, each taking effect
// while it ran (so one that ended before another began comes first), in
// which a fresh machine gives every apply what it gave under the design.
// Applies that did not overlap have one order; those that did (reads,
// disjoint shards, ApplyAtomic) are tried in each order that fits, depth
// first. No such order means two conflicting commands did overlap, or the
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
		var saved store.Machine[C, R]
		if len(cands) > 1 && k.clone != nil {
			saved = k.clone(m)
		}
		for ci, j := range cands {
			if budget <= 0 {
				return false
			}
			// An apply just like one already tried here (same command, same
			// answer) leads to the same states: the search would only
			// repeat itself.
			if slices.ContainsFunc(cands[:ci], func(i int) bool {
				return reflect.DeepEqual(aps[i].cmd, aps[j].cmd) && k.equal(aps[i].r, aps[j].r) && sameMessage(aps[i].err, aps[j].err)
			}) {
				continue
			}
			if ci > 0 {
				restore(saved)
			}
			r, err := m.Apply(aps[j].cmd)
			budget--
			if !k.equal(r, aps[j].r) || !sameMessage(err, aps[j].err) {
				if len(order) > worst.depth {
					worst = miss{len(order), j, r, err, slices.Clone(order)}
				}
				continue
			}
			placed[j] = true
			order = append(order, j)
			if search(first) {
				return true
			}
			placed[j] = false
			order = order[:len(order)-1]
		}
		return false
	}
	if search(0) {
		return nil
	}
	if budget <= 0 {
		return fmt.Errorf("no order of the %d applies was found within the search's budget: use fewer Calls, or give Clone", n)
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

// match pairs every answered call with an Apply of its command that began
// after the call started, ended before it returned and gave exactly its
// answer, each Apply used once; and every Apply with a call. The pairing is
// the classic one for points and intervals: calls in order of their end,
// each taking the earliest fitting Apply.
func (k *kit[C, R]) match(h *history[C, R]) error {
	calls := slices.Clone(h.calls)
	slices.SortFunc(calls, func(a, b call[C, R]) int { return cmp.Compare(a.end, b.end) })
	used := make([]bool, len(h.applies))
	var nAnswered, abandoned int
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
