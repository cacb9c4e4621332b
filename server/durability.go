package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/internal/work"
	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/server/internal/wal"
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

// machines are the workloads' machines as the designs get them: bare, or
// inside the work and durability decorators, one instance per row of
// workloads.
type machines struct {
	wls []instance // in the order of workloads

	logs       []*wal.Log // closed once the stores are
	replayed   int64      // records replayed at start, all logs
	recovery   time.Duration
	syncs0     atomic.Uint64 // wal syncs and records at the window's start
	records0   atomic.Uint64
	durability string
	work       time.Duration
}

// newMachines builds the machines cfg asks for. With durability, each
// workload has its own log in DataDir/<workload>; all are checked before
// any is opened, so a bad one leaves the others untouched, then each is
// recovered (its snapshot restored, its records replayed).
func newMachines(cfg Config) (_ *machines, err error) {
	ms := &machines{durability: cfg.Durability, work: cfg.Work}
	if ms.durability == "" {
		ms.durability = DurabilityNone
	}
	switch ms.durability {
	case DurabilityNone, DurabilityWAL:
	default:
		return nil, fmt.Errorf("durability %q: want one of %v", cfg.Durability, Durabilities())
	}
	var spin *work.Spinner
	if cfg.Work > 0 {
		s, err := work.NewKind(cfg.WorkKind, cfg.Work)
		if err != nil {
			return nil, err
		}
		spin = &s
	}
	for _, w := range workloads {
		in, err := w.instance(cfg, spin)
		if err != nil {
			for _, made := range ms.wls {
				_ = made.close() // a database's connections
			}
			return nil, err
		}
		ms.wls = append(ms.wls, in)
	}
	if ms.durability == DurabilityNone {
		return ms, nil
	}
	if cfg.DataDir == "" {
		return nil, errors.New("durability wal needs a data directory")
	}
	if fi, err := os.Stat(cfg.DataDir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("%w %s is not a directory", ErrDataDir, cfg.DataDir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %w", ErrDataDir, err)
	}
	dir := func(wl int) string { return filepath.Join(cfg.DataDir, workloads[wl].Name()) }
	for wl := range workloads {
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
	for wl, in := range ms.wls {
		log, info, err := in.openLog(dir(wl), opts)
		if err != nil {
			return nil, err
		}
		ms.logs = append(ms.logs, log)
		ms.replayed += info.Records
		ms.recovery += info.Duration
	}
	ms.newWindow()
	return ms, nil
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
