package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

var (
	// ErrCorrupt: a record, header or snapshot that is bad and is not a torn
	// tail; Open refuses the log.
	ErrCorrupt = errors.New("wal: corrupt log")
	// ErrVersion: a file written in another format version.
	ErrVersion = errors.New("wal: unsupported format version")
	// ErrClosed: the log has been closed.
	ErrClosed = errors.New("wal: closed")
	// ErrLocked: another process has the log open.
	ErrLocked = errors.New("wal: log in use by another process")
	// ErrTooLarge: a record longer than Options.MaxRecord.
	ErrTooLarge = errors.New("wal: record too large")
)

// Defaults of Options.
const (
	// DefaultSnapshotEvery bounds replay to 100,000 records after the
	// snapshot: a fraction of a second to replay here, and at the ~6,000
	// synced writes/s of a per-command-sync design one snapshot every ~16 s.
	DefaultSnapshotEvery = 100_000
	// DefaultMaxRecord is above locklab's largest record (a Put of a 1 MiB
	// value under a 256-byte key) and small enough that a corrupt length is
	// seen as one.
	DefaultMaxRecord = 2 << 20
)

// Options configure a Log. The zero value works.
type Options struct {
	// SnapshotEvery is how many records make SnapshotDue true (0:
	// DefaultSnapshotEvery; negative: never).
	SnapshotEvery int
	// MaxRecord is the longest record accepted (0: DefaultMaxRecord).
	MaxRecord int
	// Logger receives the one line Open writes when it cuts a torn tail
	// (nil: log.Default()).
	Logger *log.Logger
}

func (o Options) withDefaults() Options {
	if o.SnapshotEvery == 0 {
		o.SnapshotEvery = DefaultSnapshotEvery
	}
	if o.MaxRecord == 0 {
		o.MaxRecord = DefaultMaxRecord
	}
	if o.Logger == nil {
		o.Logger = log.Default()
	}
	return o
}

// RecoveryInfo says what Open found.
type RecoveryInfo struct {
	// Snapshot is the index of the snapshot restored (0: none).
	Snapshot uint64
	// SnapshotBytes is the size of the restored state.
	SnapshotBytes int
	// Records is how many records were replayed after the snapshot.
	Records int64
	// Segments is how many segments were read.
	Segments int
	// BytesCut is the size of the torn tail cut off the newest segment
	// (0: none), CutFile the segment it was cut from.
	BytesCut int64
	CutFile  string
	// Duration is how long Open took, replay included.
	Duration time.Duration
}

// Log is an open write-ahead log. Append, Sync, SnapshotDue and Snapshot may
// be called from any goroutine.
type Log struct {
	dir  string
	opts Options
	lock *os.File // flock'd for as long as the log is open

	// syncMu serialises writers of the file: Sync, Snapshot, Close. It is
	// taken before mu.
	syncMu sync.Mutex
	// file, index and err are guarded by syncMu.
	file  *os.File // the newest segment, open for appending
	index uint64   // its index
	err   error    // sticky: after a failed write or fdatasync nothing is durable any more

	// syncs and appended count fdatasyncs of appended records and records
	// appended, since Open (Stats).
	syncs, appended atomic.Uint64

	// mu guards the in-memory tail; Append takes only mu.
	mu      sync.Mutex
	buf     []byte // records appended since the last Sync took the buffer
	spare   []byte // the other buffer, reused so steady state does not allocate
	records int    // records in the newest segment
	closed  bool
	bad     error // a record Append refused; reported by the next Sync
}

// file names
const (
	segPrefix  = "seg-"
	segSuffix  = ".wal"
	snapPrefix = "snap-"
	snapSuffix = ".snap"
	tmpSuffix  = ".tmp"
	lockName   = "LOCK"
)

func segName(i uint64) string  { return fmt.Sprintf("%s%016d%s", segPrefix, i, segSuffix) }
func snapName(i uint64) string { return fmt.Sprintf("%s%016d%s", snapPrefix, i, snapSuffix) }

func parseIndex(name, prefix, suffix string) (uint64, bool) {
	if !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, suffix) {
		return 0, false
	}
	i, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(name, prefix), suffix), 10, 64)
	return i, err == nil
}

// Open opens the log in dir, creating dir if it does not exist, and recovers:
// restore is called with the newest snapshot's state (not at all if there is
// none), then replay with every record after it, in order. A torn tail is cut
// and reported in one line to Options.Logger. Open refuses, changing nothing,
// a path that is not a directory, a directory it cannot write, a file of
// another format version (ErrVersion), corruption other than a torn tail
// (ErrCorrupt) and a log another process has open (ErrLocked).
func Open(dir string, opts Options, restore, replay func([]byte) error) (*Log, RecoveryInfo, error) {
	start := time.Now()
	opts = opts.withDefaults()
	var info RecoveryInfo
	exists, err := check(dir)
	if err != nil {
		return nil, info, err
	}
	if !exists {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, info, fmt.Errorf("wal: creating the log directory: %w", err)
		}
	}
	segs, snaps, err := scanDir(dir)
	if err != nil {
		return nil, info, err
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, info, err
	}
	l := &Log{dir: dir, opts: opts, lock: lock}
	if err := l.recover(segs, snaps, restore, replay, &info); err != nil {
		if l.file != nil {
			_ = l.file.Close()
		}
		_ = lock.Close()
		return nil, info, err
	}
	info.Duration = time.Since(start)
	if info.BytesCut > 0 {
		opts.Logger.Printf("wal: %s: cut a torn tail of %d bytes from %s; restored snapshot %d (%d bytes) and replayed %d records in %v",
			dir, info.BytesCut, info.CutFile, info.Snapshot, info.SnapshotBytes, info.Records, info.Duration.Round(time.Microsecond))
	}
	return l, info, nil
}

// Check reports, changing nothing, whether Open would refuse dir for what
// is already there: a path that is not a directory, a directory this process
// may not read and write, a file of another format version or not a
// log's. A server with several logs checks them all before opening any, so
// that a bad one leaves the others untouched too. It does not read records.
func Check(dir string) error {
	_, err := check(dir)
	return err
}

func check(dir string) (exists bool, err error) {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("wal: %w", err)
	}
	if !fi.IsDir() {
		return true, fmt.Errorf("wal: %s is not a directory", dir)
	}
	if err := syscall.Access(dir, 0x7); err != nil { // R_OK|W_OK|X_OK
		return true, fmt.Errorf("wal: %s: %w (need read, write and search permission)", dir, err)
	}
	segs, snaps, err := scanDir(dir)
	if err != nil {
		return true, err
	}
	for _, i := range segs {
		if err := checkFileHeader(filepath.Join(dir, segName(i)), segmentMagic, i, i == segs[len(segs)-1]); err != nil {
			return true, err
		}
	}
	for _, i := range snaps {
		if err := checkFileHeader(filepath.Join(dir, snapName(i)), snapshotMagic, i, false); err != nil {
			return true, err
		}
	}
	return true, nil
}

// scanDir lists the segment and snapshot indexes in dir, ascending.
func scanDir(dir string) (segs, snaps []uint64, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("wal: %w", err)
	}
	for _, e := range entries {
		if i, ok := parseIndex(e.Name(), segPrefix, segSuffix); ok {
			segs = append(segs, i)
		} else if i, ok := parseIndex(e.Name(), snapPrefix, snapSuffix); ok {
			snaps = append(snaps, i)
		}
	}
	slices.Sort(segs)
	slices.Sort(snaps)
	return segs, snaps, nil
}

// checkFileHeader reads and checks a file's header. The newest segment may be
// shorter than a header (a crash as it was created): recover rewrites it.
func checkFileHeader(path string, magic [8]byte, index uint64, mayBeTorn bool) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	defer f.Close()
	var b [headerLen]byte
	n, err := f.ReadAt(b[:], 0)
	if n < headerLen {
		if mayBeTorn {
			return nil
		}
		return fmt.Errorf("%w: %s is shorter than its header (%v)", ErrCorrupt, path, err)
	}
	return checkHeader(b[:], magic, index, path)
}

// lockDir takes the directory's lock file; creating it is also where a
// directory the process may not write is refused.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, dir)
		}
		return nil, fmt.Errorf("wal: locking %s: %w", dir, err)
	}
	return f, nil
}

func (l *Log) recover(segs, snaps []uint64, restore, replay func([]byte) error, info *RecoveryInfo) error {
	var base uint64 // the newest snapshot's index: segments before it are covered
	if len(snaps) > 0 {
		base = snaps[len(snaps)-1]
		state, err := readSnapshot(filepath.Join(l.dir, snapName(base)), base)
		if err != nil {
			return err
		}
		if err := restore(state); err != nil {
			return fmt.Errorf("wal: restoring %s: %w", snapName(base), err)
		}
		info.Snapshot, info.SnapshotBytes = base, len(state)
	}
	live := slices.DeleteFunc(slices.Clone(segs), func(i uint64) bool { return i < base })
	for k, i := range live {
		if k > 0 && i != live[k-1]+1 {
			return fmt.Errorf("%w: %s: segment %d is missing", ErrCorrupt, l.dir, live[k-1]+1)
		}
	}
	if len(live) > 0 && live[0] != base && base > 0 {
		return fmt.Errorf("%w: %s: segment %d, the first after snapshot %d, is missing", ErrCorrupt, l.dir, base, base)
	}
	for k, i := range live {
		n, err := l.replaySegment(i, k == len(live)-1, replay, info)
		info.Records += n
		info.Segments++
		if err != nil {
			return err
		}
	}
	if len(live) == 0 {
		if err := l.createSegment(base); err != nil {
			return err
		}
	} else {
		l.index = live[len(live)-1]
		f, err := os.OpenFile(filepath.Join(l.dir, segName(l.index)), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return fmt.Errorf("wal: %w", err)
		}
		l.file = f
	}
	return l.removeBefore(base)
}

func readSnapshot(path string, index uint64) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	if len(b) < headerLen+12 {
		return nil, fmt.Errorf("%w: %s is shorter than a snapshot", ErrCorrupt, path)
	}
	if err := checkHeader(b, snapshotMagic, index, path); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint64(b[headerLen:])
	state := b[headerLen+12:]
	if uint64(len(state)) != n || crc32.Checksum(state, castagnoli) != binary.LittleEndian.Uint32(b[headerLen+8:]) {
		return nil, fmt.Errorf("%w: %s: snapshot checksum or length mismatch", ErrCorrupt, path)
	}
	return state, nil
}

// replaySegment replays segment i's records. In the newest segment a bad
// record with nothing valid after it is a torn tail: it is cut off.
func (l *Log) replaySegment(i uint64, newest bool, replay func([]byte) error, info *RecoveryInfo) (int64, error) {
	path := filepath.Join(l.dir, segName(i))
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("wal: %w", err)
	}
	if len(b) < headerLen { // torn as it was created: checkFileHeader let only the newest through
		if err := rewriteHeader(path, i); err != nil {
			return 0, err
		}
		info.BytesCut, info.CutFile = int64(len(b)), segName(i)
		return 0, nil
	}
	var n int64
	off := headerLen
	for off < len(b) {
		payload, next, ok := recordAt(b, off, l.opts.MaxRecord)
		if !ok {
			break
		}
		if err := replay(payload); err != nil {
			return n, fmt.Errorf("wal: replaying the record at offset %d of %s: %w", off, segName(i), err)
		}
		n++
		off = next
	}
	if off == len(b) {
		if newest {
			l.records = int(n)
		}
		return n, nil
	}
	if !newest {
		return n, fmt.Errorf("%w: %s: bad record at offset %d in a segment that is not the newest", ErrCorrupt, path, off)
	}
	if p, ok := validAfter(b, off, l.opts.MaxRecord); ok {
		return n, fmt.Errorf("%w: %s: bad record at offset %d with a valid record after it at offset %d", ErrCorrupt, path, off, p)
	}
	if err := os.Truncate(path, int64(off)); err != nil {
		return n, fmt.Errorf("wal: cutting the torn tail of %s: %w", path, err)
	}
	if err := syncPath(path); err != nil {
		return n, err
	}
	l.records = int(n)
	info.BytesCut, info.CutFile = int64(len(b)-off), segName(i)
	return n, nil
}

func rewriteHeader(path string, i uint64) error {
	if err := os.WriteFile(path, appendHeader(nil, segmentMagic, i), 0o644); err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	return syncPath(path)
}

// createSegment creates segment i, durably, and makes it the one appended to.
func (l *Log) createSegment(i uint64) error {
	path := filepath.Join(l.dir, segName(i))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	if _, err := f.Write(appendHeader(nil, segmentMagic, i)); err != nil {
		_ = f.Close()
		return fmt.Errorf("wal: %w", err)
	}
	if err := fdatasync(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("wal: %w", err)
	}
	if err := syncPath(l.dir); err != nil {
		_ = f.Close()
		return err
	}
	if l.file != nil {
		_ = l.file.Close()
	}
	l.file, l.index = f, i
	return nil
}

// removeBefore removes the segments and snapshots a snapshot at index base
// covers, and temporary files a crash left.
func (l *Log) removeBefore(base uint64) error {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	removed := false
	for _, e := range entries {
		name := e.Name()
		i, seg := parseIndex(name, segPrefix, segSuffix)
		j, snap := parseIndex(name, snapPrefix, snapSuffix)
		if (seg && i < base) || (snap && j < base) || strings.HasSuffix(name, tmpSuffix) {
			if err := os.Remove(filepath.Join(l.dir, name)); err != nil {
				return fmt.Errorf("wal: %w", err)
			}
			removed = true
		}
	}
	if removed {
		return syncPath(l.dir)
	}
	return nil
}

// syncPath fsyncs a file or directory by name.
func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("wal: fsync %s: %w", path, err)
	}
	return nil
}

// Append adds a record to the in-memory tail; it is durable once a later Sync
// returns nil. The record is copied. Errors (a record over MaxRecord, a
// closed log) are reported by the next Sync, so that Append never fails
// between applying a command and logging it.
func (l *Log) Append(record []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.bad != nil: // the log has failed: keeping records would only grow memory
	case l.closed:
		l.bad = ErrClosed
	case len(record) > l.opts.MaxRecord:
		l.bad = fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, len(record), l.opts.MaxRecord)
	default:
		l.buf = appendRecord(l.buf, record)
		l.records++
		l.appended.Add(1)
	}
}

// fail makes err sticky; syncMu is held.
func (l *Log) fail(err error) error {
	l.err = err
	l.mu.Lock()
	if l.bad == nil {
		l.bad = err
	}
	l.buf = nil
	l.mu.Unlock()
	return err
}

// Sync writes everything appended so far and fdatasyncs it: one write and one
// fdatasync however many records, and none if another Sync already covered
// them. After a failed write or fdatasync every later Sync fails: what the
// kernel dropped cannot be told apart from what it kept.
func (l *Log) Sync() error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	return l.syncLocked()
}

func (l *Log) syncLocked() error {
	if l.err != nil {
		return l.err
	}
	l.mu.Lock()
	out, bad, closed := l.buf, l.bad, l.closed && l.file == nil
	l.buf, l.spare = l.spare, nil
	l.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if bad != nil {
		return l.fail(bad)
	}
	if len(out) == 0 {
		l.giveBack(out)
		return nil
	}
	if _, err := l.file.Write(out); err != nil {
		return l.fail(fmt.Errorf("wal: writing %s: %w", segName(l.index), err))
	}
	if err := fdatasync(l.file); err != nil {
		return l.fail(fmt.Errorf("wal: fdatasync %s: %w", segName(l.index), err))
	}
	l.syncs.Add(1)
	l.giveBack(out)
	return nil
}

func (l *Log) giveBack(b []byte) {
	l.mu.Lock()
	if l.spare == nil {
		l.spare = b[:0]
	}
	l.mu.Unlock()
}

// SnapshotDue reports whether Options.SnapshotEvery records have been
// appended since the last snapshot.
func (l *Log) SnapshotDue() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.opts.SnapshotEvery > 0 && l.records >= l.opts.SnapshotEvery
}

// Snapshot records state as the machine's state after every record appended
// so far, starts a new segment and removes what the snapshot covers. The
// caller must make sure no command is applied or appended between taking
// state and Snapshot returning. A crash at any point leaves a log that
// recovers to the same state: the old segments go only once the snapshot is
// durable.
func (l *Log) Snapshot(state []byte) error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	if err := l.syncLocked(); err != nil {
		return err
	}
	next := l.index + 1
	if err := l.createSegment(next); err != nil {
		return l.fail(err)
	}
	l.mu.Lock()
	l.records = 0
	l.mu.Unlock()
	if err := l.writeSnapshot(next, state); err != nil {
		// The old segments are still there: the log stays whole, but a
		// snapshot that cannot be written will not be written later either.
		return l.fail(err)
	}
	return l.removeBefore(next)
}

func (l *Log) writeSnapshot(i uint64, state []byte) error {
	path := filepath.Join(l.dir, snapName(i))
	tmp := path + tmpSuffix
	b := appendHeader(make([]byte, 0, headerLen+12+len(state)), snapshotMagic, i)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(state)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(state, castagnoli))
	b = append(b, state...)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("wal: writing snapshot %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	return syncPath(l.dir)
}

// Close syncs what was appended and closes the log. It is safe to call more
// than once.
func (l *Log) Close() error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	if l.file == nil {
		return nil
	}
	err := l.syncLocked()
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	if l.file != nil {
		err = errors.Join(err, l.file.Close())
		l.file = nil
	}
	if l.lock != nil {
		err = errors.Join(err, l.lock.Close()) // closing releases the flock
		l.lock = nil
	}
	return err
}

// Stats returns how many fdatasyncs Sync ran (one per Sync that had records
// to write) and how many records were appended, since Open.
func (l *Log) Stats() (syncs, records uint64) { return l.syncs.Load(), l.appended.Load() }

// Dir is the directory the log lives in.
func (l *Log) Dir() string { return l.dir }
