package wal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder collects what Open restores and replays.
type recorder struct {
	snapshot []byte
	records  []string
}

func (r *recorder) restore(b []byte) error {
	r.snapshot = bytes.Clone(b)
	r.records = nil
	return nil
}

func (r *recorder) replay(b []byte) error {
	r.records = append(r.records, string(b))
	return nil
}

// open opens dir with a logger writing into logged.
func open(t *testing.T, dir string, opts Options) (*Log, *recorder, RecoveryInfo, *bytes.Buffer, error) {
	t.Helper()
	var logged bytes.Buffer
	opts.Logger = log.New(&logged, "", 0)
	r := &recorder{}
	l, info, err := Open(dir, opts, r.restore, r.replay)
	if err == nil {
		t.Cleanup(func() { _ = l.Close() })
	}
	return l, r, info, &logged, err
}

func rec(i int) string { return fmt.Sprintf("record-%03d-%s", i, strings.Repeat("x", i%7)) }

// writeLog writes n records, syncing every few, and closes the log.
func writeLog(t *testing.T, dir string, n int) {
	t.Helper()
	l, _, _, _, err := open(t, dir, Options{})
	require.NoError(t, err)
	for i := range n {
		l.Append([]byte(rec(i)))
		if i%3 == 2 {
			require.NoError(t, l.Sync())
		}
	}
	require.NoError(t, l.Close())
}

func want(n int) []string {
	var out []string
	for i := range n {
		out = append(out, rec(i))
	}
	return out
}

func onlySegment(t *testing.T, dir string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, segPrefix+"*"))
	require.NoError(t, err)
	require.Len(t, m, 1)
	return m[0]
}

// recordOffsets returns where each record of a segment starts.
func recordOffsets(t *testing.T, b []byte) []int {
	t.Helper()
	var offs []int
	for off := headerLen; off < len(b); {
		_, next, ok := recordAt(b, off, DefaultMaxRecord)
		require.True(t, ok, "offset %d", off)
		offs = append(offs, off)
		off = next
	}
	return offs
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 50)
	l, r, info, logged, err := open(t, dir, Options{})
	require.NoError(t, err)
	assert.Equal(t, want(50), r.records)
	assert.Nil(t, r.snapshot, "no snapshot was written")
	assert.Equal(t, int64(50), info.Records)
	assert.Zero(t, info.BytesCut)
	assert.Empty(t, logged.String(), "a clean recovery logs nothing")

	// Appending after a reopen continues the same log.
	l.Append([]byte("more"))
	require.NoError(t, l.Sync())
	require.NoError(t, l.Close())
	_, r, _, _, err = open(t, dir, Options{})
	require.NoError(t, err)
	assert.Equal(t, append(want(50), "more"), r.records)
}

func TestEmptyRecordAndFreshDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "dir")
	l, r, info, _, err := open(t, dir, Options{})
	require.NoError(t, err, "a missing directory is created")
	assert.Empty(t, r.records)
	assert.Zero(t, info.Records)
	l.Append(nil)
	require.NoError(t, l.Sync())
	require.NoError(t, l.Close())
	_, r, _, _, err = open(t, dir, Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{""}, r.records)
}

// TestTornTail: a bad record with nothing valid after it is cut at the last
// good record, reported in one log line, and the log then reopens cleanly.
func TestTornTail(t *testing.T) {
	const n = 10
	tests := []struct {
		name string
		// tear changes the segment's bytes; offs are its records' offsets.
		tear func(b []byte, offs []int) []byte
		kept int
	}{
		{"last record cut mid-payload", func(b []byte, offs []int) []byte { return b[:len(b)-3] }, n - 1},
		{"last record cut inside its length", func(b []byte, offs []int) []byte { return b[:offs[n-1]+2] }, n - 1},
		{"last record cut after its header", func(b []byte, offs []int) []byte { return b[:offs[n-1]+recordHeaderLen] }, n - 1},
		{"last record's checksum wrong", func(b []byte, offs []int) []byte { b[len(b)-1] ^= 0xff; return b }, n - 1},
		{"last record's length corrupt", func(b []byte, offs []int) []byte { b[offs[n-1]] ^= 0x40; return b }, n - 1},
		{"zeros after the last record", func(b []byte, offs []int) []byte { return append(b, make([]byte, 4096)...) }, n},
		{"garbage after the last record", func(b []byte, offs []int) []byte { return append(b, []byte("\x05\x00\x00\x00garbage")...) }, n},
		{"every record but the first gone half-way", func(b []byte, offs []int) []byte { return b[:offs[1]+5] }, 1},
		{"header torn as the segment was created", func(b []byte, offs []int) []byte { return b[:headerLen-5] }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeLog(t, dir, n)
			seg := onlySegment(t, dir)
			b, err := os.ReadFile(seg)
			require.NoError(t, err)
			torn := tt.tear(bytes.Clone(b), recordOffsets(t, b))
			require.NoError(t, os.WriteFile(seg, torn, 0o644))

			l, r, info, logged, err := open(t, dir, Options{})
			require.NoError(t, err)
			assert.Equal(t, want(tt.kept), r.records)
			assert.Equal(t, int64(tt.kept), info.Records)
			goodLen := headerLen
			if tt.kept > 0 {
				goodLen = recordOffsets(t, b)[tt.kept-1] + recordHeaderLen + len(rec(tt.kept-1))
			}
			if tt.kept == n && len(torn) == len(b) {
				t.Fatal("the tear changed nothing")
			}
			wantCut := int64(len(torn) - goodLen)
			if len(torn) < headerLen {
				wantCut = int64(len(torn)) // the header is written again
			}
			assert.Equal(t, wantCut, info.BytesCut)
			lines := strings.Split(strings.TrimSpace(logged.String()), "\n")
			require.Len(t, lines, 1, "one log line: %q", logged.String())
			assert.Contains(t, lines[0], fmt.Sprintf("cut a torn tail of %d bytes", info.BytesCut))
			assert.Contains(t, lines[0], fmt.Sprintf("replayed %d records", tt.kept))
			fi, err := os.Stat(seg)
			require.NoError(t, err)
			assert.Equal(t, int64(goodLen), fi.Size(), "cut at the last good record")

			// The cut log takes appends and reopens without a cut.
			l.Append([]byte("after"))
			require.NoError(t, l.Sync())
			require.NoError(t, l.Close())
			_, r, info, logged, err = open(t, dir, Options{})
			require.NoError(t, err)
			assert.Equal(t, append(want(tt.kept), "after"), r.records)
			assert.Zero(t, info.BytesCut)
			assert.Empty(t, logged.String())
		})
	}
}

// snapshotDir returns every file's content, to show a refused Open changed
// nothing.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = string(b)
		return err
	}))
	return files
}

// TestCorruptMiddleRefused: a bad record with a valid one after it is
// refused, never skipped, and the log is left as it was.
func TestCorruptMiddleRefused(t *testing.T) {
	const n = 10
	tests := []struct {
		name    string
		corrupt func(b []byte, offs []int)
	}{
		{"payload byte flipped", func(b []byte, offs []int) { b[offs[4]+recordHeaderLen+2] ^= 1 }},
		{"checksum flipped", func(b []byte, offs []int) { b[offs[4]+5] ^= 0x80 }},
		{"length corrupt", func(b []byte, offs []int) { b[offs[4]] ^= 0x03 }},
		{"length huge", func(b []byte, offs []int) { binary.LittleEndian.PutUint32(b[offs[4]:], 1<<31) }},
		{"first record bad", func(b []byte, offs []int) { b[offs[0]+recordHeaderLen] ^= 1 }},
		{"last but one bad", func(b []byte, offs []int) { b[offs[n-2]+recordHeaderLen] ^= 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeLog(t, dir, n)
			seg := onlySegment(t, dir)
			b, err := os.ReadFile(seg)
			require.NoError(t, err)
			tt.corrupt(b, recordOffsets(t, bytes.Clone(b)))
			require.NoError(t, os.WriteFile(seg, b, 0o644))
			before := snapshotDir(t, dir)

			_, _, _, _, err = open(t, dir, Options{})
			require.ErrorIs(t, err, ErrCorrupt)
			assert.Contains(t, err.Error(), "valid record after it")
			assert.Equal(t, before, snapshotDir(t, dir), "a refused log is left as it was")
		})
	}
}

// TestCorruptOlderSegmentRefused: only the newest segment may have a torn
// tail; the others were synced whole before the next one started.
func TestCorruptOlderSegmentRefused(t *testing.T) {
	dir := t.TempDir()
	l, _, _, _, err := open(t, dir, Options{SnapshotEvery: -1})
	require.NoError(t, err)
	l.Append([]byte("one"))
	l.Append([]byte("two"))
	require.NoError(t, l.Sync())
	// A new segment without a snapshot: what a crash between creating the
	// segment and renaming the snapshot leaves.
	l.syncMu.Lock()
	require.NoError(t, l.createSegment(l.index+1))
	l.syncMu.Unlock()
	l.Append([]byte("three"))
	require.NoError(t, l.Sync())
	require.NoError(t, l.Close())

	l, r, _, _, err := open(t, dir, Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"one", "two", "three"}, r.records, "segments replay in order")
	require.NoError(t, l.Close())

	first := filepath.Join(dir, segName(0))
	b, err := os.ReadFile(first)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(first, b[:len(b)-1], 0o644))
	_, _, _, _, err = open(t, dir, Options{})
	require.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), "not the newest")
}

// withHeader rewrites a file's header with another version (and a valid
// checksum), as a build of another format would have written it.
func withVersion(t *testing.T, path string, version uint32) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	binary.LittleEndian.PutUint32(b[8:], version)
	binary.LittleEndian.PutUint32(b[20:], crc32.Checksum(b[:20], castagnoli))
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

func TestRefusedUntouched(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T) string // returns the path to open
		is    error
		msg   string
	}{
		{"segment of another version", func(t *testing.T) string {
			dir := t.TempDir()
			writeLog(t, dir, 3)
			withVersion(t, onlySegment(t, dir), Version+1)
			require.NoError(t, os.Remove(filepath.Join(dir, lockName)))
			return dir
		}, ErrVersion, fmt.Sprintf("format version %d; this build reads version %d", Version+1, Version)},
		{"snapshot of another version", func(t *testing.T) string {
			dir := t.TempDir()
			l, _, _, _, err := open(t, dir, Options{})
			require.NoError(t, err)
			require.NoError(t, l.Snapshot([]byte("state")))
			require.NoError(t, l.Close())
			withVersion(t, filepath.Join(dir, snapName(1)), 0)
			return dir
		}, ErrVersion, "format version 0"},
		{"not a log", func(t *testing.T) string {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, segName(0)), []byte(strings.Repeat("not a log ", 10)), 0o644))
			return dir
		}, ErrCorrupt, "does not start with a locklab log header"},
		{"a file, not a directory", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "file")
			require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
			return p
		}, nil, "is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.setup(t)
			parent := filepath.Dir(path)
			before := snapshotDir(t, parent)
			_, _, _, _, err := open(t, path, Options{})
			require.Error(t, err)
			if tt.is != nil {
				require.ErrorIs(t, err, tt.is)
			}
			assert.Contains(t, err.Error(), tt.msg)
			assert.Equal(t, before, snapshotDir(t, parent), "nothing touched")
		})
	}
}

func TestLockedByAnotherOpen(t *testing.T) {
	dir := t.TempDir()
	l, _, _, _, err := open(t, dir, Options{})
	require.NoError(t, err)
	_, _, _, _, err = open(t, dir, Options{})
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, l.Close())
	_, _, _, _, err = open(t, dir, Options{})
	require.NoError(t, err, "Close releases the lock")
}

// TestSnapshotBoundsReplay: with a snapshot every K records, the directory
// holds one snapshot and one segment, and recovery replays fewer than K
// records however many were written.
func TestSnapshotBoundsReplay(t *testing.T) {
	const k = 10
	for _, total := range []int{5, 10, 37, 500} {
		t.Run(fmt.Sprint(total), func(t *testing.T) {
			dir := t.TempDir()
			l, _, _, _, err := open(t, dir, Options{SnapshotEvery: k})
			require.NoError(t, err)
			sum := 0 // the "machine": the sum of the record numbers
			for i := range total {
				l.Append([]byte(fmt.Sprint(i)))
				sum += i
				require.NoError(t, l.Sync())
				if l.SnapshotDue() {
					require.NoError(t, l.Snapshot([]byte(fmt.Sprint(sum))))
				}
			}
			require.NoError(t, l.Close())

			segs, snaps, err := scanDir(dir)
			require.NoError(t, err)
			assert.Len(t, segs, 1, "covered segments are removed")
			assert.LessOrEqual(t, len(snaps), 1, "covered snapshots are removed")

			_, r, info, _, err := open(t, dir, Options{SnapshotEvery: k})
			require.NoError(t, err)
			assert.Less(t, info.Records, int64(k), "replay is bounded by the snapshot interval")
			assert.Equal(t, total/k, int(info.Snapshot))
			got := 0
			if r.snapshot != nil {
				_, err := fmt.Sscan(string(r.snapshot), &got)
				require.NoError(t, err)
			}
			for _, s := range r.records {
				var i int
				_, err := fmt.Sscan(s, &i)
				require.NoError(t, err)
				got += i
			}
			assert.Equal(t, sum, got, "snapshot + later records = the whole history")
		})
	}
}

// TestSnapshotCrashLeftovers: what a crash in Snapshot can leave — a
// temporary snapshot, segments the snapshot covers — recovers to the same
// state and is cleaned up.
func TestSnapshotCrashLeftovers(t *testing.T) {
	dir := t.TempDir()
	l, _, _, _, err := open(t, dir, Options{})
	require.NoError(t, err)
	l.Append([]byte("a"))
	require.NoError(t, l.Snapshot([]byte("after-a")))
	l.Append([]byte("b"))
	require.NoError(t, l.Close())
	// Put back a segment the snapshot covers and a half-written next snapshot.
	require.NoError(t, os.WriteFile(filepath.Join(dir, segName(0)), appendRecord(appendHeader(nil, segmentMagic, 0), []byte("a")), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, snapName(2)+tmpSuffix), []byte("half"), 0o644))

	l, r, info, _, err := open(t, dir, Options{})
	require.NoError(t, err)
	assert.Equal(t, "after-a", string(r.snapshot))
	assert.Equal(t, []string{"b"}, r.records)
	assert.Equal(t, uint64(1), info.Snapshot)
	require.NoError(t, l.Close())
	segs, snaps, err := scanDir(dir)
	require.NoError(t, err)
	assert.Equal(t, []uint64{1}, segs)
	assert.Equal(t, []uint64{1}, snaps)
	_, err = os.Stat(filepath.Join(dir, snapName(2)+tmpSuffix))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestCorruptSnapshotRefused(t *testing.T) {
	dir := t.TempDir()
	l, _, _, _, err := open(t, dir, Options{})
	require.NoError(t, err)
	require.NoError(t, l.Snapshot([]byte("the state")))
	require.NoError(t, l.Close())
	p := filepath.Join(dir, snapName(1))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	b[len(b)-1] ^= 1
	require.NoError(t, os.WriteFile(p, b, 0o644))
	_, _, _, _, err = open(t, dir, Options{})
	require.ErrorIs(t, err, ErrCorrupt)
}

func TestReplayErrorStopsOpen(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 3)
	_, _, err := Open(dir, Options{}, func([]byte) error { return nil }, func(b []byte) error {
		if string(b) == rec(1) {
			return fmt.Errorf("machine refuses")
		}
		return nil
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "machine refuses")
}

// TestConcurrentAppendSync: goroutines append and sync at once (lock
// designs log from several shards); every record survives, each goroutine's
// in its order. Run with -race.
func TestConcurrentAppendSync(t *testing.T) {
	const workers, each = 8, 200
	dir := t.TempDir()
	l, _, _, _, err := open(t, dir, Options{SnapshotEvery: -1})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				l.Append([]byte(fmt.Sprintf("%d/%d", w, i)))
				if i%4 == 0 {
					assert.NoError(t, l.Sync())
				}
			}
			assert.NoError(t, l.Sync())
		})
	}
	wg.Wait()
	syncs, records := l.Stats()
	assert.Equal(t, uint64(workers*each), records)
	assert.LessOrEqual(t, syncs, uint64(workers*(each/4+1)), "a Sync with nothing new to write does not fdatasync")
	require.NoError(t, l.Close())
	_, r, _, _, err := open(t, dir, Options{})
	require.NoError(t, err)
	require.Len(t, r.records, workers*each)
	next := make([]int, workers)
	for _, s := range r.records {
		var w, i int
		_, err := fmt.Sscanf(s, "%d/%d", &w, &i)
		require.NoError(t, err)
		require.Equal(t, next[w], i, "worker %d's records in order", w)
		next[w]++
	}
}

func TestErrorsAreSticky(t *testing.T) {
	dir := t.TempDir()
	l, _, _, _, err := open(t, dir, Options{MaxRecord: 4})
	require.NoError(t, err)
	l.Append([]byte("ok"))
	l.Append([]byte("too long"))
	require.ErrorIs(t, l.Sync(), ErrTooLarge)
	l.Append([]byte("ok"))
	require.ErrorIs(t, l.Sync(), ErrTooLarge, "a failed log stays failed")
	require.ErrorIs(t, l.Snapshot(nil), ErrTooLarge)
}

func TestCloseTwice(t *testing.T) {
	l, _, _, _, err := open(t, t.TempDir(), Options{})
	require.NoError(t, err)
	l.Append([]byte("x"))
	require.NoError(t, l.Close())
	require.NoError(t, l.Close())
	require.ErrorIs(t, l.Sync(), ErrClosed)
	l.Append([]byte("y"))
	require.ErrorIs(t, l.Sync(), ErrClosed)
}
