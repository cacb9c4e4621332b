package server

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workload"
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

// Workloads are the names of the server's workloads, in the order of the API.
func Workloads() []string { return workloadNames[:] }

// Serves reports whether the mode serves the named workload (one of
// Workloads) with the full contract; noop "serves" everything, emptily.
func (m Mode) Serves(name string) bool {
	for wl, n := range workloadNames {
		if n == name {
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
	switch wl {
	case wlCounter:
		return m.design.Supports(store.CapabilitiesOf(store.Machine[workload.CounterCmd, int64](workload.NewCounter())))
	case wlBank:
		b, err := workload.NewBank(workload.BankConfig{Accounts: 1})
		if err != nil {
			return err
		}
		return m.design.Supports(store.CapabilitiesOf(store.Machine[workload.BankCmd, workload.BankResult](b)))
	case wlKV:
		return m.design.Supports(store.CapabilitiesOf(store.Machine[workload.KVCmd, workload.KVResult](workload.NewKV())))
	}
	return fmt.Errorf("no workload %d", wl)
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

// stores holds one store per workload, all of one design; a workload the
// design does not serve has nil stores and the reason in its refusal. The
// measured stores serve the data RPCs; the admin RPCs use the bare ones, so
// that GetStats and Reset do not appear in the latency they report.
type stores struct {
	counter, counterBare store.Store[workload.CounterCmd, int64]
	bank, bankBare       store.Store[workload.BankCmd, workload.BankResult]
	kv, kvBare           store.Store[workload.KVCmd, workload.KVResult]

	// refused[wl] is the error a data RPC of an unserved workload answers.
	refused [numWorkloads]error

	queues  []store.QueueReporter
	closers []func() error
	ms      *machines

	// serial[wl] reports the busy time of workload wl's store's serial
	// resources (nil where the design does not serve it); serial0 holds
	// each reading at the window's start.
	serial  [numWorkloads]store.SerialReporter
	serial0 atomic.Pointer[[numWorkloads]store.SerialStats]
}

// The data RPCs' stores are the bare ones measured, then bounded by in (nil:
// no bound), so that a refused call is not in the store latency.
func newStores(mode Mode, cfg store.Config, ms *machines, m *metrics, in *inflight) (*stores, error) {
	st := &stores{ms: ms}
	var errs []error
	var err error
	st.counterBare, err = newStore(st, mode, cfg, wlCounter, ms.counter)
	errs = append(errs, err)
	st.bankBare, err = newStore(st, mode, cfg, wlBank, ms.bank)
	errs = append(errs, err)
	st.kvBare, err = newStore(st, mode, cfg, wlKV, ms.kv)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		st.close()
		return nil, err
	}
	st.newSerialWindow()
	if st.counterBare != nil {
		st.counter = bound(measure(st.counterBare, m, wlCounter, func(c workload.CounterCmd) int { return int(c.Op) }), in)
	}
	if st.bankBare != nil {
		st.bank = bound(measure(st.bankBare, m, wlBank, func(c workload.BankCmd) int { return int(c.Op) }), in)
	}
	if st.kvBare != nil {
		st.kv = bound(measure(st.kvBare, m, wlKV, func(c workload.KVCmd) int { return int(c.Op) }), in)
	}
	return st, nil
}

// newStore wraps mc in the mode's design and registers it for Close (and, for
// an owner design, for the queue gauges). A workload the design does not
// serve gets a nil store and its refusal, not an error.
func newStore[C, R any](st *stores, mode Mode, cfg store.Config, wl int, mc store.Machine[C, R]) (store.Store[C, R], error) {
	s, err := store.Wrap(*mode.design, mc, cfg)
	if errors.Is(err, store.ErrUnsupported) {
		st.refused[wl] = fmt.Errorf("%w: mode %s does not serve workload %s: %w", errNotServed, mode.Name, workloadNames[wl], err)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st.closers = append(st.closers, s.Close)
	if q, ok := s.(store.QueueReporter); ok && mode.design.Owner {
		st.queues = append(st.queues, q)
	}
	if r, ok := s.(store.SerialReporter); ok {
		st.serial[wl] = r
	}
	return s, nil
}

func (st *stores) queueHighWater() int64 {
	var hw int64
	for _, q := range st.queues {
		hw = max(hw, q.QueueHighWater())
	}
	return hw
}

func (st *stores) resetQueueHighWater() {
	for _, q := range st.queues {
		q.ResetQueueHighWater()
	}
}

// serialStats reads every served workload's serial stats since the store
// was made.
func (st *stores) serialStats() [numWorkloads]store.SerialStats {
	var out [numWorkloads]store.SerialStats
	for wl, r := range st.serial {
		if r != nil {
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
	now, then := st.serialStats(), st.serial0.Load()
	var out []*pb.SerialDemand
	for wl, r := range st.serial {
		if r == nil {
			continue
		}
		w := now[wl].Sub(then[wl])
		out = append(out, &pb.SerialDemand{
			Workload: workloadNames[wl], Resources: uint32(w.Resources()),
			BusySeconds: w.Total().Seconds(), MaxBusySeconds: w.Max().Seconds(),
			SampleEvery: uint32(w.SampleEvery),
		})
	}
	return out
}

// queueLen is the number of commands waiting in every queue now.
func (st *stores) queueLen() int64 {
	var n int64
	for _, q := range st.queues {
		n += int64(q.QueueLen())
	}
	return n
}

// close closes every store; each lets its accepted commands finish first.
// Then it closes the logs, which have nothing left to sync: every command
// was committed before it was answered.
func (st *stores) close() {
	for _, c := range st.closers {
		_ = c() // the designs' Close never fails
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
