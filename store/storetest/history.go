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

	"github.com/anishathalye/porcupine"

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
// a fresh machine gives what they gave, and every answer came from an Apply
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
	atomicApplies := slices.ContainsFunc(h.applies, func(a applied[C, R]) bool { return a.atomicApply })
	if atomicApplies {
		// ApplyAtomic calls overlap by contract: the order they ran in is
		// not on the record, so it is searched for.
		if err := k.search(h); err != nil {
			errs = append(errs, err)
		}
	} else if err := k.replay(h); err != nil {
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

// replay applies the recorded applies in the order they began to a fresh
// machine: each must give what it gave under the design. A difference means
// two conflicting commands did overlap, or the machine's declarations
// (ReadOnly, ShardsOf) let commands run together that do not commute, or the
// machine is not deterministic.
func (k *kit[C, R]) replay(h *history[C, R]) error {
	m := k.machine()
	if h.shards > 0 {
		if s, ok := m.(store.Sharded[C]); ok {
			s.SetShards(h.shards)
		}
	}
	for i, a := range h.applies {
		r, err := m.Apply(a.cmd)
		if k.equal(r, a.r) && sameMessage(err, a.err) {
			continue
		}
		return fmt.Errorf("replayed in the order they ran, Apply #%d gives %s, but gave %s under the design\n%s",
			i, answer(r, err), answer(a.r, a.err), k.describeApplies(h, i))
	}
	return nil
}

// search asks porcupine for an order of the calls, each taking effect
// between its start and end, that a sequential machine explains: the
// machine is the model, copied with Clone at every step.
func (k *kit[C, R]) search(h *history[C, R]) error {
	if k.clone == nil {
		return fmt.Errorf("the design applies with ApplyAtomic, whose calls may overlap: checking their order needs storetest.Clone")
	}
	type out struct {
		r   R
		err error
	}
	var ops []porcupine.Operation
	for _, c := range h.calls {
		if answered(c.err) {
			ops = append(ops, porcupine.Operation{ClientId: c.client, Input: c.cmd, Call: c.start, Output: out{c.r, c.err}, Return: c.end})
		}
	}
	model := porcupine.Model{
		Init: func() any { return k.machine() },
		Step: func(state, input, output any) (bool, any) {
			m := k.clone(state.(store.Machine[C, R]))
			r, err := m.Apply(input.(C))
			o := output.(out)
			return k.equal(r, o.r) && sameMessage(err, o.err), m
		},
		DescribeOperation: func(input, output any) string {
			o := output.(out)
			return fmt.Sprintf("%+v -> %s", input, answer(o.r, o.err))
		},
	}
	switch porcupine.CheckOperationsTimeout(model, ops, time.Minute) {
	case porcupine.Ok:
		return nil
	case porcupine.Unknown:
		return fmt.Errorf("the search for an order of %d calls timed out: use fewer Calls", len(ops))
	}
	return fmt.Errorf("no order of the %d calls, each taking effect between its start and end, explains every answer\n%s",
		len(ops), k.describeCalls(h.calls, len(h.calls)))
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

// describeCalls prints the first n calls in order of their start, at most
// describeLimit.
func (k *kit[C, R]) describeCalls(calls []call[C, R], n int) string {
	cs := slices.Clone(calls)
	slices.SortFunc(cs, func(a, b call[C, R]) int { return cmp.Compare(a.start, b.start) })
	var b strings.Builder
	fmt.Fprintf(&b, "the first calls by start (client: command -> answer [ticks]):\n")
	for _, c := range cs[:min(n, describeLimit)] {
		fmt.Fprintf(&b, "  %d: %+v -> %s [%d..%d]\n", c.client, c.cmd, answer(c.r, c.err), c.start, c.end)
	}
	return b.String()
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
