package server

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/locklab/locklab/backend"
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

// ServesOn reports whether the mode serves the named workload with its state
// on backend (one of Backends). A workload that cannot live on backend stays
// in memory (ServesOn answers as Serves); the bank can live in a database.
func (m Mode) ServesOn(name, backend string) bool {
	for wl, w := range workloads {
		if w.Name() == name {
			return m.servesErrOn(wl, backend) == nil
		}
	}
	return false
}

// servesErr is nil if the mode serves workload wl in memory, or says why
// not.
func (m Mode) servesErr(wl int) error { return m.servesErrOn(wl, BackendMemory) }

func (m Mode) servesErrOn(wl int, backend string) error {
	if m.design == nil {
		return nil
	}
	if !workloads[wl].hasBackend(backend) {
		backend = BackendMemory
	}
	return m.design.Supports(workloads[wl].caps(backend))
}

// Values of Config.Backend, where the bank's state lives (package backend
// names them).
const (
	// BackendMemory keeps every workload's state in the server's memory.
	BackendMemory = backend.Memory
	// BackendMySQL keeps the bank in a MariaDB or MySQL database
	// (package workload/dbbank); the others stay in memory.
	BackendMySQL = backend.MySQL
)

// Backends lists the values of Config.Backend (and -backend).
func Backends() []string { return backend.Names() }

// WorkloadsOn names the workloads whose state can live on backend: every
// workload in memory, the bank in a database.
func WorkloadsOn(backend string) []string {
	var names []string
	for _, w := range workloads {
		if w.hasBackend(backend) {
			names = append(names, w.Name())
		}
	}
	return names
}

// ErrBackend marks a backend the server cannot reach at start: a runtime
// failure, unlike a bad flag.
var ErrBackend = errors.New("server: backend")

// CanServeOn says why the mode cannot run with its state on backend (one of
// Backends; "" is memory) and durability, or nil when it can: it must serve
// every workload that lives on that backend, and at least one workload.
// -list-modes and New ask the same question.
func (m Mode) CanServeOn(backend, durability string) error {
	if backend == "" {
		backend = BackendMemory
	}
	if !slices.Contains(Backends(), backend) {
		return fmt.Errorf("backend %q: want one of %s", backend, strings.Join(Backends(), ", "))
	}
	if m.design == nil {
		if backend != BackendMemory {
			return fmt.Errorf("mode %s keeps no state: it has nothing to keep in %s", m.Name, backend)
		}
		return nil
	}
	if backend != BackendMemory && durability == DurabilityWAL {
		return fmt.Errorf("backend %s keeps the bank durable in the database: it takes no write-ahead log (-durability %s)", backend, durability)
	}
	served := 0
	for wl, w := range workloads {
		err := m.servesErrOn(wl, backend)
		if err == nil {
			served++
			continue
		}
		if backend != BackendMemory && w.hasBackend(backend) {
			return fmt.Errorf("mode %s cannot serve the %s with its state in %s: %w", m.Name, w.Name(), backend, err)
		}
	}
	if served == 0 {
		var others []string
		for _, o := range Modes() {
			for wl := range workloads {
				if o.design != nil && o.servesErrOn(wl, backend) == nil {
					others = append(others, o.Name)
					break
				}
			}
		}
		return fmt.Errorf("mode %s serves no workload with its state in %s (the designs that serve one: %s)", m.Name, backend, strings.Join(others, ", "))
	}
	return nil
}

// ModesOn names the modes that can run with their state on backend.
func ModesOn(backend string) []string {
	var names []string
	for _, m := range Modes() {
		if m.CanServeOn(backend, DurabilityNone) == nil {
			names = append(names, m.Name)
		}
	}
	return names
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
	// batching: the design's serial resource takes commands in batches
	// (an owner design, or one that commits per group), whose clocks
	// count them.
	batching bool
}

// The data RPCs' stores are the bare ones measured, then bounded by in (nil:
// no bound), so that a refused call is not in the store latency.
func newStores(mode Mode, cfg store.Config, ms *machines, m *metrics, in *inflight) (*stores, error) {
	st := &stores{ms: ms}
	if d, ok := mode.Design(); ok {
		st.batching = d.Owner || d.GroupCommit
	}
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
			Waits:       d.Wait.Count(), WaitMeanNs: float64(d.Wait.Mean()),
			WaitP50Ns: float64(d.Wait.Quantile(0.5)), WaitP99Ns: float64(d.Wait.Quantile(0.99)),
			Batches: uint64(d.Batches), BatchCommands: uint64(d.BatchCommands),
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
