package wal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Version is the format version this package writes and reads. A file with
// another version is refused (ErrVersion); nothing converts between them.
const Version = 1

// headerLen is the size of a segment's or snapshot's header:
// magic[8] version u32 index u64 crc32c u32 (of the 20 bytes before it).
const headerLen = 24

// recordHeaderLen is the size of a record's length and checksum.
const recordHeaderLen = 8

var (
	segmentMagic  = [8]byte{'L', 'L', 'A', 'B', 'W', 'A', 'L', '\n'}
	snapshotMagic = [8]byte{'L', 'L', 'A', 'B', 'S', 'N', 'P', '\n'}
	castagnoli    = crc32.MakeTable(crc32.Castagnoli)
)

func appendHeader(dst []byte, magic [8]byte, index uint64) []byte {
	start := len(dst)
	dst = append(dst, magic[:]...)
	dst = binary.LittleEndian.AppendUint32(dst, Version)
	dst = binary.LittleEndian.AppendUint64(dst, index)
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// checkHeader checks b (at least headerLen bytes) against magic and the
// index its file name gives.
func checkHeader(b []byte, magic [8]byte, index uint64, path string) error {
	if [8]byte(b[:8]) != magic {
		return fmt.Errorf("%w: %s does not start with a locklab log header", ErrCorrupt, path)
	}
	if crc32.Checksum(b[:20], castagnoli) != binary.LittleEndian.Uint32(b[20:24]) {
		return fmt.Errorf("%w: %s: header checksum mismatch", ErrCorrupt, path)
	}
	if v := binary.LittleEndian.Uint32(b[8:12]); v != Version {
		return fmt.Errorf("%w: %s has format version %d; this build reads version %d only", ErrVersion, path, v, Version)
	}
	if i := binary.LittleEndian.Uint64(b[12:20]); i != index {
		return fmt.Errorf("%w: %s: header says index %d", ErrCorrupt, path, i)
	}
	return nil
}

// appendRecord frames payload as one record.
func appendRecord(dst, payload []byte) []byte {
	var lenBuf [4]byte
	binary.LittleEndian.PutUint32(lenBuf[:], uint32(len(payload)))
	crc := crc32.Update(crc32.Checksum(lenBuf[:], castagnoli), castagnoli, payload)
	dst = append(dst, lenBuf[:]...)
	dst = binary.LittleEndian.AppendUint32(dst, crc)
	return append(dst, payload...)
}

// recordAt returns the payload of the record at b[off:] and the offset after
// it, or ok false if there is no whole record with a matching checksum there.
func recordAt(b []byte, off, maxRecord int) (payload []byte, next int, ok bool) {
	if len(b)-off < recordHeaderLen {
		return nil, 0, false
	}
	n := int(binary.LittleEndian.Uint32(b[off:]))
	if n > maxRecord || n > len(b)-off-recordHeaderLen {
		return nil, 0, false
	}
	crc := crc32.Update(crc32.Checksum(b[off:off+4], castagnoli), castagnoli, b[off+recordHeaderLen:off+recordHeaderLen+n])
	if crc != binary.LittleEndian.Uint32(b[off+4:]) {
		return nil, 0, false
	}
	next = off + recordHeaderLen + n
	return b[off+recordHeaderLen : next], next, true
}

// validAfter reports whether a valid record starts anywhere in b after off,
// where a bad one starts: then the bad one is in the middle of the log, not a
// torn tail. It first tries where the bad record's length says the next one
// is, then every byte. A checksum over the length makes a false match at a
// random offset a 1-in-2³² event, and zero-filled space never matches.
func validAfter(b []byte, off, maxRecord int) (int, bool) {
	if len(b)-off >= recordHeaderLen {
		n := int(binary.LittleEndian.Uint32(b[off:]))
		if n <= maxRecord && n <= len(b)-off-recordHeaderLen {
			if _, _, ok := recordAt(b, off+recordHeaderLen+n, maxRecord); ok {
				return off + recordHeaderLen + n, true
			}
		}
	}
	for p := off + 1; p+recordHeaderLen <= len(b); p++ {
		if _, _, ok := recordAt(b, p, maxRecord); ok {
			return p, true
		}
	}
	return 0, false
}
