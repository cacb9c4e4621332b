package server

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/store"
)

// Mode is one way of serving the API: a store design from the registry
// applied to every workload it serves, or noop.
type Mode struct {
	Name string
	// Doc is one line for -help and the docs.
	Doc string
	// design is the registry row; nil for noop, which keeps no state.
	design *store.Design
}

// noopMode answers every data RPC with an empty response.
var noopMode = Mode{Name: "noop", Doc: "answers every data RPC with an empty response and touches no store: the harness's ceiling"}

// StoreBacked reports whether the mode keeps state, so that the invariants
// (money conserved, no lost increment) mean something.
func (m Mode) StoreBacked() bool { return m.design != nil }

// Design is the mode's registry row; ok is false for noop.
func (m Mode) Design() (d store.Design, ok bool) {
	if m.design == nil {
		return store.Design{}, false
	}
	return *m.design, true
}

// Serves reports whether the mode serves the named workload (one of
// Workloads) with the full contract; noop "serves" everything, emptily.
func (m Mode) Serves(name string) bool {
	for wl, w := range workloads {
		if w.Name() == name {
			return m.servesErr(wl) == nil
		}
	}
	return false
}

// servesErr is nil if the mode serves workload wl, or says why not.
func (m Mode) servesErr(wl int) error {
	if m.design == nil {
		return nil
	}
	return m.design.Supports(workloads[wl].caps())
}

// Modes lists the modes in the order -help shows them: every design of the
// store registry, then noop.
func Modes() []Mode {
	var modes []Mode
	for _, d := range store.Designs() {
		modes = append(modes, Mode{Name: d.Name, Doc: d.Doc, design: &d})
	}
	return append(modes, noopMode)
}

// ModeNames returns the names of Modes, comma-separated.
func ModeNames() string {
	var names []string
	for _, m := range Modes() {
		names = append(names, m.Name)
	}
	return strings.Join(names, ", ")
}

// LookupMode finds a mode by its exact name.
func LookupMode(name string) (Mode, error) {
	for _, m := range Modes() {
		if m.Name == name {
			return m, nil
		}
	}
	if name == "" {
		return Mode{}, fmt.Errorf("no mode given; modes: %s", ModeNames())
	}
	return Mode{}, fmt.Errorf("unknown mode %q; modes: %s", name, ModeNames())
}

// errNotServed marks a workload the mode's design does not serve: the data
// RPCs answer UNIMPLEMENTED (toStatus).
var errNotServed = errors.New("not served")

// stores are the workloads' stores, all of one design, made from the
// machines' instances (a workload the design does not serve keeps its
// refusal). The measured stores serve the data RPCs; the admin RPCs use the
// bare ones, so that GetStats and Reset do not appear in the latency they
// report.
type stores struct {
	ms *machines
	// serial0 holds each workload's serial stats at the window's start.
	serial0 atomic.Pointer[[]store.SerialStats]
}

// The data RPCs' stores are the bare ones measured, then bounded by in (nil:
// no bound), so that a refused call is not in the store latency.
func newStores(mode Mode, cfg store.Config, ms *machines, m *metrics, in *inflight) (*stores, error) {
	st := &stores{ms: ms}
	var errs []error
	for wl, w := range ms.wls {
		errs = append(errs, w.serve(mode, cfg, m, wl, in))
	}
	if err := errors.Join(errs...); err != nil {
		st.close()
		return nil, err
	}
	st.newSerialWindow()
	return st, nil
}

func (st *stores) queueHighWater() int64 {
	var hw int64
	for _, w := range st.ms.wls {
		if q := w.queue(); q != nil {
			hw = max(hw, q.QueueHighWater())
		}
	}
	return hw
}

func (st *stores) resetQueueHighWater() {
	for _, w := range st.ms.wls {
		if q := w.queue(); q != nil {
			q.ResetQueueHighWater()
		}
	}
}

// owner reports whether an owner design serves some workload (the queue
// gauges are exposed then).
func (st *stores) owner() bool {
	for _, w := range st.ms.wls {
		if w.queue() != nil {
			return true
		}
	}
	return false
}

// serialStats reads every served workload's serial stats since the store
// was made.
func (st *stores) serialStats() []store.SerialStats {
	out := make([]store.SerialStats, len(st.ms.wls))
	for wl, w := range st.ms.wls {
		if r := w.serial(); r != nil {
			out[wl], _ = r.SerialStats()
		}
	}
	return out
}

// newSerialWindow starts a new window of serial stats.
func (st *stores) newSerialWindow() {
	s := st.serialStats()
	st.serial0.Store(&s)
}

// serialWindow is each served workload's serial demand in the window, in
// workload order.
func (st *stores) serialWindow() []*pb.SerialDemand {
	now, then := st.serialStats(), *st.serial0.Load()
	var out []*pb.SerialDemand
	for wl, w := range st.ms.wls {
		if w.serial() == nil {
			continue
		}
		d := now[wl].Sub(then[wl])
		out = append(out, &pb.SerialDemand{
			Workload: workloads[wl].Name(), Resources: uint32(d.Resources()),
			BusySeconds: d.Total().Seconds(), MaxBusySeconds: d.Max().Seconds(),
			SampleEvery: uint32(d.SampleEvery),
		})
	}
	return out
}

// queueLen is the number of commands waiting in every queue now.
func (st *stores) queueLen() int64 {
	var n int64
	for _, w := range st.ms.wls {
		if q := w.queue(); q != nil {
			n += int64(q.QueueLen())
		}
	}
	return n
}

// close closes every store; each lets its accepted commands finish first.
// Then it closes the logs, which have nothing left to sync: every command
// was committed before it was answered.
func (st *stores) close() {
	for _, w := range st.ms.wls {
		_ = w.close() // the designs' Close never fails
	}
	_ = st.ms.closeLogs()
}

// CanRun says why the mode cannot run with a durability ("none" or "wal"),
// or nil when it can: -list-modes and New ask the same question.
func (m Mode) CanRun(durability string) error {
	if durability == "" || durability == DurabilityNone {
		return nil
	}
	if !m.StoreBacked() {
		return fmt.Errorf("mode %s keeps no state: it cannot be durable", m.Name)
	}
	if d, ok := m.Design(); ok && durability == DurabilityWAL && !d.Durable {
		return fmt.Errorf("design %s cannot be durable (-durability %s): it has no point at which to commit before answering", d.Name, DurabilityWAL)
	}
	return nil
}
