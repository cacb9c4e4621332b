package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/durable"
	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/wal"
	"github.com/locklab/locklab/work"
	"github.com/locklab/locklab/workload"
)

// Values of Config.Durability.
const (
	// DurabilityNone keeps the state in memory only.
	DurabilityNone = "none"
	// DurabilityWAL logs every state-changing command to a write-ahead log
	// in Config.DataDir and makes it durable before the caller is answered.
	DurabilityWAL = "wal"
)

// Durabilities lists the values of Config.Durability (and -durability).
func Durabilities() []string { return []string{DurabilityNone, DurabilityWAL} }

// ErrDataDir marks a data directory the server cannot use (not a directory,
// no permission, a log of another format version, corruption that is not a
// torn tail): a runtime failure, unlike a bad flag.
var ErrDataDir = errors.New("server: data directory")

// machines are the three workloads' machines as the designs get them: bare,
// or inside the work and durability decorators.
type machines struct {
	counter store.Machine[workload.CounterCmd, int64]
	bank    store.Machine[workload.BankCmd, workload.BankResult]
	kv      store.Machine[workload.KVCmd, workload.KVResult]

	logs       []*wal.Log // closed once the stores are
	replayed   int64      // records replayed at start, all logs
	recovery   time.Duration
	syncs0     atomic.Uint64 // wal syncs and records at the window's start
	records0   atomic.Uint64
	durability string
	work       time.Duration
}

// newMachines builds the machines cfg asks for. With durability, each
// workload has its own log in DataDir/<workload>; all three are checked
// before any is opened, so a bad one leaves the others untouched, then each
// is recovered (its snapshot restored, its records replayed).
func newMachines(cfg Config) (_ *machines, err error) {
	b, err := workload.NewBank(cfg.Bank)
	if err != nil {
		return nil, err
	}
	c, kv := workload.NewCounter(), workload.NewKV()
	ms := &machines{counter: c, bank: b, kv: kv, durability: cfg.Durability, work: cfg.Work}
	if ms.durability == "" {
		ms.durability = DurabilityNone
	}
	if cfg.Work > 0 {
		spin := work.NewSpinner(cfg.Work, work.Calibrate())
		ms.counter = work.New(ms.counter, spin)
		ms.bank = work.New(ms.bank, spin)
		ms.kv = work.New(ms.kv, spin)
	}
	switch ms.durability {
	case DurabilityNone:
		return ms, nil
	case DurabilityWAL:
	default:
		return nil, fmt.Errorf("durability %q: want one of %v", cfg.Durability, Durabilities())
	}
	if cfg.DataDir == "" {
		return nil, errors.New("durability wal needs a data directory")
	}
	if fi, err := os.Stat(cfg.DataDir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("%w %s is not a directory", ErrDataDir, cfg.DataDir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %w", ErrDataDir, err)
	}
	dir := func(wl int) string { return filepath.Join(cfg.DataDir, workloadNames[wl]) }
	for wl := range numWorkloads {
		if err := wal.Check(dir(wl)); err != nil {
			return nil, fmt.Errorf("%w %s: %w", ErrDataDir, cfg.DataDir, err)
		}
	}
	defer func() {
		if err != nil {
			ms.closeLogs()
		}
	}()
	opts := wal.Options{SnapshotEvery: cfg.SnapshotEvery, Logger: cfg.Logger}
	if ms.counter, err = openDurable(ms, dir(wlCounter), ms.counter, workload.CounterLog{C: c}, opts); err != nil {
		return nil, err
	}
	if ms.bank, err = openDurable(ms, dir(wlBank), ms.bank, workload.BankLog{B: b}, opts); err != nil {
		return nil, err
	}
	if ms.kv, err = openDurable(ms, dir(wlKV), ms.kv, workload.KVLog{KV: kv}, opts); err != nil {
		return nil, err
	}
	ms.newWindow()
	return ms, nil
}

func openDurable[C, R any](ms *machines, dir string, m store.Machine[C, R], codec durable.Codec[C, R], opts wal.Options) (store.Machine[C, R], error) {
	d, info, err := durable.Open(dir, m, codec, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDataDir, err)
	}
	ms.logs = append(ms.logs, d.Log())
	ms.replayed += info.Records
	ms.recovery += info.Duration
	return d, nil
}

// walStats returns the fdatasyncs and records of every log since the
// window's start.
func (ms *machines) walStats() (syncs, records uint64) {
	for _, l := range ms.logs {
		s, r := l.Stats()
		syncs, records = syncs+s, records+r
	}
	return syncs - ms.syncs0.Load(), records - ms.records0.Load()
}

// report fills GetStats' durability and work fields.
func (ms *machines) report(out *pb.GetStatsResponse) {
	out.Durability = ms.durability
	out.WalRecordsReplayed = uint64(ms.replayed)
	out.RecoverySeconds = ms.recovery.Seconds()
	out.WalSyncs, out.WalRecords = ms.walStats()
	out.WorkNs = ms.work.Nanoseconds()
}

// newWindow starts the window walStats counts from.
func (ms *machines) newWindow() {
	var syncs, records uint64
	for _, l := range ms.logs {
		s, r := l.Stats()
		syncs, records = syncs+s, records+r
	}
	ms.syncs0.Store(syncs)
	ms.records0.Store(records)
}

// closeLogs closes the logs; call it once no store applies commands.
func (ms *machines) closeLogs() error {
	var err error
	for _, l := range ms.logs {
		err = errors.Join(err, l.Close())
	}
	return err
}
