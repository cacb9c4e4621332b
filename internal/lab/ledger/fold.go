package ledger

import (
	"errors"
	"fmt"
	"io"
	"time"

	"golang.org/x/exp/trace"

	"github.com/locklab/locklab/server/calltrace"
)

// Call is one call's time, whole and by category.
type Call struct {
	Total time.Duration
	// By is the call's time in each category, in Categories' order; it
	// sums to Total.
	By []time.Duration
}

// Ledger is the calls of one trace.
type Ledger struct {
	Calls []Call
	// Partial counts the calls the trace cut: begun before it started or
	// not ended when it stopped. They are left out: their time is not all
	// in the trace.
	Partial int
}

// Read reads an execution trace (runtime/trace's format, as
// /debug/pprof/trace serves it) and puts every call's time, region by
// region (calltrace.Region), in Categories by Classify.
func Read(r io.Reader) (*Ledger, error) { return read(r, Classify) }

// goroutine is what the sweep knows of one goroutine: its state since
// when, and the call it is in, if any.
type goroutine struct {
	st    State
	since trace.Time
	call  *Call
}

// read is Read with the mapping given, so that a test can break it.
func read(r io.Reader, classify func(State) string) (*Ledger, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("ledger: not an execution trace: %w", err)
	}
	led := &Ledger{}
	gs := map[trace.GoID]*goroutine{}
	open := map[trace.GoID]*goroutine{} // the goroutines in a call
	stw := false
	get := func(id trace.GoID) *goroutine {
		g := gs[id]
		if g == nil {
			g = &goroutine{st: State{Go: trace.GoUndetermined}}
			gs[id] = g
		}
		return g
	}
	// flush puts g's time since its last event in its call, if it is in
	// one, under the state it has had since. Time never runs back: an
	// event stamped before the last one counted (clocks of two threads a
	// hair apart) adds nothing and moves nothing.
	flush := func(g *goroutine, t trace.Time) {
		if t <= g.since {
			return
		}
		if g.call != nil {
			st := g.st
			st.STW = stw
			i, ok := index[classify(st)]
			if !ok {
				i = index[Unattributed]
			}
			g.call.By[i] += time.Duration(t - g.since)
		}
		g.since = t
	}
	for {
		ev, err := tr.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("ledger: reading the trace: %w", err)
		}
		t := ev.Time()
		switch ev.Kind() {
		case trace.EventStateTransition:
			st := ev.StateTransition()
			if st.Resource.Kind != trace.ResourceGoroutine {
				continue
			}
			g := get(st.Resource.Goroutine())
			flush(g, t)
			_, to := st.Goroutine()
			g.st.Go, g.st.Reason = to, st.Reason
		case trace.EventRangeBegin, trace.EventRangeActive, trace.EventRangeEnd:
			rg := ev.Range()
			on := ev.Kind() != trace.EventRangeEnd
			switch {
			case isSTW(rg.Name):
				for _, g := range open {
					flush(g, t)
				}
				stw = on
			case isAssist(rg.Name) && rg.Scope.Kind == trace.ResourceGoroutine:
				g := get(rg.Scope.Goroutine())
				flush(g, t)
				g.st.Assist = on
			}
		case trace.EventRegionBegin:
			if ev.Region().Type != calltrace.Region {
				continue
			}
			id := ev.Goroutine()
			g := get(id)
			if g.call != nil { // never ended: a call does not nest
				led.Partial++
			}
			flush(g, t) // to t: the call's time starts here
			g.call = &Call{By: make([]time.Duration, len(Categories))}
			open[id] = g
		case trace.EventRegionEnd:
			if ev.Region().Type != calltrace.Region {
				continue
			}
			id := ev.Goroutine()
			g := get(id)
			if g.call == nil { // begun before the trace
				led.Partial++
				continue
			}
			flush(g, t)
			g.call.Total = sum(g.call.By)
			led.Calls = append(led.Calls, *g.call)
			g.call = nil
			delete(open, id)
		}
	}
	led.Partial += len(open)
	return led, nil
}

// sum is a call's time over its categories: its whole time, less any
// instant its events ran back over.
func sum(by []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range by {
		t += d
	}
	return t
}
