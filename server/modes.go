package server

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workload"
)

// Mode is one way of serving the API: a store design applied to every
// workload, or noop.
type Mode struct {
	Name string
	// Doc is one line for -help and the docs.
	Doc string
	// design names the store design; "" for noop, which keeps no state.
	design string
}

// StoreBacked reports whether the mode keeps state, so that the invariants
// (money conserved, no lost increment) mean something.
func (m Mode) StoreBacked() bool { return m.design != "" }

// Serves reports whether the mode serves the workload (TEMPORARY on branch
// wal until the registry lands: every mode serves every workload).
func (m Mode) Serves(workloadName string) bool { return true }

// Modes lists the modes in the order -help shows them. Adding a design is a
// line here and a case in newStore.
func Modes() []Mode {
	return []Mode{
		{Name: "inputQ", design: "inputQ", Doc: "one owner goroutine per workload applies commands from a bounded channel (store.InputQ)"},
		{Name: "mutex", design: "mutex", Doc: "a sync.Mutex around each workload (store.Mutex)"},
		{Name: "noop", Doc: "answers every data RPC with an empty response and touches no store: the harness's ceiling"},
	}
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

// queueGauge is what a design with a queue reports (store.InputQ).
type queueGauge interface {
	QueueHighWater() int64
	ResetQueueHighWater() int64
}

// stores holds one store per workload, all of one design. The measured
// stores serve the data RPCs; the admin RPCs use the bare ones, so that
// GetStats and Reset do not appear in the latency they report.
type stores struct {
	counter, counterBare store.Store[workload.CounterCmd, int64]
	bank, bankBare       store.Store[workload.BankCmd, workload.BankResult]
	kv, kvBare           store.Store[workload.KVCmd, workload.KVResult]

	queues  []queueGauge
	closers []func() error
	ms      *machines
}

func newStores(design string, ms *machines, m *metrics) *stores {
	st := &stores{ms: ms}
	st.counterBare = newStore(st, design, ms.counter)
	st.bankBare = newStore(st, design, ms.bank)
	st.kvBare = newStore(st, design, ms.kv)
	st.counter = measure(st.counterBare, m, wlCounter, func(c workload.CounterCmd) int { return int(c.Op) })
	st.bank = measure(st.bankBare, m, wlBank, func(c workload.BankCmd) int { return int(c.Op) })
	st.kv = measure(st.kvBare, m, wlKV, func(c workload.KVCmd) int { return int(c.Op) })
	return st
}

// newStore wraps m in the named design and registers it for Close (and, for a
// queue, for the high-water mark).
func newStore[C, R any](st *stores, design string, m store.Machine[C, R]) store.Store[C, R] {
	switch design {
	case "mutex":
		s := store.NewMutex(m)
		st.closers = append(st.closers, s.Close)
		return s
	case "inputQ":
		q := store.NewInputQ(m)
		st.closers = append(st.closers, q.Close)
		st.queues = append(st.queues, q)
		return q
	}
	panic(fmt.Sprintf("server: mode table names unknown design %q", design))
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

// close closes every store; each lets its accepted commands finish first.
// Then it closes the logs, which have nothing left to sync: every command
// was committed before it was answered.
func (st *stores) close() {
	for _, c := range st.closers {
		_ = c() // the designs' Close never fails
	}
	_ = st.ms.closeLogs()
}
