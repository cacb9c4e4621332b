// Package wal is locklab's write-ahead log: the records of state-changing
// commands, appended in memory and made durable by Sync (one write and one
// fdatasync for everything appended since the last Sync, which is what lets
// an owner goroutine or a flat combiner group-commit a whole batch), and
// replayed on Open.
//
// A log is a directory of segments and snapshots:
//
//	seg-0000000000000003.wal   header, then records: [len u32][crc32c u32][payload]
//	snap-0000000000000003.snap header, then [len u64][crc32c u32][machine state]
//	LOCK                       flock'd while a process has the log open
//
// snap-N holds the machine's state after every record of the segments before
// N, so recovery is: restore the newest snapshot N, replay segments N, N+1, …
// in order. The owner calls Snapshot once SnapshotDue (every
// Options.SnapshotEvery records): the log starts a new segment, writes the
// snapshot atomically (temporary file, fsync, rename, fsync of the directory)
// and removes the segments and snapshots it covers, so restart time is bounded
// by one snapshot plus SnapshotEvery records, however long the server ran.
//
// Each record's checksum covers its length and payload. On Open a bad record
// at the end of the newest segment — a torn write, a crash between write and
// fdatasync — is cut at the last good record and reported in one log line; a
// bad record with a valid one anywhere after it is corruption, and Open
// refuses the log rather than skip it. A file from another format version is
// refused with ErrVersion before anything in the directory is changed.
package wal
